"""Fixtures for the doctor tests (fixtures rather than imports, so no test module imports conftest)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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
    """run_python(args, cwd, extra_env=None, stdin=None) runs `python ARGS` with this checkout importable."""

    def run(args, cwd, extra_env=None, stdin=None, timeout=120):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        for name in ("CUDA_LAUNCH_BLOCKING", "TORCH_USE_CUDA_DSA", "CUDA_VISIBLE_DEVICES"):
            env.pop(name, None)
        env.update(extra_env or {})
        return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                              input=stdin, timeout=timeout)

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
