"""Reporters: turn diagnostics into text for people, CI services and other tools.

Each format lives in its own module and is imported only when used, so that
machine formats never pay for rich.
"""

from __future__ import annotations

from dataclasses import replace
from importlib import import_module
from typing import Callable, Sequence, TextIO

from torchlint.core.diagnostics import Diagnostic
from torchlint.report.context import ReportContext

__all__ = ["FORMATS", "ReportContext", "render", "render_statistics", "summary_lines"]

FORMATS = ("full", "concise", "json", "json-lines", "github", "sarif", "junit")
HUMAN_FORMATS = ("full", "concise", "github")  # read on a terminal or in a CI log

# format -> (module, function)
_RENDERERS = {
    "full": ("full", "render"),
    "concise": ("concise", "render"),
    "json": ("json_format", "render_json"),
    "json-lines": ("json_format", "render_json_lines"),
    "github": ("github", "render"),
    "sarif": ("sarif", "render"),
    "junit": ("junit", "render"),
}


def render(fmt: str, diagnostics: Sequence[Diagnostic], ctx: ReportContext, out: TextIO) -> None:
    """Write `diagnostics` (already sorted) to `out` in format `fmt`, one of FORMATS."""
    try:
        module, function = _RENDERERS[fmt]
    except KeyError:
        raise ValueError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}") from None
    # GitHub's workflow commands encode a newline as %0A themselves (a line break in the
    # annotation); the other formats read on a terminal show it as `\n`
    spell = _for_workflow_log if fmt == "github" else _for_terminal if fmt in HUMAN_FORMATS else _printable
    printable = [_printable_messages(d, spell) for d in diagnostics]
    getattr(import_module(f"{__name__}.{module}"), function)(printable, ctx, out)


def _printable(text: str) -> str:
    from torchlint.core.paths import printable

    return printable(text)


def _for_terminal(text: str) -> str:
    from torchlint.core.visible import visible_line

    return visible_line(_printable(text))


def _for_workflow_log(text: str) -> str:
    from torchlint.core.visible import visible

    return visible(_printable(text))


def _printable_messages(diagnostic: Diagnostic, spell: Callable[[str], str]) -> Diagnostic:
    """The diagnostic with messages every format can write: a project rule's message may
    quote a file name that is not UTF-8 (names are spelled by `paths`), or a string of
    the source with control characters, which formats read on a terminal show escaped."""
    message = spell(diagnostic.message)
    fix = diagnostic.fix
    if fix is not None and spell(fix.message) != fix.message:
        fix = replace(fix, message=spell(fix.message))
    if message == diagnostic.message and fix is diagnostic.fix:
        return diagnostic
    return replace(diagnostic, message=message, fix=fix)


def render_statistics(
    diagnostics: Sequence[Diagnostic],
    ctx: ReportContext,
    out: TextIO,
    fmt: str = "full",
) -> None:
    """Write counts per rule to `out`: a JSON array when `fmt` is "json", else ruff's table.

    `render_statistics(diagnostics, ctx, fmt, out)` is accepted too.
    """
    from torchlint.report.statistics import render as render_stats

    if isinstance(out, str):
        out, fmt = fmt, out
    render_stats(fmt, diagnostics, ctx, out)


def summary_lines(diagnostics: Sequence[Diagnostic], ctx: ReportContext) -> list[str]:
    """The summary the CLI prints after full/concise output (coloured `[*]` if ctx.color)."""
    from torchlint.report.summary import summary_lines as lines

    return lines(diagnostics, ctx)
