"""Fixtures for the doctor tests (fixtures rather than imports, so no test module imports conftest)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import ENTRY_POINTS, as_text, run_module
from torchlint.doctor.facts import facts_from_dict

REPO = Path(__file__).resolve().parents[2]
FACTS_DIR = Path(__file__).resolve().parent / "facts"


@pytest.fixture
def load_facts():
    """load_facts("healthy-h100") -> Facts, from tests/doctor/facts/."""

    def load(name):
        return facts_from_dict(json.loads((FACTS_DIR / f"{name}.json").read_text()))

    return load


@pytest.fixture
def facts_dir():
    return FACTS_DIR


@pytest.fixture
def run_python():
    """run_python(args, cwd, extra_env=None, stdin=None) runs `python ARGS` with this checkout
    importable and without the CUDA variables the doctor judges, as text. `-m torchlint` and
    `-m torchlint.doctor` run their `main` in this process (cli_support.run_module)."""

    def run(args, cwd, extra_env=None, stdin=None, timeout=120):
        unset = {name: None for name in ("CUDA_LAUNCH_BLOCKING", "TORCH_USE_CUDA_DSA", "CUDA_VISIBLE_DEVICES")}
        if args[0] == "-m" and args[1] in ENTRY_POINTS:
            return as_text(run_module(args[1], *args[2:], cwd=cwd, env={**unset, **(extra_env or {})},
                                      input=None if stdin is None else stdin.encode()))
        env = {**os.environ, **unset, **(extra_env or {})}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, input=stdin,
                              env={name: value for name, value in env.items() if value is not None}, timeout=timeout)

    return run


@pytest.fixture
def project(tmp_path):
    """project(runtime_toml) writes a pyproject.toml with that [tool.torchlint.runtime] body."""

    def write(runtime_toml=""):
        (tmp_path / "pyproject.toml").write_text(
            "[project]\nname = 'demo'\n\n[tool.torchlint]\n\n[tool.torchlint.runtime]\n" + runtime_toml
        )
        return tmp_path

    return write
