"""A version's findings at once after an edit inside top-level definitions: a lint of the
whole text focused on the edited definitions, or on the one statement of a class's body
(a method, its docstring) the edit lies in (`engine.focused`: LibCST parses only those,
with the module's other statements; what reaches them is read from the stdlib ast of the
whole text), the findings elsewhere carried over from the version before.

A finding outside the edited definitions can depend on them (a training loop elsewhere
that reaches a method edited here), and one inside them on a definition LibCST did not
parse; so the findings given here are shown at once and a complete lint of the same text follows
once typing pauses (`OpenDocuments.refresh`): a difference lasts until then.

It applies only where every difference between the two versions lies inside top-level
`def`s and `class`es that keep their kind and name, the other statements unchanged (the
findings below an edit that added or removed lines move with their rows, unless one names a
row in its message), in files of ordinary size with no file-wide `noqa` in either version.

Cost: a comparison of the two texts in C, a stdlib-ast parse of the edited class member or
definition alone (of the whole text where the edit added or removed lines or spans
statements), the stdlib-ast facts of the whole text, and a LibCST parse and traversal of
what is kept.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass, field, replace
from typing import FrozenSet, List, Optional, Sequence, Tuple

from torchlint.analysis.definition_memo import DefinitionMemo
from torchlint.core import large_files
from torchlint.core.diagnostics import Diagnostic, Location
from torchlint.core.noqa import file_exemption
from torchlint.core.partial_parse import ALWAYS_KEPT_METHODS, DEFINITIONS, statement_span, statement_spans
from torchlint.core.source import split_lines
from torchlint.engine import lint_text
from torchlint.integrations.server.reuse import differing_lines, rows_in_strings

# how findings name a row of the file in their messages ("(line 35)", "at model.py:22")
_NAMED_ROW = re.compile(r"\bline \d|\.pyi?:\d")


@dataclass(frozen=True)
class Outline:
    """A text's top-level statements: the tree, and each statement's (first row, last row)
    and (start, end) offsets in the text, from its first decorator on; the rows inside
    its strings (`reuse.string_rows`); and what the analyses of its lint found of the
    definitions in the tree (`memo`, which the next version's lint reads)."""

    text: str
    tree: ast.Module
    spans: Tuple[Tuple[int, int], ...]
    offsets: Tuple[Tuple[int, int], ...]
    strings: FrozenSet[int]
    memo: DefinitionMemo = field(default_factory=DefinitionMemo, compare=False)

    def source(self, index: int) -> str:
        start, end = self.offsets[index]
        return self.text[start:end]


@dataclass(frozen=True)
class Edit:
    """What changed from one outline to the next: the new outline, the indexes of the
    top-level statements that differ, the rows every difference lies in when the edit
    kept the rows (None where the whole text was compared), and the statement of a class's
    body they lie in, if they do (the only part of the class parsed anew)."""

    after: Outline
    changed: List[int]
    rows: Optional[Tuple[int, int]] = None
    member: Optional[ast.stmt] = None


def outline(text: str) -> Optional[Outline]:
    """The text's outline; None if it does not parse. Cost: a parse and a walk of the whole text."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    starts = [0]
    for line in split_lines(text):
        starts.append(starts[-1] + len(line))
    spans = tuple(statement_spans(tree))
    offsets = tuple((starts[first - 1], starts[last]) for first, last in spans)
    return Outline(text, tree, spans, offsets, rows_in_strings(tree))


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
    definition alone (`_reparsed`): the rest of the text is the same, and a definition that
    parses alone closes every bracket, string and block it opens, so the module is the same
    statements with this one in place. None where that does not hold (then the whole text
    is parsed)."""
    first, old_end, new_end = differing_lines(before.text, text)
    growth = len(text) - len(before.text)
    if before.text.count("\n", first, old_end) != text.count("\n", first, new_end):
        return None
    index = next(
        (i for i, (start, end) in enumerate(before.offsets) if start <= first and old_end <= end), None
    )
    if index is None:
        return None
    first_row = text.count("\n", 0, first) + 1
    rows = (first_row, first_row + text.count("\n", first, new_end) - (1 if text.endswith("\n", 0, new_end) else 0))
    start, end = before.offsets[index]
    reparsed = _reparsed(before.tree.body[index], before.spans[index], text[start : end + growth], rows)
    if reparsed is None:
        return None
    statement, part = reparsed
    body = list(before.tree.body)
    body[index] = statement
    offsets = before.offsets[:index] + ((start, end + growth),) + tuple(
        (later_start + growth, later_end + growth) for later_start, later_end in before.offsets[index + 1 :]
    )
    after = Outline(
        text, ast.Module(body=body, type_ignores=[]), before.spans, offsets, _strings(before, part), before.memo.following()
    )
    return Edit(after, [index], rows, part if part is not statement else None)


def _strings(before: Outline, part: ast.stmt) -> FrozenSet[int]:
    """The rows inside strings once `part` is parsed anew: those of `before` outside it (a
    string never spans two statements) and its own."""
    first, last = statement_span(part)
    return frozenset(row for row in before.strings if not first <= row <= last) | rows_in_strings(part)


def _reparsed(
    old: ast.stmt, span: Tuple[int, int], source: str, rows: Tuple[int, int]
) -> Optional[Tuple[ast.stmt, ast.stmt]]:
    """The top-level statement `old` (at rows `span`) with its new `source`, every difference
    in `rows`, and the part of it parsed anew: in a class, only the statement of its body
    the rows lie in (a method, the docstring), the others kept; else the whole statement.
    None if that does not parse to a definition of the same kind, name and rows. Cost: a
    parse of what is parsed (its rows placed by leading empty rows, so nothing walks it to
    number them)."""
    if isinstance(old, ast.ClassDef):
        spans = [(i, statement_span(child)) for i, child in enumerate(old.body)]
        around = next(((i, (first, last)) for i, (first, last) in spans if first <= rows[0] <= rows[1] <= last), None)
        if around is not None:
            index, (first, last) = around
            member_source = "".join(split_lines(source)[first - span[0] : last - span[0] + 1])
            member = _parsed_at("class _:\n" + member_source, first - 1, old.body[index], (first, last), in_class=True)
            if member is None:
                return None
            klass = copy.copy(old)
            klass.body = old.body[:index] + [member] + old.body[index + 1 :]
            return klass, member
    statement = _parsed_at(source, span[0], old, span)
    return None if statement is None else (statement, statement)


def _parsed_at(
    source: str, row: int, old: ast.stmt, span: Tuple[int, int], in_class: bool = False
) -> Optional[ast.stmt]:
    """The one statement `source` holds, parsed as if it began at `row` (`in_class`: the
    one statement of the class `source` opens, a class member given a class to parse in),
    if it is a definition (`in_class`: a statement) of `old`'s kind and name at `old`'s
    `span`; else None."""
    try:
        parsed = ast.parse("\n" * (row - 1) + source).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(parsed) != 1:
        return None
    statement = parsed[0]
    if in_class:
        if len(statement.body) != 1:
            return None
        statement = statement.body[0]
    if not (_same_member if in_class else _same_definition)(old, statement) or statement_span(statement) != span:
        return None
    return statement


def _same_definition(old: ast.stmt, new: ast.stmt) -> bool:
    return isinstance(new, DEFINITIONS) and _same_member(old, new)


def _same_member(old: ast.stmt, new: ast.stmt) -> bool:
    """The same kind of statement and, for a definition, the same name."""
    return type(old) is type(new) and getattr(old, "name", None) == getattr(new, "name", None)


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
    `before` (the top-level definitions, or the one statement of a class every difference
    lies in) from a lint focused on it (`engine.focused`), the others `found` in `before`. None
    where this does not apply (see the module doc)."""
    after, changed = edit.after, edit.changed
    if large_files.is_large(after.text) or any(file_exemption(after.text)) or any(file_exemption(before.text)):
        return None  # a file-wide noqa in either version hides findings of the other's statements
    member = edit.member
    # a method the analyses of its class read (`forward`) is linted with the class
    if member is not None and getattr(member, "name", None) not in ALWAYS_KEPT_METHODS:
        old_spans = new_spans = [statement_span(member)]
    else:
        old_spans = [before.spans[index] for index in changed]
        new_spans = [after.spans[index] for index in changed]
    linted = lint_text(after.text, display, config, rules, tree=after.tree, focus=new_spans, memo=after.memo)
    kept = [d for d in linted.diagnostics if _within(d, new_spans)]
    carried = [d for d in found if not _touches(d, old_spans)]
    moved = any(old != new for old, new in zip(old_spans, new_spans))
    if moved and any(_NAMED_ROW.search(d.message) for d in carried):
        return None  # the edit added or removed lines: a row a message names ("line 35") may have moved
    carried = [_moved(d, old_spans, new_spans) for d in carried]
    return sorted(kept + [replace(d, fix=None) for d in carried], key=lambda d: d.sort_key)


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
