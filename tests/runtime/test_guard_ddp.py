"""DDP at world size 2 (gloo, CPU, two spawned processes): no alarm on a healthy run, and a fault
planted on one rank is reported by that rank, its module path ending in ` [rank 1]`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if not torch.distributed.is_available():
    pytest.skip("torch.distributed is not built in", allow_module_level=True)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from guard_ecosystem import ddp_two_ranks  # noqa: E402


def test_a_healthy_ddp_run_at_world_size_two_raises_no_alarm():
    assert ddp_two_ranks() == {0: "ok", 1: "ok"}


def test_a_fault_planted_on_one_rank_is_reported_by_that_rank():
    outcomes = ddp_two_ranks(fault_rank=1)
    assert outcomes[1] == ("ALARM torchlint guard: check `embedding-index` failed at model.embed [rank 1] "
                           "(Embedding)")
    assert outcomes[0] == "stopped: another rank's guard raised"
