"""A version's findings at once after an edit inside top-level definitions: those
definitions linted alone (with the module's other statements and the definitions they
name and those that name them; the rows of the rest left empty, so that positions stay
the file's), the findings elsewhere carried over from the version before.

A finding outside the edited definitions can depend on them (a training loop elsewhere
that reaches a method edited here), and one inside them on a definition they do not name;
so the findings given here are shown at once and a complete lint of the same text follows
once typing pauses (`OpenDocuments.refresh`): a difference lasts until then.

It applies only where every difference between the two versions lies inside top-level
`def`s and `class`es that keep their kind and name, the other statements unchanged (the
findings below an edit that added or removed lines move with their rows, unless one names a
row in its message), in files of ordinary size with no file-wide `noqa` in either version.

Cost: a comparison of the two texts in C, a stdlib-ast parse of the edited definition alone
(of the whole text where the edit added or removed lines or spans statements), one walk of
the edited class's methods for the names they mention, and a lint of what is kept.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Sequence, Set, Tuple

from torchlint.core import large_files
from torchlint.core.diagnostics import Diagnostic, Location
from torchlint.core.noqa import file_exemption
from torchlint.core.partial_parse import elide_statements, names_none, statement_span, statement_spans
from torchlint.core.source import split_lines
from torchlint.core.walk import ast_nodes
from torchlint.engine import lint_text
from torchlint.integrations.server.reuse import differing_lines

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_ALWAYS_KEPT = ("__init__", "forward")
# how findings name a row of the file in their messages ("(line 35)", "at model.py:22")
_NAMED_ROW = re.compile(r"\bline \d|\.pyi?:\d")


@dataclass(frozen=True)
class Outline:
    """A text's top-level statements: the tree, and each statement's (first row, last row)
    and (start, end) offsets in the text, from its first decorator on."""

    text: str
    tree: ast.Module
    spans: Tuple[Tuple[int, int], ...]
    offsets: Tuple[Tuple[int, int], ...]

    def source(self, index: int) -> str:
        start, end = self.offsets[index]
        return self.text[start:end]


@dataclass(frozen=True)
class Edit:
    """What changed from one outline to the next: the new outline, the indexes of the
    top-level statements that differ, and the rows every difference lies in when the edit
    kept the rows (None where the whole text was compared)."""

    after: Outline
    changed: List[int]
    rows: Optional[Tuple[int, int]] = None


def outline(text: str) -> Optional[Outline]:
    """The text's outline; None if it does not parse. Cost: a parse of the whole text."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    starts = [0]
    for line in split_lines(text):
        starts.append(starts[-1] + len(line))
    spans = tuple(statement_spans(tree))
    return Outline(text, tree, spans, tuple((starts[first - 1], starts[last]) for first, last in spans))


def edited(before: Outline, text: str) -> Optional[Edit]:
    """The outline of `text` and the indexes of the statements that differ from `before`'s:
    by a parse of the changed statement alone where every difference lies inside one
    top-level statement that keeps its rows, else by a parse of the whole text and a
    comparison statement by statement. None if `text` does not parse, or differs elsewhere
    than inside definitions that keep their kind and name."""
    found = _one_statement_edited(before, text)
    if found is not None:
        return found
    after = outline(text)
    if after is None:
        return None
    changed = changed_definitions(before, after)
    return None if changed is None else Edit(after, changed)


def _one_statement_edited(before: Outline, text: str) -> Optional[Edit]:
    """`edited` for an edit inside one definition that keeps its rows, parsing that
    definition alone: the rest of the text is the same, and a definition that parses alone
    closes every bracket, string and block it opens, so the module is the same statements
    with this one in place. None where that does not hold (then the whole text is parsed)."""
    first, old_end, new_end = differing_lines(before.text, text)
    growth = len(text) - len(before.text)
    if before.text.count("\n", first, old_end) != text.count("\n", first, new_end):
        return None
    index = next(
        (i for i, (start, end) in enumerate(before.offsets) if start <= first and old_end <= end), None
    )
    if index is None:
        return None
    old = before.tree.body[index]
    start, end = before.offsets[index]
    try:
        parsed = ast.parse(text[start : end + growth]).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(parsed) != 1 or not _same_definition(old, parsed[0]):
        return None
    statement = ast.increment_lineno(parsed[0], before.spans[index][0] - 1)
    if statement_span(statement) != before.spans[index]:
        return None
    body = list(before.tree.body)
    body[index] = statement
    offsets = before.offsets[:index] + ((start, end + growth),) + tuple(
        (later_start + growth, later_end + growth) for later_start, later_end in before.offsets[index + 1 :]
    )
    first_row = text.count("\n", 0, first) + 1
    rows = (first_row, first_row + text.count("\n", first, new_end) - (1 if text.endswith("\n", 0, new_end) else 0))
    return Edit(Outline(text, ast.Module(body=body, type_ignores=[]), before.spans, offsets), [index], rows)


def _same_definition(old: ast.stmt, new: ast.stmt) -> bool:
    return isinstance(new, _DEFINITIONS) and type(old) is type(new) and old.name == new.name


def changed_definitions(before: Outline, after: Outline) -> Optional[List[int]]:
    """The indexes of the top-level statements that differ, if there are some and all are
    definitions of the same kind and name in both versions and nothing between the
    statements differs; else None."""
    count = len(before.offsets)
    if count != len(after.offsets) or before.text == after.text:
        return None
    changed = [index for index in range(count) if before.source(index) != after.source(index)]
    if not changed or _between(before) != _between(after):
        return None
    if not all(_same_definition(before.tree.body[index], after.tree.body[index]) for index in changed):
        return None
    return changed


def _between(outline: Outline) -> List[str]:
    """The text before, between and after the top-level statements (blank lines, comments)."""
    gaps, previous = [], 0
    for start, end in outline.offsets:
        gaps.append(outline.text[previous:start])
        previous = end
    gaps.append(outline.text[previous:])
    return gaps


def local_findings(
    before: Outline, found: Sequence[Diagnostic], edit: Edit, display: str, config, rules: Sequence[type]
) -> Optional[List[Diagnostic]]:
    """The findings of `edit.after` (without fixes): those in what the edit changed since
    `before` (the top-level definitions, or the one method of a class every difference lies
    in) from a lint of it alone, the others `found` in `before`. None where this does not
    apply (see the module doc)."""
    after, changed = edit.after, edit.changed
    if large_files.is_large(after.text) or any(file_exemption(after.text)) or any(file_exemption(before.text)):
        return None  # a file-wide noqa in either version hides findings of the other's statements
    elided = elide_statements(after.text, after.tree, set(changed) | _users(after, changed))
    method = _edited_method(before, edit)
    if method is not None:
        old_spans = new_spans = [statement_span(method)]
        kept_rows = set(elided.rows if elided is not None else range(1, len(split_lines(after.text)) + 1))
        kept_rows -= _other_methods_rows(after.tree.body[changed[0]], method)
    elif elided is None:
        return None
    else:
        old_spans = [before.spans[index] for index in changed]
        new_spans = [after.spans[index] for index in changed]
        kept_rows = set(elided.rows)
    linted = lint_text(_blanked(after.text, kept_rows), display, config, rules)
    kept = [d for d in linted.diagnostics if _within(d, new_spans)]
    carried = [d for d in found if not _touches(d, old_spans)]
    moved = any(old != new for old, new in zip(old_spans, new_spans))
    if moved and any(_NAMED_ROW.search(d.message) for d in carried):
        return None  # the edit added or removed lines: a row a message names ("line 35") may have moved
    carried = [_moved(d, old_spans, new_spans) for d in carried]
    return sorted(kept + [replace(d, fix=None) for d in carried], key=lambda d: d.sort_key)


def _users(after: Outline, changed: Sequence[int]) -> Set[int]:
    """The top-level definitions that name a changed one (a loop that runs its method, a
    function that builds it): what its findings may depend on besides what it names."""
    names = dict.fromkeys(after.tree.body[index].name for index in changed).keys()
    ascii_names = all(name.isascii() for name in names)
    return {
        index
        for index, statement in enumerate(after.tree.body)
        if isinstance(statement, _DEFINITIONS)
        and index not in changed
        and not names_none(names, ascii_names, after.source(index))
    }


def _edited_method(before: Outline, edit: Edit) -> Optional[ast.AST]:
    """The method of a top-level class every difference of a row-keeping edit lies in, if
    the class's version before has the same method at the same rows; else None."""
    if edit.rows is None or len(edit.changed) != 1:
        return None
    index = edit.changed[0]
    klass, old_klass = edit.after.tree.body[index], before.tree.body[index]
    if not isinstance(klass, ast.ClassDef):
        return None
    first, last = edit.rows
    spans = [(statement_span(m), m) for m in _own_methods(klass)]
    method = next((m for (start, end), m in spans if start <= first and last <= end), None)
    if method is None or method.name in _ALWAYS_KEPT:
        return None  # the state and the forward pass the others read: the whole class
    if not any(m.name == method.name and statement_span(m) == statement_span(method) for m in _own_methods(old_klass)):
        return None
    return method


def _own_methods(klass: ast.ClassDef) -> List[ast.AST]:
    """The methods of the class body itself (`classes.ast_class_methods` also gives those under
    an `if` or `try`, whose block blanking them could leave empty)."""
    return [node for node in klass.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _other_methods_rows(klass: ast.ClassDef, method: ast.AST) -> Set[int]:
    """The rows of the class's methods that the edited one needs nothing of: all but itself,
    `__init__` and `forward` (the state and the forward pass the others read), the methods it
    names, and the methods that name it, and those that name them, and so on (the calls that
    may make it run per step)."""
    methods = {m.name: m for m in _own_methods(klass)}
    named = {name: _names_in(other) & methods.keys() for name, other in methods.items()}
    callers: Dict[str, List[str]] = {}
    for name, called in named.items():
        for callee in called:
            callers.setdefault(callee, []).append(name)
    kept = {method.name, *_ALWAYS_KEPT} | named.get(method.name, set())
    pending = [method.name]
    while pending:
        for name in callers.get(pending.pop(), ()):
            if name not in kept:
                kept.add(name)
                pending.append(name)
    rows: Set[int] = set()
    for name, other in methods.items():
        if name not in kept:
            first, last = statement_span(other)
            rows.update(range(first, last + 1))
    return rows


def _names_in(node: ast.AST) -> Set[str]:
    """The names and attribute names a definition mentions."""
    return {
        inner.id if isinstance(inner, ast.Name) else inner.attr
        for inner in ast_nodes(node)
        if isinstance(inner, (ast.Name, ast.Attribute))
    }


def _blanked(text: str, kept_rows: Sequence[int]) -> str:
    """`text` with every row not kept left empty (its line ending only): the kept code at
    its own rows and columns, so positions, and rows a message names, are the file's."""
    kept = set(kept_rows)
    return "".join(
        line if row in kept else line[len(line.rstrip("\r\n")) :] for row, line in enumerate(split_lines(text), 1)
    )


def _within(diagnostic: Diagnostic, spans: Sequence[Tuple[int, int]]) -> bool:
    row = diagnostic.location.row
    return any(first <= row <= last for first, last in spans)


def _touches(diagnostic: Diagnostic, spans: Sequence[Tuple[int, int]]) -> bool:
    start, end = diagnostic.location.row, diagnostic.end_location.row
    return any(start <= last and end >= first for first, last in spans)


def _moved(diagnostic: Diagnostic, old_spans, new_spans) -> Diagnostic:
    """A finding outside the edited definitions at its row in the new text."""
    row = diagnostic.location.row
    shift = sum((new[1] - new[0]) - (old[1] - old[0]) for old, new in zip(old_spans, new_spans) if old[1] < row)
    if not shift:
        return diagnostic
    noqa_row = diagnostic.noqa_row
    return replace(
        diagnostic,
        location=Location(row + shift, diagnostic.location.column),
        end_location=Location(diagnostic.end_location.row + shift, diagnostic.end_location.column),
        noqa_row=None if noqa_row is None else noqa_row + shift,
    )
