"""`json` and `json-lines`: ruff's JSON schema, field for field."""

from __future__ import annotations

import json
from typing import Sequence, TextIO

from torchlint.core.diagnostics import Diagnostic
from torchlint.core import paths
from torchlint.report.context import ReportContext


def to_json(diagnostic: Diagnostic, ctx: ReportContext) -> dict:
    """One finding as ruff writes it: absolute filename, rule url, `cell` (the notebook
    cell's 1-based number, rows counted in it; null outside notebooks); and, only for a
    file name that is not UTF-8 (`filename` then spells its bytes `\\xff`), `filename_uri`
    with the exact bytes percent-encoded."""
    data = diagnostic.to_json()
    data["filename"] = paths.absolute(diagnostic.filename)
    uri = paths.undecodable_uri(diagnostic.filename)
    if uri is not None:
        data["filename_uri"] = uri
    data["cell"] = diagnostic.cell
    data["url"] = ctx.rule_url(diagnostic.code)
    return data


def render_json(diagnostics: Sequence[Diagnostic], ctx: ReportContext, out: TextIO) -> None:
    """A pretty-printed array with sorted keys, as `serde_json` prints ruff's."""
    items = [to_json(d, ctx) for d in diagnostics]
    out.write(json.dumps(items, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def render_json_lines(diagnostics: Sequence[Diagnostic], ctx: ReportContext, out: TextIO) -> None:
    """One compact object per line."""
    for diagnostic in diagnostics:
        data = to_json(diagnostic, ctx)
        out.write(json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n")
