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
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from torchlint.core.lazy import cst
from torchlint.core.source import split_lines
from torchlint.core.walk import children, walk


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


def _whole_module(module) -> Mapping:
    """PositionProvider's ranges of every node of `module`. Through its own codegen when
    LibCST has it as expected: `MetadataWrapper.resolve` walks the whole tree once more for
    batch providers even when there are none, which doubles the cost of a small render."""
    metadata = _metadata()
    provider = metadata.PositionProvider()
    provider._gen_impl(module)
    computed = getattr(provider, "_computed", None)
    if isinstance(computed, dict) and module in computed:
        return computed
    # a LibCST whose provider computes positions otherwise: its public way
    return metadata.MetadataWrapper(module, unsafe_skip_copy=True).resolve(metadata.PositionProvider)


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


def rows_mentioning(text: str, names: Iterable[str]) -> List[int]:
    """The rows (1-based, in order) whose text holds one of `names` as a word: a statement
    on none of them can neither bind nor read the names."""
    words = sorted(set(names))
    if not words:
        return []
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b")
    starts = _row_starts(text)
    return sorted({bisect.bisect_right(starts, match.start()) for match in pattern.finditer(text)})


def statement_rows(statement: ast.stmt) -> Tuple[int, int]:
    """(first row, last row) of a stdlib ast statement, its decorators included."""
    return _anchor_row(statement), statement.end_lineno or statement.lineno


def cst_counterparts(module, tree: Optional[ast.Module], wanted: Iterable[ast.stmt]) -> Dict[ast.stmt, object]:
    """The LibCST statement of each of `wanted` (compound statements of `tree`, the stdlib
    ast of the text `module` was parsed from); those the trees do not line up on are left
    out. Cost: the top-level statements, and the statements under those that hold one of
    `wanted`."""
    wanted = set(wanted)
    pairs = _paired(module.body, tree.body) if tree is not None and wanted else None
    if pairs is None:
        return {}
    rows = sorted(node.lineno for node in wanted)
    found: Dict[ast.stmt, object] = {}
    for statement, (first, last) in zip(module.body, pairs):
        index = bisect.bisect_left(rows, _anchor_row(first))
        if index == len(rows) or rows[index] > (last.end_lineno or last.lineno):
            continue
        if isinstance(statement, cst.BaseCompoundStatement):
            found.update((theirs, ours) for ours, theirs in statement_counterparts(statement, first).items()
                         if theirs in wanted)
    return found


def _row_starts(text: str) -> List[int]:
    """Offsets where each row starts (index 0 is row 1), rows split as CPython splits them."""
    starts = [0]
    for line in split_lines(text):
        starts.append(starts[-1] + len(line))
    return starts[:-1] if len(starts) > 1 else starts


# the clauses of a compound statement that hold statements, in source order (a statement
# has `body` or `cases`, never both): the same names in LibCST and the stdlib ast
_SUITES = ("body", "cases", "handlers", "orelse", "finalbody")


def statement_counterparts(statement, ast_statement: ast.stmt) -> Dict:
    """Each statement line and compound statement under a compound LibCST statement (itself
    included) mapped to its stdlib ast statement (a line's is that of its first small
    statement); empty if the two trees do not line up. Both are listed in source order,
    statement by statement: an `elif` is an `If` in `orelse` in both."""
    units: List = []  # compound and small statements, in source order
    firsts: List[Tuple[object, int]] = []  # (statement line, index of its first small statement)
    stack = [statement]
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind is cst.SimpleStatementLine or kind is cst.SimpleStatementSuite:
            if kind is cst.SimpleStatementLine:
                firsts.append((current, len(units)))
            units.extend(current.body)
            continue
        if isinstance(current, cst.BaseCompoundStatement):
            units.append(current)
        held: List = []
        for name in _SUITES:
            value = getattr(current, name, None)
            if value is None:
                continue
            if isinstance(value, (list, tuple)):
                held.extend(value)
            elif type(value) is cst.IndentedBlock:
                held.extend(value.body)
            else:  # a clause (else, finally), an elif, or a one-line suite
                held.append(value)
        stack.extend(reversed(held))
    theirs = _ast_statements(ast_statement)
    if len(theirs) != len(units) or not all(map(_same_kind, units, theirs)):
        return {}
    found = {unit: theirs[position] for position, unit in enumerate(units) if not isinstance(unit, cst.BaseSmallStatement)}
    found.update((line, theirs[position]) for line, position in firsts)
    return found


def _ast_statements(statement: ast.stmt) -> List[ast.stmt]:
    """The stdlib ast statements of a statement (itself included), in source order."""
    found: List[ast.stmt] = []
    stack: List[ast.AST] = [statement]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.stmt):
            found.append(current)
        held: List[ast.AST] = []
        for name in _SUITES:
            held.extend(getattr(current, name, ()))
        stack.extend(reversed(held))
    return found


_AST_NAMES = {"Del": "Delete"}


def _same_kind(ours, theirs: ast.stmt) -> bool:
    name = type(ours).__name__
    return _AST_NAMES.get(name, name) == type(theirs).__name__.replace("Async", "", 1)


# the language server keeps the ranges of top-level statements shorter than this, whole
KEPT_STATEMENT_ROWS = 200


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
        # keyed by id(node): the module holds its nodes, and a LibCST node's hash is a Python call
        self._top_index: Dict[int, int] = {}  # id(top-level statement) -> its index, for those indexed
        self._indexed = 0
        self._first_rows: Optional[List[int]] = None
        self._pairs: Optional[List[Tuple[ast.stmt, ast.stmt]]] = None  # of the top-level statements
        self._fallback: Optional[Dict] = None
        self._parents: Dict[int, object] = {}  # id(node) -> the node holding it, below the top-level statements
        self._indents: Dict[int, str] = {}  # id(node) -> the indentation of the file's lines inside it
        self._counterparts_of: Dict[int, Dict] = {}  # top-level index -> its statements' stdlib ast ones

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
                if not (self._nested_first(index) and self._resolve_nested(index, node)):
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

    def _nested_first(self, index: int) -> bool:
        """Whether to resolve a node of this top-level statement within its innermost block
        statement: always without `known` ranges; with them (the language server), only in a
        statement too long to render whole at every keystroke inside it (a trainer class), as
        the ranges of a whole one are kept for the versions in which it does not change."""
        if self._known is None:
            return True
        first, last = self._pairs[index]
        return (last.end_lineno or last.lineno) - _anchor_row(first) >= KEPT_STATEMENT_ROWS

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
        """The index of the top-level statement holding `node`: the parents of each next
        top-level statement's nodes are indexed until `node` is among them, then its
        parents are followed up to that statement (O(depth))."""
        body, parents, top_index = self._module.body, self._parents, self._top_index
        key = id(node)
        while key not in parents and key not in top_index and self._indexed < len(body):
            statement = body[self._indexed]
            top_index[id(statement)] = self._indexed
            stack = [statement]
            while stack:
                current = stack.pop()
                held = children(current)
                if held:
                    parents.update(dict.fromkeys(map(id, held), current))
                    stack.extend(held)
            self._indexed += 1
        while key not in top_index:
            parent = parents.get(key)
            if parent is None:
                return None
            key = id(parent)
        return top_index[key]

    def _resolve_nested(self, index: int, node) -> bool:
        """Resolve the innermost statement of an indented block that holds `node`, rendered
        alone at its own indentation: a statement of a 4,000-line method costs what that
        statement costs. Rows shift by where the stdlib ast puts it. False if `node` lies
        in no nested block statement or the two trees do not line up."""
        statement = self._block_statement(node)
        if statement is None:
            return False
        counterpart = self._counterparts(index).get(statement)
        if counterpart is None:
            return False
        indent = self._indent_inside(self._parents[id(statement)])
        alone = cst.If(test=cst.Name("_"), body=cst.IndentedBlock(body=[statement], indent=indent))
        ranges = _whole_module(self._module.with_changes(body=[alone], header=[], footer=[]))
        decorators = getattr(statement, "decorators", ())
        shift = _anchor_row(counterpart) - ranges[decorators[0] if decorators else statement].start.line
        for held in walk(statement):
            found = ranges[held]
            self._ranges[held] = _Range(
                _Point(found.start.line + shift, found.start.column), _Point(found.end.line + shift, found.end.column)
            )
        return True

    def _block_statement(self, node):
        """The innermost statement holding `node` (or `node` itself) that is one of an
        indented block's statements; None for a node of a top-level statement outside them."""
        parents, block = self._parents, cst.IndentedBlock
        current = node
        while True:
            parent = parents.get(id(current))
            if parent is None:
                return None
            if type(parent) is block:
                return current
            current = parent

    def _indent_inside(self, node) -> str:
        """The indentation the file's lines have inside `node`: the indents of the blocks
        and `match` statements (their cases are indented) holding it, itself included,
        joined (remembered for every node on the way)."""
        path, indents, parents = [], self._indents, self._parents
        indenting = (cst.IndentedBlock, cst.Match)
        current = node
        while current is not None and id(current) not in indents:
            path.append(current)
            current = parents.get(id(current))
        indent = "" if current is None else indents[id(current)]
        for held in reversed(path):
            if type(held) in indenting:
                indent += self._module.default_indent if held.indent is None else held.indent
            indents[id(held)] = indent
        return indent

    def _counterparts(self, index: int) -> Dict:
        found = self._counterparts_of.get(index)
        if found is None:
            found = self._counterparts_of[index] = statement_counterparts(self._module.body[index], self._pairs[index][0])
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
