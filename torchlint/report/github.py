"""GitHub Actions workflow commands (`::error ...::` / `::warning ...::`), one per finding."""

from __future__ import annotations

from typing import Sequence, TextIO

from torchlint.core.diagnostics import Diagnostic, cell_name
from torchlint.core import paths
from torchlint.report.context import ReportContext
from torchlint.core.visible import visible_line


def escape_data(text: str) -> str:
    """Escape a command's message as @actions/core does."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a command property value as @actions/core does."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(diagnostic: Diagnostic, ctx: ReportContext) -> str:
    """The `::error` or `::warning` line for one finding (the rule's level)."""
    path = visible_line(paths.for_root(diagnostic.filename, ctx.root))  # GitHub's log obeys ANSI escapes
    start, end = diagnostic.location, diagnostic.end_location
    properties = {
        "title": f"torchlint ({diagnostic.code})",
        "file": path,
        "line": start.row,
        "col": start.column,
        "endLine": end.row,
        "endColumn": end.column,
    }
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    text = f"{cell_name(path, diagnostic.cell)}:{start.row}:{start.column}: {diagnostic.code} {diagnostic.message}"
    return f"::{ctx.rule_level(diagnostic.code)} {props}::{escape_data(text)}"


def render(diagnostics: Sequence[Diagnostic], ctx: ReportContext, out: TextIO) -> None:
    """Write one workflow command per finding."""
    out.write("".join(command(d, ctx) + "\n" for d in diagnostics))
