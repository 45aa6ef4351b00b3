"""The text LibCST parses: only the top-level statements some rule can need.

LibCST's parse costs about four times CPython's, and a generated file of 150,000 lines
holds mostly functions and classes no rule can act on. The engine keeps the top-level
`def`s and `class`es that hold a site of some rule (`Rule.sites`, see
torchlint/core/gating.py); LibCST parses the file without the others. Other
statements (imports, assignments, `if`/`try` blocks) are always kept: they are what
rules read for context. A kept statement also keeps the top-level functions and classes
it names (its bases, the helpers it calls), so what a rule resolves in its own file is
still there, unless none of the file's rules follows names (`Rule.follows_names`); a
method left out (below) names nothing, as no rule reads it. Positions need nothing more: they are resolved per top-level statement and
placed at the rows the stdlib ast gives (torchlint/core/positions.py); `Elided.file_row`
maps a row of the parsed text back for anything resolved on the whole module.

Inside a kept class, a method of the class body that holds no site (and is not `forward`,
which analyses of the class read) keeps its rows but not its code: they hold one string
statement (three quotes, empty rows, three quotes), which LibCST reads as one token and one node (an
empty row would be a node of its own, to make and to visit), and every position in the
class stays the file's. The statement tree then holds a copy of the class with the same
string statements in place of those methods, lining up with the LibCST module;
`Elided.whole` gives the file's class back, whose stdlib ast analyses of the whole class
read (a trainer's settings and state, set in `__init__` and other methods LibCST never sees).
"""

from __future__ import annotations

import ast
import bisect
import re
import unicodedata
import copy
from dataclasses import dataclass, field
from typing import Dict, Iterable, KeysView, List, Mapping, Optional, Sequence, Set, Tuple

from torchlint.core.source import split_lines
from torchlint.core.walk import ast_children, ast_nodes

DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# what analyses of a class read besides the methods that hold sites: its forward pass (TL002 checks
# it from its site on the class; TL004's fix runs a layer under cuDNN's flags where `forward` calls
# it); its state, set in `__init__` and elsewhere, they read from the stdlib ast
ALWAYS_KEPT_METHODS = ("forward",)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# up to this many names, a substring search for each costs less than listing the text's words
_FEW_NAMES = 8


@dataclass(frozen=True)
class Elided:
    """The text to parse: the file's rows that kept statements span, in order; the row
    of the file each of its rows is (`rows[i]` for row i + 1); the ast of the kept
    statements (which lines up with the LibCST module's body: a class whose methods were
    left out is a copy holding the others); and, by id of such a copy, the whole class."""

    text: str
    rows: List[int]
    tree: ast.Module
    originals: Dict[int, ast.ClassDef] = field(default_factory=dict)

    def file_row(self, row: int) -> int:
        return self.rows[row - 1] if 0 < row <= len(self.rows) else row

    def whole(self, node: ast.AST) -> ast.AST:
        """The file's own node for a node of `tree` (a class whose methods were left out: the whole class)."""
        return self.originals.get(id(node), node)


def statement_spans(tree: ast.Module) -> List[Tuple[int, int]]:
    """(first row, last row) of each top-level statement, from its first decorator on."""
    return [statement_span(statement) for statement in tree.body]


def statement_span(statement: ast.stmt) -> Tuple[int, int]:
    """(first row, last row) of a statement, from its first decorator on."""
    decorators = getattr(statement, "decorator_list", None)
    first = min(d.lineno for d in decorators) if decorators else statement.lineno
    return first, statement.end_lineno or statement.lineno


def definitions_holding(view, needles: Iterable[str]) -> List[ast.stmt]:
    """The definitions whose text holds one of `needles`, as sites (see `Rule.sites`): the
    top-level functions, and of a class the methods of its body that hold one, or the
    class itself where something else in it does (its header, a class-level statement, a
    comment between methods); without needles, the whole tree. Cost: the text of each
    statement holding one scanned again, a class's in parts."""
    if not needles:
        return [view.tree]
    needles = tuple(set(needles))
    body, lines = view.tree.body, view.parse_lines
    found: List[ast.stmt] = []
    for index in statements_holding(view, needles):
        statement = body[index]
        if isinstance(statement, ast.ClassDef):
            found.extend(_members_holding(statement, needles, lines))
        elif isinstance(statement, DEFINITIONS):
            found.append(statement)
    return found


def _members_holding(klass: ast.ClassDef, needles: Tuple[str, ...], lines: Sequence[str]) -> List[ast.stmt]:
    """The methods of the class body holding a needle; the class if its other rows do."""
    first, last = statement_span(klass)
    spans = [(child, statement_span(child)) for child in klass.body if isinstance(child, _FUNCTIONS)]
    in_methods = {row for _, (start, end) in spans for row in range(start, end + 1)}
    rest = "".join(lines[row - 1] for row in range(first, last + 1) if row not in in_methods)
    if any(needle in rest for needle in needles):
        return [klass]
    return [
        method for method, (start, end) in spans if any(needle in "".join(lines[start - 1 : end]) for needle in needles)
    ]


def statements_holding(view, needles: Iterable[str]) -> List[int]:
    """The top-level statements (indexes in `view.tree.body`) whose text holds one of `needles`."""
    needles = tuple(set(needles))
    lines = view.parse_lines
    return [
        index
        for index, (first, last) in enumerate(view.statement_spans)
        if any(needle in "".join(lines[first - 1 : last]) for needle in needles)
    ]


def definitions_around(view, nodes: Iterable[ast.AST]) -> Set[int]:
    """The top-level definitions (indexes in `view.tree.body`) that hold these nodes."""
    body = view.tree.body
    spans = [
        (first, last, index)
        for index, (first, last) in enumerate(view.statement_spans)
        if isinstance(body[index], DEFINITIONS)
    ]
    starts = [first for first, _, _ in spans]
    found = set()
    for node in nodes:
        at = bisect.bisect_right(starts, node.lineno) - 1
        if at >= 0 and spans[at][1] >= node.lineno:
            found.add(spans[at][2])
    return found


def _names_none(names: KeysView[str], ascii_names: bool, span: Tuple[int, int], lines: Sequence[str]) -> bool:
    """Whether the rows of `span` surely name none of `names`."""
    first, last = span
    return names_none(names, ascii_names, "".join(lines[first - 1 : last]))


def names_none(names: KeysView[str], ascii_names: bool, text: str) -> bool:
    """Whether `text` surely names none of `names` as a word (`ascii_names`: all of them are
    ASCII); a text that is not ASCII is read NFKC-normalized, as CPython reads names, and
    only if the names are ASCII: a non-ASCII name may be spelled otherwise."""
    if not text.isascii():
        if not ascii_names:
            return False
        # line by line: NFKC joins nothing across a line break, and most lines are ASCII
        text = "".join(
            line if line.isascii() else unicodedata.normalize("NFKC", line) for line in text.splitlines(True)
        )
    if len(names) <= _FEW_NAMES and not any(name in text for name in names):
        return True  # a name that is no substring is no word
    return names.isdisjoint(_WORD.findall(text))


def elide_statements(
    text: str, tree: ast.Module, needed: Optional[Set[int]], site_rows: Sequence[int] = (), follow_names: bool = True
) -> Optional[Elided]:
    """`text` (which `tree` was parsed from) without the top-level definitions that are
    not `needed` and, with `follow_names` (some rule reads what its code names: see
    `Rule.follows_names`), that no kept statement names (nor the blank and comment rows just
    above them), and with the rows of the methods of a needed class that hold none of
    `site_rows` (the rows where rules' sites start: see `_methods_left_out`) each held by one string statement;
    None when every statement is kept (`needed` None: a rule needs all)."""
    if needed is None:
        return None
    body = tree.body
    spans = statement_spans(tree)
    keep = [not isinstance(statement, DEFINITIONS) or index in needed for index, statement in enumerate(body)]
    lines = split_lines(text)
    rows_of_sites = sorted(site_rows)
    left_out = {
        index: _methods_left_out(statement, rows_of_sites)
        for index, statement in enumerate(body)
        if index in needed and isinstance(statement, ast.ClassDef)
    }
    if follow_names:
        _keep_named(body, keep, spans, lines, left_out)
    if all(keep) and not any(left_out.values()):
        return None
    dropped: Set[int] = set()
    replaced: Dict[int, str] = {}  # row -> what the parsed text holds there instead
    placed: Dict[int, List[Tuple[int, int, int]]] = {}  # class index -> (method index, first row, last row)
    previous_end = 0
    for index, statement in enumerate(body):
        end = statement.end_lineno or statement.lineno
        if not keep[index]:
            dropped.update(range(previous_end + 1, end + 1))
        elif left_out.get(index):
            placed[index] = _rows_left_out(statement, left_out[index])
            for _, first, last in placed[index]:
                replaced.update(_placeholder_rows(lines, first, last))
        previous_end = end
    rows = [row for row in range(1, len(lines) + 1) if row not in dropped]
    kept_text = "".join(replaced.get(row, lines[row - 1]) for row in rows)
    kept_body, originals = [], {}
    for index, statement in enumerate(body):
        if not keep[index]:
            continue
        if index in placed:
            statement = _with_placeholders(statement, placed[index], lines, originals)
        kept_body.append(statement)
    return Elided(kept_text, rows, ast.Module(body=kept_body, type_ignores=[]), originals)


def _methods_left_out(statement: ast.ClassDef, site_rows: Sequence[int]) -> List[int]:
    """The indexes in a class's body of the methods LibCST need not parse: those of the
    class body itself that hold no site, but `ALWAYS_KEPT_METHODS`; none where a site lies
    elsewhere in the class (its header, a class-level statement, a nested class, a method
    under `if`), as a rule then reads the class whole. Cost: O(class body + log sites)."""
    first, last = statement_span(statement)
    start, stop = bisect.bisect_left(site_rows, first), bisect.bisect_right(site_rows, last)
    inside = site_rows[start:stop]
    if not inside:
        return []
    methods = [
        (index, statement_span(child)) for index, child in enumerate(statement.body) if isinstance(child, _FUNCTIONS)
    ]
    starts = [span[0] for _, span in methods]
    holding = set()
    for row in inside:
        at = bisect.bisect_right(starts, row) - 1
        if at < 0 or methods[at][1][1] < row:
            return []
        holding.add(methods[at][0])
    return [
        index
        for index, _ in methods
        if index not in holding and statement.body[index].name not in ALWAYS_KEPT_METHODS
    ]


def _rows_left_out(statement: ast.ClassDef, left_out: Sequence[int]) -> List[Tuple[int, int, int]]:
    """(index in the class's body, first row, last row) of each method left out, its rows
    counted from the row after the statement before it in the class (the comments between)."""
    found = []
    for index in left_out:
        first, last = statement_span(statement.body[index])
        if index > 0:
            before = statement.body[index - 1]
            first = (before.end_lineno or before.lineno) + 1
        found.append((index, first, last))
    return found


def _placeholder_rows(lines: Sequence[str], first: int, last: int) -> Dict[int, str]:
    """The rows `first`..`last` of a class's body as one string statement at the indentation of
    the method left out: three quotes, the rows' line endings, three quotes."""
    indent = _indentation(lines, first, last)
    if first == last:
        return {first: indent + '""' + _ending(lines[first - 1])}
    rows = {row: _ending(lines[row - 1]) for row in range(first + 1, last)}
    rows[first] = indent + '"""' + _ending(lines[first - 1])
    rows[last] = '"""' + _ending(lines[last - 1])
    return rows


def _indentation(lines: Sequence[str], first: int, last: int) -> str:
    """The indentation of the first row of code (not a comment, not blank) from `first` on."""
    for row in range(first, last + 1):
        line = lines[row - 1]
        code = line.lstrip(" \t\f")
        if code.strip() and not code.startswith("#"):
            return line[: len(line) - len(code)]
    return ""


def _ending(line: str) -> str:
    """The line's ending alone."""
    return line[len(line.rstrip("\r\n")) :]


def _with_placeholders(
    statement: ast.ClassDef,
    placed: Sequence[Tuple[int, int, int]],
    lines: Sequence[str],
    originals: Dict[int, ast.ClassDef],
) -> ast.ClassDef:
    """A copy of the class with each method left out replaced by the string statement its rows
    hold in the parsed text (the original untouched: the file's tree is read whole by the analyses)."""
    partial = copy.copy(statement)
    partial.body = list(statement.body)
    for index, first, last in placed:
        column = len(_indentation(lines, first, last))
        end_column = column + 2 if first == last else 3
        where = dict(lineno=first, col_offset=column, end_lineno=last, end_col_offset=end_column)
        partial.body[index] = ast.Expr(value=ast.Constant(value="", **where), **where)
    originals[id(partial)] = statement
    return partial


def _keep_named(
    body: Sequence[ast.stmt],
    keep: List[bool],
    spans: Sequence[Tuple[int, int]],
    lines: Sequence[str],
    left_out: Mapping[int, Sequence[int]],
) -> None:
    """Keep, transitively, the top-level definitions that kept statements name. What LibCST
    does not parse names nothing a rule can follow: the methods `left_out` of a class (by
    index in its body) are not read. A kept statement whose text holds none of the names
    still unresolved as a word is not walked (the text NFKC-normalized, as CPython
    normalizes names: `ｆｏｏ` is `foo`). Cost: each kept statement's text scanned once, and
    walked at most once."""
    defined: Dict[str, List[int]] = {}
    for index, statement in enumerate(body):
        if isinstance(statement, DEFINITIONS) and not keep[index]:
            defined.setdefault(statement.name, []).append(index)
    pending = [index for index, kept in enumerate(keep) if kept]
    ascii_names = all(name.isascii() for name in defined)
    while pending and defined:
        index = pending.pop()
        if _names_none(defined.keys(), ascii_names, spans[index], lines):
            continue
        for node in _parsed_nodes(body[index], left_out.get(index, ())):
            if isinstance(node, ast.Name) and node.id in defined:
                for named in defined.pop(node.id):
                    keep[named] = True
                    pending.append(named)


def _parsed_nodes(statement: ast.stmt, left_out: Sequence[int]) -> List[ast.AST]:
    """The nodes of a top-level statement but those of its methods `left_out` (indexes in
    its body)."""
    if not left_out:
        return ast_nodes(statement)
    skipped = {id(statement.body[index]) for index in left_out}
    found: List[ast.AST] = [statement]
    for child in ast_children(statement):
        if id(child) not in skipped:
            found.extend(ast_nodes(child))
    return found
