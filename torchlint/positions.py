"""Node positions, computed only for the top-level statements that hold reported nodes.

LibCST's PositionProvider generates the code of the whole module to learn where every
node is; that costs more than the parse. A report needs only a few positions, so this
resolves PositionProvider on a one-statement module made of the top-level statement
that holds the node, and shifts the rows by where that statement starts, which the
stdlib `ast` tree (already parsed for the rule gates) tells for free.
"""

from __future__ import annotations

import ast
import bisect
import importlib
import re
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from torchlint.lazy import cst
from torchlint.source import split_lines
from torchlint.walk import walk


class _Range:
    __slots__ = ("start", "end")

    def __init__(self, start, end) -> None:
        self.start = start
        self.end = end


class _Point:
    __slots__ = ("line", "column")

    def __init__(self, line: int, column: int) -> None:
        self.line = line
        self.column = column


def _metadata():
    return importlib.import_module("libcst.metadata")


def _whole_module(module) -> Dict:
    metadata = _metadata()
    return metadata.MetadataWrapper(module, unsafe_skip_copy=True).resolve(metadata.PositionProvider)


def top_level_rows(module, tree: Optional[ast.Module]) -> Optional[List[Tuple[int, int]]]:
    """(first row, last row) of each top-level statement of a LibCST module, the first
    row being its first decorator's, from the stdlib ast of the same text; None if
    there is no ast or the two trees do not line up."""
    if tree is None:
        return None
    statements = iter(tree.body)
    spans = []
    try:
        for statement in module.body:
            first = last = next(statements)
            if isinstance(statement, cst.SimpleStatementLine):
                for _ in statement.body[1:]:
                    last = next(statements)
            decorators = getattr(first, "decorator_list", None)
            spans.append((decorators[0].lineno if decorators else first.lineno, last.end_lineno or last.lineno))
    except StopIteration:
        return None
    if next(statements, None) is not None:
        return None
    return spans


def statements_mentioning(module, tree: Optional[ast.Module], text: str, names: Iterable[str]):
    """The module cut down to the top-level statements whose text holds one of `names`
    as a word (the same node objects; the whole module if the rows cannot be told).
    A statement without the word can neither bind nor read the name, so a scope
    analysis of the cut module answers for these names at a fraction of the cost."""
    spans = top_level_rows(module, tree)
    words = sorted(set(names))
    if spans is None or not words:
        return module
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b")
    starts = _row_starts(text)
    rows = sorted({bisect.bisect_right(starts, match.start()) for match in pattern.finditer(text)})
    kept = []
    for statement, (first, last) in zip(module.body, spans):
        index = bisect.bisect_left(rows, first)
        if index < len(rows) and rows[index] <= last:
            kept.append(statement)
    return module.with_changes(body=kept)


def _row_starts(text: str) -> List[int]:
    """Offsets where each row starts (index 0 is row 1), rows split as CPython splits them."""
    starts = [0]
    for line in split_lines(text):
        starts.append(starts[-1] + len(line))
    return starts[:-1] if len(starts) > 1 else starts


class StatementRanges:
    """A mapping node -> range (`.start/.end` with `.line`, `.column`) like PositionProvider's."""

    def __init__(
        self, module, tree: Callable[[], Optional[ast.Module]], file_row: Optional[Callable[[int], int]] = None
    ) -> None:
        self._module = module
        self._tree = tree
        self._file_row = file_row  # the file's row of a row of the parsed text, if they differ
        self._ranges: Dict = {}
        self._statement_of: Dict = {}
        self._indexed = 0
        self._first_rows: Optional[List[int]] = None
        self._fallback: Optional[Dict] = None

    def __getitem__(self, node):
        found = self._ranges.get(node)
        if found is not None:
            return found
        if self._fallback is None:
            index = self._index_of(node)
            rows = self._statement_rows()
            if index is not None and rows is not None:
                self._resolve(index, rows[index])
                return self._ranges[node]
            self._fallback = _whole_module(self._module)
        found = self._fallback[node]
        if self._file_row is None:
            return found
        return _Range(
            _Point(self._file_row(found.start.line), found.start.column),
            _Point(self._file_row(found.end.line), found.end.column),
        )

    def _index_of(self, node) -> Optional[int]:
        body = self._module.body
        while node not in self._statement_of and self._indexed < len(body):
            for child in walk(body[self._indexed]):
                self._statement_of[child] = self._indexed
            self._indexed += 1
        return self._statement_of.get(node)

    def _statement_rows(self) -> Optional[List[int]]:
        """The row where each top-level statement's anchor (its first decorator, or itself) starts."""
        if self._first_rows is None:
            spans = top_level_rows(self._module, self._tree())
            self._first_rows = None if spans is None else [first for first, _ in spans]
        return self._first_rows

    def _resolve(self, index: int, row: int) -> None:
        statement = self._module.body[index]
        alone = self._module.with_changes(body=[statement], header=[], footer=[])
        ranges = _whole_module(alone)
        decorators = getattr(statement, "decorators", ())
        anchor = decorators[0] if decorators else statement
        shift = row - ranges[anchor].start.line
        for node, found in ranges.items():
            if node is alone:
                continue
            self._ranges[node] = _Range(
                _Point(found.start.line + shift, found.start.column),
                _Point(found.end.line + shift, found.end.column),
            )
