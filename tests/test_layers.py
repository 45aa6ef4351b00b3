"""The packages of torchlint and its rules stand in layers (CONTRIBUTING.md, "Layers"):
import-linter's layers contract from pyproject.toml, run on the layout the wheel installs
(`rules/` as `torchlint.rules`), so that the rules' imports are judged with the rest."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import tomllib

REPOSITORY = Path(__file__).resolve().parent.parent


def _installed_layout(root: Path) -> Path:
    shutil.copytree(REPOSITORY / "torchlint", root / "torchlint", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPOSITORY / "rules", root / "torchlint" / "rules", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPOSITORY / "pyproject.toml", root / "pyproject.toml")
    return root


def _lint_imports(root: Path) -> subprocess.CompletedProcess:
    # PYTHONPATH first: the copy, not the editable install, is the package grimp reads
    return subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())",
         "--no-cache"],
        cwd=root, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=300,
    )


def test_packages_import_only_downwards(tmp_path):
    result = _lint_imports(_installed_layout(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


def test_an_upward_import_breaks_the_contract(tmp_path):
    root = _installed_layout(tmp_path)
    with (root / "torchlint" / "core" / "walk.py").open("a", encoding="utf-8") as walk:
        walk.write("\nfrom torchlint.rules.training.heavy_import_at_module_level import rule\n")
    result = _lint_imports(root)
    assert result.returncode != 0
    assert "torchlint.core is not allowed to import torchlint.rules" in result.stdout


def test_every_layer_is_named_in_contributing():
    contract = tomllib.loads((REPOSITORY / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = [name.strip() for layer in contract["contracts"][0]["layers"] for name in layer.split("|")]
    contributing = (REPOSITORY / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert [name for name in layers if f"`{name}`" not in contributing] == []
