"""bench/floor.py end to end on the bundled tiny tree: every floor runs, and the row's
ratios are its own figures over flake8's."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def cells(line: str) -> list:
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_floor_measures_every_command_on_the_same_files(tmp_path):
    results = tmp_path / "FLOOR.md"
    results.write_text("# old\n\n## 2000-01-01 00:00 UTC\n\nkept below the new one\n")
    flake8 = shutil.which("flake8", path=str(Path(sys.executable).parent))
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "floor.py"), "--tree", str(REPO / "bench" / "tiny"),
         "--flake8", flake8, "--repeat", "1", "--results", str(results)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    text = results.read_text()
    assert text.index("## 2000-01-01") > text.index("| tiny |")  # the new run first, the old one kept
    header, _, row = [line for line in text.splitlines() if line.startswith("|")][:3]
    figures = dict(zip(cells(header), cells(row)))
    assert int(figures["lines LibCST parses"].replace(",", "")) > 0  # the tiny model reaches LibCST
    commands = ("flake8", "cold", "start-up", "ast floor", "ast + LibCST floor")
    seconds = {key: float(figures[f"{key} s"]) for key in commands}
    assert all(value > 0 for value in seconds.values())
    assert float(figures["cold ÷ flake8"]) == pytest.approx(seconds["cold"] / seconds["flake8"], abs=0.011)
