"""The default human format: the concise header, a code frame, and the fix as help."""

from __future__ import annotations

from typing import Sequence, TextIO

from torchlint.ftypes import Diagnostic
from torchlint.report.concise import header
from torchlint.report.context import ReportContext
from torchlint.report.fix_summary import fix_summary_lines
from torchlint.report.fixability import show_fix_marker
from torchlint.report.frame import frame_lines
from torchlint.report.sources import SourceLines
from torchlint.report.styled import Line, plain


def _lines(diagnostics: Sequence[Diagnostic], ctx: ReportContext) -> list[Line]:
    markers = show_fix_marker(diagnostics, ctx.unsafe_fixes, ctx.fix_mode)
    sources = SourceLines(ctx.sources)
    lines: list[Line] = []
    for diagnostic in diagnostics:
        lines.append(header(diagnostic, ctx, markers))
        frame = frame_lines(diagnostic, sources)
        lines += frame
        if diagnostic.fix is not None and diagnostic.fix.message:
            lines.append([("  = ", "bold blue"), ("help", "bold cyan"), (": " + diagnostic.fix.message, "")])
        lines.append([])
    return lines + fix_summary_lines(ctx)


def render(diagnostics: Sequence[Diagnostic], ctx: ReportContext, out: TextIO) -> None:
    """Write each finding with its code frame; colour goes through rich only when asked."""
    lines = _lines(diagnostics, ctx)
    if not ctx.color:
        out.write("".join(plain(line) + "\n" for line in lines))
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(
        file=out,
        force_terminal=True,
        color_system="standard",
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=True,
    )
    for line in lines:
        console.print(Text.assemble(*line))
