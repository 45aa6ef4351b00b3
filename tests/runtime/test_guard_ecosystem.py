"""A fast subset of bench/guard_ecosystem.py: healthy models from other packages, every check on every
step, no alarm (a GuardError or GuardWarning). Cases whose package is not installed are skipped."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from guard_ecosystem import CASES, run_case  # noqa: E402

SUBSET = [
    ("masked actor-critic (RL)", "fp32"),
    ("conv+gru CTC recogniser", "fp16-scaler"),
    ("BART seq2seq", "fp32"),
    ("mBART seq2seq", "fp32"),
    ("Whisper (speech seq2seq)", "fp16-scaler"),
    ("GIN+SAGE graph classifier", "bf16"),
    ("DQN with target network (RL)", "fp32"),
]


@pytest.mark.parametrize(("name", "setup"), SUBSET, ids=[f"{name}-{setup}" for name, setup in SUBSET])
def test_a_healthy_model_trains_under_every_check_without_an_alarm(name, setup):
    case = next(case for case in CASES if case.name == name)
    pytest.importorskip(case.package)
    assert run_case(case, setup) == "ok"
