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
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from torchlint.core.lazy import cst
from torchlint.core.source import split_lines
from torchlint.core.walk import walk


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
    pairs = _paired(module.body, tree.body)
    if pairs is None:
        return None
    return [(_anchor_row(first), last.end_lineno or last.lineno) for first, last in pairs]


def _paired(statements: Sequence, ast_statements: Sequence[ast.stmt]) -> Optional[List[Tuple[ast.stmt, ast.stmt]]]:
    """The first and last stdlib ast statement of each LibCST statement of one block (a
    line of small statements is several); None if the two blocks do not line up."""
    remaining = iter(ast_statements)
    pairs = []
    try:
        for statement in statements:
            first = last = next(remaining)
            if isinstance(statement, cst.SimpleStatementLine):
                for _ in statement.body[1:]:
                    last = next(remaining)
            pairs.append((first, last))
    except StopIteration:
        return None
    if next(remaining, None) is not None:
        return None
    return pairs


def _anchor_row(statement: ast.stmt) -> int:
    """The row a statement starts on: its first decorator's, or its own."""
    decorators = getattr(statement, "decorator_list", None)
    return decorators[0].lineno if decorators else statement.lineno


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
        self,
        module,
        tree: Callable[[], Optional[ast.Module]],
        file_row: Optional[Callable[[int], int]] = None,
        known: Optional["KnownRanges"] = None,
    ) -> None:
        self._module = module
        self._known = known
        self._index_of_statement: Optional[Dict[int, int]] = None
        self._tree = tree
        self._file_row = file_row  # the file's row of a row of the parsed text, if they differ
        self._ranges: Dict = {}
        self._statement_of: Dict = {}
        self._indexed = 0
        self._first_rows: Optional[List[int]] = None
        self._pairs: Optional[List[Tuple[ast.stmt, ast.stmt]]] = None  # of the top-level statements
        self._fallback: Optional[Dict] = None
        self._children: Dict[int, Dict] = {}  # id(class) -> its body's nodes -> index

    def __getitem__(self, node):
        found = self._ranges.get(node)
        if found is not None:
            return found
        if self._known is not None and self._fallback is None:
            found = self._known_range(node)
            if found is not None:
                return found
        if self._fallback is None:
            index = self._index_of(node)
            rows = self._statement_rows()
            if index is not None and rows is not None:
                if self._known is not None or not self._resolve_in_class(index, node):
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

    def _known_range(self, node):
        known = self._known.get(node, self._module.default_indent)
        rows = self._statement_rows()
        if known is None or rows is None:
            return None
        statement, (start_line, start_column, end_line, end_column) = known
        if self._index_of_statement is None:
            self._index_of_statement = {id(s): index for index, s in enumerate(self._module.body)}
        index = self._index_of_statement.get(id(statement))
        if index is None or self._module.body[index] is not statement:
            return None
        row = rows[index]
        found = self._ranges[node] = _Range(_Point(start_line + row, start_column), _Point(end_line + row, end_column))
        return found

    def _index_of(self, node) -> Optional[int]:
        body = self._module.body
        while node not in self._statement_of and self._indexed < len(body):
            for child in walk(body[self._indexed]):
                self._statement_of[child] = self._indexed
            self._indexed += 1
        return self._statement_of.get(node)

    def _resolve_in_class(self, index: int, node) -> bool:
        """Resolve the statement of a class body (a method, most often) that holds `node`,
        rendered alone in its classes: a large model class costs what one method costs.
        Its lines are rendered as the file has them, so columns hold and rows shift by
        where the stdlib ast puts it. False if `node` is in no class body statement."""
        inner, inner_ast = self._module.body[index], self._pairs[index][0]
        path = []
        while isinstance(inner, cst.ClassDef) and isinstance(inner.body, cst.IndentedBlock):
            pairs = _paired(inner.body.body, getattr(inner_ast, "body", ()))
            child = self._child_of(inner).get(node)
            if pairs is None or child is None:
                break
            path.append(inner)
            inner, inner_ast = inner.body.body[child], pairs[child][0]
        if not path:
            return False
        alone = inner
        for holder in reversed(path):
            alone = holder.with_changes(body=holder.body.with_changes(body=[alone]))
        ranges = _whole_module(self._module.with_changes(body=[alone], header=[], footer=[]))
        decorators = getattr(inner, "decorators", ())
        shift = _anchor_row(inner_ast) - ranges[decorators[0] if decorators else inner].start.line
        for held in walk(inner):
            found = ranges[held]
            self._ranges[held] = _Range(
                _Point(found.start.line + shift, found.start.column), _Point(found.end.line + shift, found.end.column)
            )
        return True

    def _child_of(self, class_node) -> Dict:
        """Each node under a class body statement mapped to that statement's index."""
        found = self._children.get(id(class_node))
        if found is None:
            found = self._children[id(class_node)] = {
                held: position for position, child in enumerate(class_node.body.body) for held in walk(child)
            }
        return found

    def _statement_rows(self) -> Optional[List[int]]:
        """The row where each top-level statement's anchor (its first decorator, or itself) starts."""
        if self._first_rows is None:
            tree = self._tree()
            self._pairs = None if tree is None else _paired(self._module.body, tree.body)
            self._first_rows = None if self._pairs is None else [_anchor_row(first) for first, _ in self._pairs]
        return self._first_rows

    def _resolve(self, index: int, row: int) -> None:
        statement = self._module.body[index]
        relative = _relative_ranges(self._module, statement)
        if self._known is not None:
            self._known.add(statement, self._module.default_indent, relative)
        for node, start_line, start_column, end_line, end_column in relative:
            self._ranges[node] = _Range(_Point(start_line + row, start_column), _Point(end_line + row, end_column))


class KnownRanges:
    """The ranges of top-level statements' nodes, lines counted from each statement's
    anchor, kept across the versions of one file by a parser that reuses the statements
    it did not parse again (`torchlint.core.incremental_parse`): a statement's positions are
    then computed once, not at every version."""

    def __init__(self) -> None:
        self._of_node: Dict = {}  # node -> (its top-level statement, its relative range)
        self._statements: Dict[int, Tuple] = {}  # id(statement) -> (statement, indent unit, its nodes)

    def get(self, node, indent: str) -> Optional[Tuple]:
        """(statement, relative range) of a node, if known for this indent unit (a block
        that records no indent of its own has the module's)."""
        found = self._of_node.get(node)
        if found is None or self._statements[id(found[0])][1] != indent:
            return None
        return found

    def add(self, statement, indent: str, relative: List[Tuple]) -> None:
        self._drop(id(statement))
        for node, *found in relative:
            self._of_node[node] = (statement, tuple(found))
        self._statements[id(statement)] = (statement, indent, [entry[0] for entry in relative])

    def keep_only(self, statements) -> None:
        """Forget all but these statements (those of the file's latest version)."""
        current = {id(statement) for statement in statements}
        for key in [key for key in self._statements if key not in current]:
            self._drop(key)

    def _drop(self, key: int) -> None:
        known = self._statements.pop(key, None)
        if known is not None:
            for node in known[2]:
                self._of_node.pop(node, None)


def _relative_ranges(module, statement) -> List[Tuple]:
    """(node, start line, start column, end line, end column) of each node of a top-level
    statement, lines counted from its anchor (its first decorator, or itself)."""
    alone = module.with_changes(body=[statement], header=[], footer=[])
    ranges = _whole_module(alone)
    decorators = getattr(statement, "decorators", ())
    base = ranges[decorators[0] if decorators else statement].start.line
    return [
        (node, found.start.line - base, found.start.column, found.end.line - base, found.end.column)
        for node, found in ranges.items()
        if node is not alone
    ]
