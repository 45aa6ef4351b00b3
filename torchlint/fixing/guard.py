"""After fixes are applied, prove that they changed only what they said they would
(black's AST-equivalence check, adapted to code that is meant to change).

Edits are spans of the old text. The guard asks:
- does the new text parse (`ast`)?
- does every edit begin and end between tokens? A span off by a column, as a wrong
  position gives, cuts a name, number or operator in two (inside strings and comments,
  e.g. a noqa list, an edit may fall anywhere);
- is every statement that no edit touches still there, at the place the edits moved it
  to, with the same source and the same nesting depth? Same source at the same extent
  means the same AST, so this costs one `ast.parse` of each version and a walk over the
  statements (no `ast.dump`); a statement that changed extent or depth (re-nested,
  swallowed by a string an edit opened) fails. Statements an edit touches are checked
  through the statements inside them.
"""

from __future__ import annotations

import ast
import bisect
import io
import tokenize
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

from torchlint.core.source import split_lines

Span = Tuple[int, int, str]  # start, end (offsets in the old text), new content

_ATOMIC = {tokenize.NAME, tokenize.NUMBER, tokenize.OP}
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def check(before: str, after: str, spans: Sequence[Span]) -> Optional[str]:
    """None if `after` is `before` with `spans` applied and nothing else changed in
    meaning; else why not (one phrase)."""
    try:
        old_tree = _parse(before)
    except (SyntaxError, ValueError):
        return None  # nothing to compare against; the caller still requires `after` to parse
    try:
        new_tree = _parse(after)
    except (SyntaxError, ValueError) as error:
        return f"the result does not parse ({type(error).__name__} at line {getattr(error, 'lineno', '?')})"
    old, new = _Text(before), _Text(after)
    moved = _Mover(sorted(spans, key=lambda span: span[:2]))
    problem = _cut_token(old, old_tree.body, moved.spans)
    if problem:
        return problem
    new_places = _places(new, new_tree.body)
    return _unchanged(old, after, old_tree.body, 0, moved, new_places)


_last_parsed: Dict[str, ast.Module] = {}


def _parse(text: str) -> ast.Module:
    """One round's result is the next round's start, and trials of single fixes share
    their start: each text is parsed once."""
    tree = _last_parsed.get(text)
    if tree is None:
        tree = ast.parse(text)
        if len(_last_parsed) >= 2:
            del _last_parsed[next(iter(_last_parsed))]
        _last_parsed[text] = tree
    return tree


class _Text:
    """A text's line offsets; ast positions (rows, UTF-8 byte columns) as offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = split_lines(text)
        self.starts = line_starts(self.lines)

    def offset(self, row: int, byte_column: int) -> int:
        line = self.lines[row - 1] if row <= len(self.lines) else ""
        if line.isascii():
            return self.starts[row - 1] + byte_column
        return self.starts[row - 1] + len(line.encode("utf-8")[:byte_column].decode("utf-8", "replace"))

    def extent(self, node: ast.stmt) -> Tuple[int, int]:
        """From its first decorator (or itself) to its last character. Decorators are
        indented as the statement is, so its column tells where they start."""
        return self.offset(_first_row(node), node.col_offset), self.offset(node.end_lineno, node.end_col_offset)

    def row_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)


def line_starts(lines: Sequence[str]) -> List[int]:
    """The offset where each line starts, and the end of the last one."""
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return starts


def _first_row(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", None)
    return min([node.lineno] + [d.lineno for d in decorators]) if decorators else node.lineno


def _children(statement) -> Iterator[ast.stmt]:
    """The statements directly inside a compound statement (through except/case clauses)."""
    for field in _BLOCKS:
        for child in getattr(statement, field, None) or ():
            if isinstance(child, ast.stmt):
                yield child
            else:
                yield from _children(child)


class _Mover:
    """Where an old offset lands once the spans are applied."""

    def __init__(self, spans: Sequence[Span]) -> None:
        self.spans = spans
        self.starts = [start for start, _, _ in spans]
        self.ends = [end for _, end, _ in spans]
        self.shift = [0]
        for start, end, content in spans:
            self.shift.append(self.shift[-1] + len(content) - (end - start))

    def touches(self, start: int, end: int) -> bool:
        """Does a span change text inside [start, end)? Insertions at its edges do not."""
        for span_start, span_end, _ in self.spans[bisect.bisect_right(self.ends, start) :]:
            if span_start >= end:
                break
            if span_start < span_end or start < span_start:
                return True
        return False

    def start(self, offset: int) -> int:
        """An insertion exactly here goes before the text that starts here."""
        return offset + self.shift[bisect.bisect_right(self.ends, offset)]

    def end(self, offset: int) -> int:
        """An insertion exactly here goes after the text that ends here."""
        return offset + self.shift[bisect.bisect_left(self.starts, offset)]


def _places(new: _Text, body: Sequence[ast.stmt], depth: int = 0, found: Optional[Set] = None) -> Set:
    """(start, end, depth) of every statement of the new text."""
    found = set() if found is None else found
    for statement in body:
        found.add(new.extent(statement) + (depth,))
        _places(new, list(_children(statement)), depth + 1, found)
    return found


def _unchanged(old: _Text, after: str, statements, depth: int, moved: _Mover, new_places: Set) -> Optional[str]:
    for statement in statements:
        start, end = old.extent(statement)
        if moved.touches(start, end):
            problem = _unchanged(old, after, list(_children(statement)), depth + 1, moved, new_places)
            if problem:
                return problem
            continue
        new_start, new_end = moved.start(start), moved.end(end)
        if (new_start, new_end, depth) not in new_places or after[new_start:new_end] != old.text[start:end]:
            return f"the statement at line {_first_row(statement)} changed although no edit touched it"
    return None


def _cut_token(old: _Text, body: Sequence[ast.stmt], spans: Sequence[Span]) -> Optional[str]:
    """Tokenizes only from the start of the innermost statement (or gap between
    statements) holding each edit boundary to the boundary's line."""
    for point in sorted({offset for start, end, _ in spans for offset in (start, end)}):
        first_row = _region_start(old, body, point)
        if first_row is None:
            continue
        row = old.row_of(point)
        if any(start < point - old.starts[first_row - 1] < end for start, end in _atomic_tokens(old, first_row, row)):
            return f"an edit at line {row} cuts a token in two"
    return None


def _region_start(old: _Text, body: Sequence[ast.stmt], point: int) -> Optional[int]:
    """The first row of the innermost statement holding `point`, or, in a compound
    statement outside its children, the row after the child before it (an `else:`
    line); None outside every statement (blank lines and comments)."""
    region = None
    statements = list(body)
    while statements:
        inside = None
        previous_end_row = None
        for statement in statements:
            start, end = old.extent(statement)
            if start <= point < end:
                inside = statement
                break
            if end <= point:
                previous_end_row = statement.end_lineno
        if inside is None:
            if region is not None and previous_end_row is not None:
                return previous_end_row + 1
            return region
        region = _first_row(inside)
        statements = list(_children(inside))
    return region


def _atomic_tokens(old: _Text, first_row: int, last_row: int) -> List[Tuple[int, int]]:
    """Names, numbers and operators longer than one character in rows first..last, as
    offsets from the start of the first row."""
    lines = old.lines[first_row - 1 : last_row]
    text = "".join(lines)
    starts = line_starts(lines)
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            (start_row, start_col), (end_row, end_col) = token.start, token.end
            if token.type in _ATOMIC and start_row == end_row and end_col - start_col > 1:
                found.append((starts[start_row - 1] + start_col, starts[end_row - 1] + end_col))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # the region ends mid-statement (at the boundary's line): what was read counts
    return found
