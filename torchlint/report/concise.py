"""`path:row:col: CODE [*] message`, one finding per line."""

from __future__ import annotations

from typing import Sequence, TextIO

from torchlint.core.diagnostics import Diagnostic
from torchlint.core import paths
from torchlint.report.context import ReportContext
from torchlint.report.fix_summary import fix_summary_lines
from torchlint.fixing.apply import is_applicable
from torchlint.report.fixability import show_fix_marker
from torchlint.report.styled import Line, write_lines


def header(diagnostic: Diagnostic, ctx: ReportContext, markers: bool) -> Line:
    """The one-line form of a finding, shared with the `full` format."""
    loc = diagnostic.location
    line: Line = [(paths.for_humans(diagnostic.filename), "bold"), (":", "cyan")]
    if diagnostic.cell is not None:
        line += [(f"cell {diagnostic.cell}", ""), (":", "cyan")]
    line += [
        (str(loc.row), ""),
        (":", "cyan"),
        (str(loc.column), ""),
        (":", "cyan"),
        (" ", ""),
        (diagnostic.code, "bold red"),
        (" ", ""),
    ]
    if markers and is_applicable(diagnostic.fix, ctx.unsafe_fixes):
        line += [("[", ""), ("*", "cyan"), ("] ", "")]
    line.append((diagnostic.message, ""))
    return line


def render(diagnostics: Sequence[Diagnostic], ctx: ReportContext, out: TextIO) -> None:
    """Write one line per finding, then the `--show-fixes` block if asked."""
    markers = show_fix_marker(diagnostics, ctx.unsafe_fixes, ctx.fix_mode)
    lines = [header(d, ctx, markers) for d in diagnostics]
    lines += fix_summary_lines(ctx)
    write_lines(lines, ctx.color, out)
