"""Fixtures for the explain tests."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLES = Path(__file__).resolve().parent / "samples"


@pytest.fixture
def samples_dir():
    """tests/explain/samples/<signature id>.log: one real-looking log per signature."""
    return SAMPLES


@pytest.fixture
def run_explain():
    """run_explain(args, stdin=None, module="torchlint.explain") runs the CLI in a subprocess."""

    def run(args, stdin=None, module=("-m", "torchlint.explain"), cwd=None):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        return subprocess.run([sys.executable, *module, *args], input=stdin, capture_output=True, text=True,
                              env=env, cwd=cwd or REPO, timeout=60)

    return run
