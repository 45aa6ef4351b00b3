"""The closing summary after human output, in ruff's words ("findings" for "errors")."""

from __future__ import annotations

from typing import Sequence

from torchlint.core.diagnostics import Diagnostic
from torchlint.report.context import ReportContext
from torchlint.report.fixability import count_fixable
from torchlint.report.styled import ansi


def _plural(count: int, word: str, suffix: str = "s") -> str:
    return f"{count} {word}{'' if count == 1 else suffix}"


def _found_line(remaining: int, fixed: int) -> str:
    if fixed:
        total = _plural(fixed + remaining, "finding")
        return f"Found {total} ({fixed} fixed, {remaining} remaining)."
    if remaining:
        return f"Found {_plural(remaining, 'finding')}."
    return "All checks passed!"


def _fix_line(diagnostics: Sequence[Diagnostic], ctx: ReportContext) -> str | None:
    counts = count_fixable(diagnostics, ctx.unsafe_fixes)
    # After --fix, a still-pending safe fix could not be applied; don't advertise it.
    applicable = 0 if ctx.fix_mode else counts.applicable
    marker = ansi([("[", ""), ("*", "cyan"), ("]", "")]) if ctx.color else "[*]"
    if ctx.unsafe_fixes:
        return f"{marker} {applicable} fixable with the --fix option." if applicable else None
    hidden = counts.hidden_unsafe
    hint = f"{_plural(hidden, 'hidden fix', 'es')} can be enabled with the `--unsafe-fixes` option"
    if applicable and hidden:
        return f"{marker} {applicable} fixable with the `--fix` option ({hint})."
    if applicable:
        return f"{marker} {applicable} fixable with the `--fix` option."
    if hidden:
        return f"No fixes available ({hint})."
    return None


def summary_lines(diagnostics: Sequence[Diagnostic], ctx: ReportContext) -> list[str]:
    """The "Found N findings." line and, when fixes are pending, what `--fix` would do."""
    lines = [_found_line(len(diagnostics), ctx.total_fixed)]
    fix_line = _fix_line(diagnostics, ctx)
    if fix_line:
        lines.append(fix_line)
    return lines
