"""`--statistics` (text and JSON) agrees with the findings: a code is `[*]` / `"fixable"`
when `--fix` would fix any of its findings, and says how many when not all."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter

import pytest

from cli_support import FIXTURES
from torchlint.cli import main


@pytest.fixture
def project(tmp_path):
    shutil.copytree(FIXTURES, tmp_path / "fixtures", ignore=shutil.ignore_patterns("*.fixed", "*-fixed"))
    return tmp_path / "fixtures"


def _run(capsys, *argv):
    code = main(["check", "--no-cache", *argv])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("unsafe", [False, True])
def test_statistics_json_counts_the_fixes_the_findings_offer(project, capsys, unsafe):
    flags = ["--unsafe-fixes"] if unsafe else []
    _, out = _run(capsys, "--output-format", "json", *flags, str(project))
    findings = json.loads(out)
    applies = ("safe", "unsafe") if unsafe else ("safe",)
    counts = Counter(f["code"] for f in findings)
    fixable = Counter(f["code"] for f in findings if f["fix"] and f["fix"]["applicability"] in applies)
    assert any(0 < fixable[code] < counts[code] for code in counts), "the fixtures must hold a partly fixable code"
    _, out = _run(capsys, "--statistics", "--output-format", "json", *flags, str(project))
    rows = {row["code"]: row for row in json.loads(out)}
    assert {code: row["count"] for code, row in rows.items()} == dict(counts)
    for code, row in rows.items():
        assert (row["fixable"], row["fixable_count"]) == (fixable[code] > 0, fixable[code]), code


def test_statistics_text_marks_what_the_findings_mark(project, capsys):
    _, out = _run(capsys, "--output-format", "concise", str(project))
    found = [(re.search(r": (TL\d{3}) ", line).group(1), line) for line in out.splitlines() if ": TL" in line]
    marked = Counter(code for code, line in found if "[*]" in line)  # a notebook's line is `nb.ipynb:cell 3:4:9: TL...`
    total = Counter(code for code, _ in found)
    _, out = _run(capsys, "--statistics", str(project))
    for line in out.splitlines():
        count, code, rest = line.split("\t")
        assert int(count) == total[code]
        assert rest.startswith("[*]") == (marked[code] > 0), line
        partial = 0 < marked[code] < total[code]
        assert rest.endswith(f"({marked[code]} fixable)") == partial, line
