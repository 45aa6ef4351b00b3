"""Node positions, computed only for the top-level statements that hold reported nodes.

LibCST's PositionProvider generates the code of the whole module to learn where every
node is; that costs more than the parse. A report needs only a few positions, so this
resolves PositionProvider on a one-statement module made of the top-level statement
that holds the node, and shifts the rows by where that statement starts, which the
stdlib `ast` tree (already parsed for the rule gates) tells for free.
"""

from __future__ import annotations

import ast
import importlib
from typing import Callable, Dict, List, Optional

from torchlint.lazy import cst
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


class StatementRanges:
    """A mapping node -> range (`.start/.end` with `.line`, `.column`) like PositionProvider's."""

    def __init__(self, module, tree: Callable[[], Optional[ast.Module]]) -> None:
        self._module = module
        self._tree = tree
        self._ranges: Dict = {}
        self._statement_of: Dict = {}
        self._indexed = 0
        self._first_rows: Optional[List[int]] = None
        self._fallback: Optional[Dict] = None

    def __getitem__(self, node):
        found = self._ranges.get(node)
        if found is not None:
            return found
        if self._fallback is not None:
            return self._fallback[node]
        index = self._index_of(node)
        rows = self._statement_rows()
        if index is None or rows is None:
            self._fallback = _whole_module(self._module)
            return self._fallback[node]
        self._resolve(index, rows[index])
        return self._ranges[node]

    def _index_of(self, node) -> Optional[int]:
        body = self._module.body
        while node not in self._statement_of and self._indexed < len(body):
            for child in walk(body[self._indexed]):
                self._statement_of[child] = self._indexed
            self._indexed += 1
        return self._statement_of.get(node)

    def _statement_rows(self) -> Optional[List[int]]:
        """The row where each top-level statement's anchor (its first decorator, or itself) starts."""
        if self._first_rows is not None:
            return self._first_rows
        tree = self._tree()
        if tree is None:
            return None
        statements = iter(tree.body)
        rows = []
        try:
            for statement in self._module.body:
                first = next(statements)
                if isinstance(statement, cst.SimpleStatementLine):
                    for _ in statement.body[1:]:
                        next(statements)
                decorators = getattr(first, "decorator_list", None)
                rows.append(decorators[0].lineno if decorators else first.lineno)
        except StopIteration:
            return None
        if next(statements, None) is not None:
            return None
        self._first_rows = rows
        return rows

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
