"""torchlint's positions, findings and edits in the Language Server Protocol's terms.

torchlint counts rows from 1 and columns from 1 in code points; the LSP counts lines from
0 and characters in code units of the position encoding agreed at initialize (UTF-16
unless the client offers UTF-8 or UTF-32), so a character outside the Basic Multilingual
Plane is two UTF-16 units.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from lsprotocol import types

from torchlint.fixing.apply import line_offsets, text_offset
from torchlint.core.diagnostics import Diagnostic, Edit, Location, RuleInfo
from torchlint.core.visible import visible

SOURCE = "torchlint"
SEVERITIES = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning}


def code_units(text: str, encoding: str) -> int:
    """The length of `text` in the code units of `encoding`."""
    if encoding == types.PositionEncodingKind.Utf32 or text.isascii():
        return len(text)
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class TextPositions:
    """LSP positions in one text."""

    def __init__(self, text: str, encoding: str) -> None:
        self.text = text
        self.encoding = encoding
        self.starts = line_offsets(text)

    def at_offset(self, offset: int) -> types.Position:
        offset = min(max(offset, 0), len(self.text))
        line = bisect_right(self.starts, offset) - 1
        if line == len(self.starts) - 1 and self.text and not self.text.endswith(("\n", "\r")):
            line -= 1  # the end of a last line that has no line ending
        return types.Position(line, code_units(self.text[self.starts[line] : offset], self.encoding))

    def at(self, location: Location) -> types.Position:
        return self.at_offset(text_offset(self.starts, location))

    def range(self, start: Location, end: Location) -> types.Range:
        return types.Range(self.at(start), self.at(end))

    def text_edit(self, edit: Edit) -> types.TextEdit:
        return types.TextEdit(self.range(edit.start, edit.end), edit.content)


@dataclass(frozen=True)
class Findings:
    """The findings in one text, and what the client is told of each (in the same order)."""

    text: str
    diagnostics: Tuple[Diagnostic, ...]
    published: Tuple[types.Diagnostic, ...]

    def on_rows(self, first: int, last: int) -> List[Tuple[Diagnostic, types.Diagnostic]]:
        return [
            (ours, theirs)
            for ours, theirs in zip(self.diagnostics, self.published)
            if ours.location.row <= last and ours.end_location.row >= first
        ]


NO_FINDINGS = Findings("", (), ())


def findings_in(text: str, diagnostics: Sequence[Diagnostic], encoding: str, infos: Dict[str, RuleInfo]) -> Findings:
    positions = TextPositions(text, encoding)
    published = tuple(lsp_diagnostic(d, positions, infos.get(d.code)) for d in diagnostics)
    return Findings(text, tuple(diagnostics), published)


def lsp_diagnostic(diagnostic: Diagnostic, positions: TextPositions, info: Optional[RuleInfo]) -> types.Diagnostic:
    return types.Diagnostic(
        range=positions.range(diagnostic.location, diagnostic.end_location),
        message=visible(diagnostic.message),
        severity=SEVERITIES.get(info.level if info else "warning", types.DiagnosticSeverity.Warning),
        code=diagnostic.code,
        code_description=types.CodeDescription(href=info.url) if info else None,
        source=SOURCE,
    )


def workspace_edit(
    uri: str, version: Optional[int], edits: List[types.TextEdit], versioned: bool
) -> types.WorkspaceEdit:
    """Edits to one document; `versioned` (the client takes `documentChanges`): the client
    refuses them if the document is no longer at `version`."""
    if versioned:
        document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(document, edits)])
    return types.WorkspaceEdit(changes={uri: edits})

