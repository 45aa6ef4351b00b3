"""Hand-built diagnostics and rules for the reporter tests."""

from __future__ import annotations

import io

from torchlint.core.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, RuleInfo
from torchlint.report import render

RULES = {
    "TL000": RuleInfo(
        "TL000", "syntax-error", "Syntax error", "## What it does\nReports files that cannot be parsed.\n", False
    ),
    "TL001": RuleInfo(
        "TL001",
        "heavy-import-at-module-level",
        "Heavy import at module level",
        "## What it does\nChecks for heavy imports\nat module level.\n\n## Why is this bad?\nStartup.\n",
        True,
    ),
    "TL003": RuleInfo("TL003", "item-in-loop", "`.item()` in a loop", "Syncs the GPU.", True, False),
}


def diag(
    code="TL001",
    row=1,
    col=1,
    end=None,
    filename="train.py",
    message="Module-level import of `wandb`",
    fix=None,
    noqa_row=None,
) -> Diagnostic:
    end_row, end_col = end if end else (row, col + 1)
    return Diagnostic(code, message, filename, Location(row, col), Location(end_row, end_col), fix, noqa_row)


def fix(applicability=Applicability.SAFE, message="Move the import into the function") -> Fix:
    edit = Edit(Location(1, 1), Location(2, 1), "")
    return Fix(message, (edit,), applicability)


def output(fmt, diagnostics, ctx) -> str:
    buffer = io.StringIO()
    render(fmt, diagnostics, ctx, buffer)
    return buffer.getvalue()
