"""Fixtures for the explain tests."""

from pathlib import Path

import pytest

from cli_support import as_text, run_module

REPO = Path(__file__).resolve().parents[2]
SAMPLES = Path(__file__).resolve().parent / "samples"


@pytest.fixture
def samples_dir():
    """tests/explain/samples/<signature id>.log: one real-looking log per signature."""
    return SAMPLES


@pytest.fixture
def run_explain():
    """run_explain(args, stdin=None, module=("-m", "torchlint.explain")) runs `python -m
    MODULE ARGS` as text: its `main` in this process (cli_support.run_module)."""

    def run(args, stdin=None, module=("-m", "torchlint.explain"), cwd=None):
        return as_text(run_module(module[1], *args, cwd=cwd or REPO, input=None if stdin is None else stdin.encode()))

    return run
