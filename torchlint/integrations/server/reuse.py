"""When a version of a document has findings known without running the per-file pass:
those of the version before it, if the edit only touched comments that no finding can
see; those `torchlint check` cached for the file (the project pass fills that cache before
a file is opened), if the buffer holds the file's text.

The findings of `torchlint check` depend on a comment only through
- `# noqa` and `# torchlint: noqa` (`torchlint.core.noqa`);
- the substring prefilters (rule triggers, gates' text markers), which are necessary
  conditions: passing one because of a comment leads to the analysis of the trees, which
  finds what the code holds;
- fixes (`has_comment`, the comments an import carries when it moves, the layout of the
  edited lines), which the carried findings leave out (`Carried.complete` is False: a
  code action or the project pass lints the text again first);
- the file's size bounds (`torchlint.core.large_files`) and the encoding cookie.
So a version whose lines are those of the last one except own-line comments (not inside a
string, no shebang or encoding cookie, without `noqa` or `torchlint` before or after, on no
finding's first or last row, the line endings unchanged) has the same findings, at the
same rows and columns. tests/test_server_reuse.py compares them with the CLI's.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from pathlib import Path
from typing import FrozenSet, List, Optional, Sequence, Tuple

from torchlint.core import large_files
from torchlint.core.bounded_read import ReadRefused
from torchlint.core.diagnostics import Diagnostic
from torchlint.core.source import DecodeError, decode_source, read_source, split_lines
from torchlint.run.jobs import RunSettings
from torchlint.run.per_file import lookup, run_cache
from torchlint.core.walk import ast_nodes

_DIRECTIVES = ("noqa", "torchlint")
_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=]")  # PEP 263, on one of the first two rows


def comment_rows_changed(before: str, after: str) -> Optional[List[int]]:
    """The rows (from 1) where `after` differs from `before` if each holds an own-line
    comment in both, with the same line ending and no directive; else None. Cost: a
    comparison of the texts in C, then linear in the lines around the difference."""
    first, old_end, new_end = differing_lines(before, after)
    old, new = split_lines(before[first:old_end]), split_lines(after[first:new_end])
    if len(old) != len(new):
        return None
    above = before.count("\n", 0, first)
    changed = []
    for row, (was, now) in enumerate(zip(old, new), above + 1):
        if was == now:
            continue
        if not (_plain_comment(was, row) and _plain_comment(now, row)) or _ending(was) != _ending(now):
            return None
        changed.append(row)
    return changed


def differing_lines(before: str, after: str) -> Tuple[int, int, int]:
    """Where the whole lines holding every difference start (in both texts) and end (in
    each); the whole texts if a lone or \\r\\n line ending could blur a line's bounds."""
    if "\r" in before or "\r" in after:
        return 0, len(before), len(after)
    prefix = _common_length(before, after, lambda text, start, end: text[start:end], str.startswith)
    longest = min(len(before), len(after)) - prefix
    suffix = _common_length(
        before, after, lambda text, start, end: text[len(text) - end : len(text) - start],
        lambda text, part, start: text.endswith(part, 0, len(text) - start), longest,
    )
    first = before.rfind("\n", 0, prefix) + 1
    return first, _line_end(before, len(before) - suffix), _line_end(after, len(after) - suffix)


def _common_length(before: str, after: str, part, holds, bound: Optional[int] = None) -> int:
    """The length of the longest common prefix (or, with `part` and `holds` taking
    offsets from the end, suffix) up to `bound`: a binary search that compares each
    character about twice."""
    low, high = 0, min(len(before), len(after)) if bound is None else bound
    while low < high:
        middle = (low + high + 1) // 2
        if holds(before, part(after, low, middle), low):
            low = middle
        else:
            high = middle - 1
    return low


def _line_end(text: str, offset: int) -> int:
    newline = text.find("\n", offset)
    return len(text) if newline < 0 else newline + 1


def may_carry(before: str, after: str, changed: Sequence[int], diagnostics: Sequence[Diagnostic], strings: FrozenSet[int]) -> bool:
    """Whether `after`, which differs from `before` on the comment rows `changed`, has the
    findings `diagnostics` of `before` (`strings`: the rows inside its strings)."""
    if any(row in strings for row in changed):
        return False
    ends = {row for d in diagnostics for row in (d.location.row, d.end_location.row)}
    if ends.intersection(changed):
        return False
    return large_files.beyond_bound(after) is None and not large_files.is_large(after) and not large_files.is_large(before)


def cached_findings(path: Path, display: str, text: str, settings: RunSettings) -> Optional[List[Diagnostic]]:
    """The findings `torchlint check` cached for the file at `path`, if `text` is its
    decoded content (the cache's key: its bytes, config, rules and torchlint's code);
    else None. Cost: reading the file and its directory's cache entries."""
    if not settings.use_cache:
        return None
    try:
        data = read_source(path)
        if decode_source(data).text != text:
            return None
    except (OSError, ReadRefused, DecodeError):
        return None
    outcome, _, _ = lookup((display, path, data), settings, run_cache(settings))
    return None if outcome is None or not outcome.cached else outcome.diagnostics


def without_fixes(diagnostics: Sequence[Diagnostic]) -> List[Diagnostic]:
    return [replace(d, fix=None) if d.fix is not None else d for d in diagnostics]


def string_rows(text: str) -> FrozenSet[int]:
    """The rows that continue a string begun on a row above (a `#` there is no comment).
    Cost: one parse and walk of the text."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # no row can be shown to be outside a string
        return frozenset(range(1, len(split_lines(text)) + 1))
    return rows_in_strings(tree)


def rows_in_strings(node: ast.AST) -> FrozenSet[int]:
    """`string_rows` of the text a parsed node spans. Cost: one walk of the node."""
    rows = set()
    for inner in ast_nodes(node):
        if isinstance(inner, (ast.Constant, ast.JoinedStr)) and inner.end_lineno and inner.end_lineno > inner.lineno:
            rows.update(range(inner.lineno + 1, inner.end_lineno + 1))
    return frozenset(rows)


def _plain_comment(line: str, row: int) -> bool:
    """An own-line comment that is no directive (nor a shebang or encoding cookie)."""
    if not line.lstrip(" \t\f").startswith("#"):
        return False
    if row <= 2 and (line.startswith("#!") or _COOKIE.match(line)):
        return False
    folded = line.casefold()
    return not any(word in folded for word in _DIRECTIVES)


def _ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :]
