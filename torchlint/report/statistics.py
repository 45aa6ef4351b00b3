"""`--statistics`: findings counted by rule, flake8/ruff style."""

from __future__ import annotations

import json
from collections import Counter
from typing import Sequence, TextIO

from torchlint.core.diagnostics import Diagnostic
from torchlint.report.context import ReportContext
from torchlint.fixing.apply import is_applicable
from torchlint.report.styled import Line, write_lines


def statistics(diagnostics: Sequence[Diagnostic], ctx: ReportContext) -> list[dict]:
    """One entry per code, most frequent first, ties by code.

    `fixable` says whether `--fix` (with the current settings) would fix any of the
    code's findings, as each finding's `[*]` does; `fixable_count` how many.
    """
    counts: Counter = Counter(d.code for d in diagnostics)
    fixable: Counter = Counter(d.code for d in diagnostics if is_applicable(d.fix, ctx.unsafe_fixes))
    return [
        {"code": code, "name": ctx.rule_name(code), "count": count, "fixable": fixable[code] > 0,
         "fixable_count": fixable[code]}
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


def _table(rows: list[dict]) -> list[Line]:
    count_width = max(len(str(row["count"])) for row in rows)
    code_width = max(len(row["code"]) for row in rows)
    any_fixable = any(row["fixable"] for row in rows)
    lines: list[Line] = []
    for row in rows:
        line: Line = [
            (f"{row['count']:>{count_width}}", "bold"),
            ("\t", ""),
            (f"{row['code']:<{code_width}}", "bold red"),
            ("\t", ""),
        ]
        if any_fixable:
            line += [("[", ""), ("*", "cyan"), ("] ", "")] if row["fixable"] else [("[ ] ", "")]
        line.append((row["name"], ""))
        if 0 < row["fixable_count"] < row["count"]:
            line.append((f" ({row['fixable_count']} fixable)", ""))
        lines.append(line)
    return lines


def render(fmt: str, diagnostics: Sequence[Diagnostic], ctx: ReportContext, out: TextIO) -> None:
    """Write the table, or a JSON array when `fmt` is "json"; nothing when clean."""
    rows = statistics(diagnostics, ctx)
    if fmt == "json":
        out.write(json.dumps(rows, indent=2) + "\n")
    elif rows:
        write_lines(_table(rows), ctx.color, out)
