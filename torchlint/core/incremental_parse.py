"""A LibCST parse that re-parses only the top-level statements whose text changed.

The language server lints one file's successive versions, which differ in a statement or
two; LibCST's parse is a third of a lint. `StatementParser` parses the text in chunks,
one per top-level statement (with the blank and comment lines above it), remembers each
chunk's parse by its text, and puts the module together from them: the same tree as
`cst.parse_module` of the whole text. Where that might not hold, it parses the whole text:
- a chunk boundary is made only where the lines between two statements are empty or
  comments at column 0 (lines indented further may belong to the block above);
- every chunk with a compound statement must agree on the indentation unit, and every
  chunk on the line ending (a node that matches the module's default records none).
"""

from __future__ import annotations

import ast
import bisect
from typing import Dict, List, Optional, Sequence, Tuple

from torchlint.core.partial_parse import statement_spans
from torchlint.core.lazy import cst
from torchlint.core.noqa import LineSuppressions
from torchlint.core.parse import parse_module
from torchlint.core.positions import KnownRanges
from torchlint.core.source import split_lines


class StatementParser:
    """Parses successive versions of one file, reusing the parse of unchanged statements
    (the very nodes: what is known of a node, such as its positions, stays true)."""

    def __init__(self) -> None:
        self._chunks: Dict[str, "_Chunk"] = {}
        self.ranges = KnownRanges()
        self.suppressions: Dict[str, LineSuppressions] = {}  # see `noqa.StatementSuppressions`

    def parse(self, text: str, tree: Optional[ast.Module], rows: Optional[Sequence[int]] = None):
        """The LibCST module of `text`; `tree` is the stdlib ast of the text (of the file,
        if `rows` maps the text's rows to the file's, as for an elided text)."""
        lines = split_lines(text)
        spans = [] if tree is None else _chunk_spans(tree, lines, rows)
        used: Dict[str, _Chunk] = {}
        parts = []
        for first, last in spans if len(spans) > 1 else ():
            source = "".join(lines[first - 1 : last])
            if source in used:  # a statement written twice: each copy is a node of its own
                chunk = _Chunk(parse_module(source))
            else:
                chunk = used[source] = self._chunks.get(source) or _Chunk(parse_module(source))
            parts.append(chunk)
        self._chunks = used  # what this version used: the next one shares most of it
        module = (_joined(parts) if parts else None) or parse_module(text)
        self.ranges.keep_only(module.body)
        if len(self.suppressions) > 2 * len(module.body) + 64:  # the statements of versions long gone
            self.suppressions.clear()
        return module


class _Chunk:
    """One chunk's module, and its statements as they stand in a module below others (the
    lines above the first one are its own, not a module header)."""

    def __init__(self, module) -> None:
        self.module = module
        self._below: Optional[tuple] = None

    @property
    def below(self) -> tuple:
        if self._below is None:
            body = self.module.body
            first = body[0]
            if self.module.header:
                first = first.with_changes(leading_lines=(*self.module.header, *first.leading_lines))
            self._below = (first, *body[1:])
        return self._below


def _chunk_spans(tree: ast.Module, lines: List[str], rows: Optional[Sequence[int]]) -> List[Tuple[int, int]]:
    """(first row, last row) of each chunk of the text: from the row after the previous
    chunk to the last row of its statements."""
    ends = statement_spans(tree)
    if rows is not None:  # the tree's rows are the file's: make them the elided text's
        ends = [(bisect.bisect_left(rows, first) + 1, bisect.bisect_left(rows, last) + 1) for first, last in ends]
    spans: List[Tuple[int, int]] = []
    start = 1
    for index, (_, last) in enumerate(ends):
        following = ends[index + 1][0] if index + 1 < len(ends) else None
        if following is None:
            spans.append((start, len(lines)))
        elif following > last and all(_free(lines[row - 1]) for row in range(last + 1, following)):
            spans.append((start, last))
            start = last + 1
    return spans


def _free(line: str) -> bool:
    """A line between statements that belongs to the statement below it."""
    return line.strip("\r\n") == "" or line.startswith("#")


def _joined(parts: Sequence[_Chunk]) -> Optional[object]:
    """One module from the chunks, or None if they might not make the whole's tree."""
    modules = [part.module for part in parts]
    indents = {m.default_indent for m in modules if any(isinstance(s, cst.BaseCompoundStatement) for s in m.body)}
    newlines = {m.default_newline for m in modules}
    if len(indents) > 1 or len(newlines) > 1 or any(m.footer or not m.body for m in modules[:-1]) or not modules[-1].body:
        return None
    body = list(modules[0].body)
    for part in parts[1:]:
        body.extend(part.below)
    head, tail = modules[0], modules[-1]
    return head.with_changes(
        body=body,
        footer=tail.footer,
        default_indent=indents.pop() if indents else head.default_indent,
        has_trailing_newline=tail.has_trailing_newline,
    )
