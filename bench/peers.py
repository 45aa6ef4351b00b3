"""The tools torchlint is compared with, each installed into a venv of its own.

- `peers/`: TorchFix and ruff. TorchFix is installed `--no-deps`, then the dependencies
  its metadata declares, so that nothing can pull a (multi-GB, CUDA) torch.
- `flake8/`: flake8 alone, at exactly the flake8, pyflakes, pycodestyle and mccabe
  versions of the environment running this script. That environment has torchlint
  installed, so its flake8 runs our plugin; the only difference between the two
  flake8 runs is then the plugin. (TorchFix registers a flake8 plugin too, which is why
  plain flake8 cannot share TorchFix's venv.)
"""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Dict, Sequence

DEFAULT_HOME = Path.home() / ".cache" / "torchlint-bench"
TORCHFIX = "torchfix==0.7.0"
TORCHFIX_DEPENDENCIES = ("libcst>=1.5.0,<1.6.0", "PyYAML", "flake8>=3.8.2")  # TorchFix 0.7.0's Requires-Dist
RUFF = "ruff==0.17.6"
FLAKE8_PACKAGES = ("flake8", "pyflakes", "pycodestyle", "mccabe")


def flake8_requirements() -> tuple:
    return tuple(f"{name}=={metadata.version(name)}" for name in FLAKE8_PACKAGES)


def ensure_venv(directory: Path, steps: Sequence[Sequence[str]]) -> Path:
    """A venv with each step's `pip install` arguments applied; reused while the steps match."""
    marker = directory / "bench-requirements.txt"
    wanted = "\n".join(" ".join(step) for step in steps) + "\n"
    if marker.is_file() and marker.read_text() == wanted:
        return directory
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(directory)], check=True)
    for step in steps:
        subprocess.run([str(directory / "bin" / "python"), "-m", "pip", "install", "--quiet", *step], check=True)
    marker.write_text(wanted)
    return directory


def install(home: Path) -> Dict[str, Path]:
    """Paths of the peers' executables, installing them if needed."""
    peers = ensure_venv(
        home / "peers-venv",
        [["--no-deps", TORCHFIX], [*TORCHFIX_DEPENDENCIES, RUFF]],
    )
    flake8 = ensure_venv(home / "flake8-venv", [list(flake8_requirements())])
    return {
        "torchfix": peers / "bin" / "torchfix",
        "ruff": peers / "bin" / "ruff",
        "flake8": flake8 / "bin" / "flake8",
        "peers-python": peers / "bin" / "python",
    }


def output_of(argv: Sequence[str]) -> str:
    done = subprocess.run(list(argv), capture_output=True, text=True)
    return " ".join((done.stdout or done.stderr).split()) or "?"


def versions(paths: Dict[str, Path]) -> Dict[str, str]:
    version_of = "import sys, importlib.metadata as m; print(m.version(sys.argv[1]))"
    return {
        "TorchFix": output_of([str(paths["peers-python"]), "-c", version_of, "torchfix"]),
        "libcst (TorchFix's)": output_of([str(paths["peers-python"]), "-c", version_of, "libcst"]),
        "ruff": output_of([str(paths["ruff"]), "--version"]),
        "flake8 (plain)": output_of([str(paths["flake8"]), "--version"]),
    }
