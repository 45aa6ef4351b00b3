"""bench/run.py end to end on the bundled tiny tree: no download, no peers, one repetition."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TINY = REPO / "bench" / "tiny"
OLD_SECTION = "## 2000-01-01 00:00 UTC: an older run\n\nkept below the new one\n"
TORCHLINT_ROWS = (
    "torchlint cold (--no-cache)",
    "torchlint cold, empty cache (fills it)",
    "torchlint warm (cache full, nothing changed)",
    "torchlint warm, one file touched",
    "torchlint --jobs 1 --no-cache",
)


def snapshot(tree: Path) -> dict:
    return {path.relative_to(tree): path.read_bytes() for path in sorted(tree.rglob("*")) if path.is_file()}


def run_bench(results: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PIP_NO_INDEX": "1"}  # it must not need the network
    return subprocess.run(
        [sys.executable, str(REPO / "bench" / "run.py"), "--no-peers", "--repeat", "1",
         "--tree", str(TINY), "--results", str(results)],
        capture_output=True, text=True, env=env, timeout=120,
    )


def table_row(text: str, label: str) -> list:
    line = next(line for line in text.splitlines() if line.startswith(f"| {label} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


@pytest.mark.slow
def test_bench_on_tiny_tree_prepends_a_section_with_every_row(tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text("# torchlint benchmark results\n\nold intro\n\n" + OLD_SECTION)
    before = snapshot(TINY)

    done = run_bench(results)

    assert done.returncode == 0, done.stderr
    text = results.read_text()
    assert text.startswith("# torchlint benchmark results")
    new = text.index("## ", text.index("How it measures"))
    assert new < text.index(OLD_SECTION), "the new section goes above the older ones"
    assert text.endswith(OLD_SECTION)
    assert "Command: `python bench/run.py --no-peers --repeat 1 --tree" in text
    for label in TORCHLINT_ROWS:
        row = table_row(text, label)
        assert float(row[1]) > 0 and float(row[2]) > 0 and row[11] == "0", row
    assert table_row(text, TORCHLINT_ROWS[0])[8] == "1.00"  # wall × cold of cold itself
    assert "tiny local: 4 files" in text
    for label in ("skipped by trigger substrings alone", "skipped by substrings + gates (never parsed by LibCST)"):
        assert table_row(text, label)[1].endswith("%")
    assert table_row(text, "warm (unchanged) < 1 s")[2] in ("met", "**missed**")
    assert table_row(text, "cold ≤ 1/20 of TorchFix (wall)")[2] == "n/a"
    assert "torchlint warm (cache full, nothing changed)" in done.stdout
    assert snapshot(TINY) == before, "the benchmark works on a copy; the tiny tree is untouched"
