"""Fixtures for the explain tests."""

import json
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


@pytest.fixture
def top_answer(run_explain):
    """top_answer(log) -> (first signature id, its first cause id or None, gpu_claim), through
    `python -m torchlint.explain --format json`; a log with no match fails."""

    def answer(log):
        data = json.loads(run_explain(["--format", "json"], stdin=log + "\n").stdout)
        assert data["matches"], log
        first = data["matches"][0]
        causes = first.get("causes") or []
        return first["id"], (causes[0]["id"] if causes else None), data["gpu_claim"]

    return answer
