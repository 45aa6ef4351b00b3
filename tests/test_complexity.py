"""Every analysis and every rule is linear in what it reads: for each shape of
tests/complexity_shapes.py, `torchlint check --select ALL` (the real entry point, in this
process, one worker, no cache) is run at n and at 2n, and the work it does (Python calls,
tests/work_counter.py) may grow at most 2.2 times, both in all and in each of torchlint's
modules that does a noticeable share of it. bench/complexity.py is the timed twin."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_support import run_torchlint
from complexity_shapes import SHAPES
from work_counter import count_calls

GROWTH = 2.2
# below this many calls at 2n a module's count is start-up and bookkeeping, not a cost
NOTICEABLE = 3_000
# n per shape: large enough that the part that grows dwarfs the constant part
SIZES = {"module_call_chain": 12, "deep_hierarchy": 30, "rnn_double_backward": 20}
DEFAULT_SIZE = 40


def _work(tmp_path: Path, shape: str, n: int):
    root = tmp_path / f"{shape}-{n}"
    for relative, source in SHAPES[shape](n).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    args = ("check", "--no-cache", "-j", "1", "--select", "ALL", "--exit-zero", "-q", "--output-format", "concise", ".")
    outcome = {}

    def run():
        outcome["result"] = run_torchlint(*args, cwd=root)

    calls = count_calls(run)
    assert outcome["result"].returncode == 0, outcome["result"].stderr
    return calls, outcome["result"].stdout


@pytest.fixture(scope="module", autouse=True)
def _warm(tmp_path_factory):
    """Imports and registry lookups happen once, in a run before any that is counted."""
    _work(tmp_path_factory.mktemp("warm"), "long_trainer", 2)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_work_at_2n_is_at_most_2_2_times_the_work_at_n(tmp_path, shape):
    n = SIZES.get(shape, DEFAULT_SIZE)
    small, small_output = _work(tmp_path, shape, n)
    large, large_output = _work(tmp_path, shape, 2 * n)
    assert small_output, f"{shape}: no rule fired on it, so it measures nothing"
    total = sum(large.values()) / sum(small.values())
    modules = {
        group: round(large[group] / max(small[group], 1), 2)
        for group in large
        if large[group] >= NOTICEABLE and group.startswith(("torchlint/", "rules/"))
    }
    super_linear = {group: growth for group, growth in modules.items() if growth > GROWTH}
    assert total <= GROWTH and not super_linear, (
        f"{shape}: {sum(small.values())} calls at n={n}, {sum(large.values())} at 2n (x{total:.2f}); "
        f"modules growing more than x{GROWTH}: {super_linear}"
    )
