"""The LibCST parse of a file: on text made to mean to LibCST what it means to CPython,
on a stack deep enough for any nesting CPython accepts.

LibCST disagrees with CPython on one thing positions depend on: CPython resets the
indentation count at a form feed in a line's leading whitespace, while LibCST either
drops that whitespace from its tree (its positions then shift left) or rejects valid
code ("no matching outer block for dedent"). LibCST is therefore given the text with
each such line's leading whitespace up to its last form feed removed, which means the
same to CPython, and positions are shifted back by a per-row column offset.

LibCST checks every node it builds (`CSTNode.__post_init__` calls `_validate`), a fifth
of a parse; a parser's nodes are valid by construction, and only code CPython accepted
reaches it, so `parse_module` parses with that check off (nodes built after, by a fix,
are still checked).

LibCST's parser, code generator and metadata recurse once per nesting level (an `elif`
chain, nested brackets, a long `+` chain), so the LibCST phase runs in a thread with a
large stack and a raised recursion limit. Only code that CPython parsed reaches it,
and CPython bounds nesting, so the stack bounds it too.
"""

from __future__ import annotations

import io
import re
import sys
import threading
import tokenize
from dataclasses import dataclass, field
from typing import Callable, Dict, Set, TypeVar

from torchlint.core.lazy import cst
from torchlint.core.source import split_lines

FORM_FEED = "\x0c"
_FORM_FEED_INDENT = re.compile(r"[ \t\x0c]*\x0c")
_STRING_TOKENS = {tokenize.STRING} | (
    {tokenize.FSTRING_MIDDLE} if hasattr(tokenize, "FSTRING_MIDDLE") else set()
)

# CPython stops at ~5,000 nested `elif`s (RecursionError during compilation); LibCST
# at that depth needs a few hundred MiB of stack. Only touched pages count as memory.
DEEP_STACK_BYTES = 1024 * 1024 * 1024
DEEP_RECURSION_LIMIT = 1_000_000


# A run of at least this many numbers in a comma-separated display is data: no rule
# looks inside it, and LibCST's cost on it is superlinear in memory (a 5 MB list of
# floats: 45 s and 2 GiB to parse). Texts below the size never hold one worth eliding.
DATA_RUN_MIN = 256
DATA_TEXT_MIN = 100_000
_NUMBER = r"[-+]?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
# at most DATA_RUN_CHUNK elements per match: the regex engine's memory grows with the
# repetitions of one match; a longer run is blanked chunk by chunk
DATA_RUN_CHUNK = 4096
_DATA_RUN = re.compile(
    rf"(?P<keep>[\[(,{{]\s*{_NUMBER}\s*,)(?P<drop>(?:\s*{_NUMBER}\s*,){{{DATA_RUN_MIN},{DATA_RUN_CHUNK}}})"
)
_NOT_A_LINE_END = re.compile(r"[^\r\n]")


def elide_data(text: str) -> str:
    """The text with long runs of numbers in displays (`[0.1, 0.2, ...]`) blanked out,
    the first number and the line ends kept: every other character keeps its row and
    column, and the text means the same to every rule. Only valid number tokens each
    followed by a comma are blanked, so no syntax error is hidden."""
    if len(text) < DATA_TEXT_MIN:
        return text
    return _DATA_RUN.sub(lambda match: match.group("keep") + _NOT_A_LINE_END.sub(" ", match.group("drop")), text)


@dataclass(frozen=True)
class CstSource:
    """The text LibCST parses, and what to add to its columns, by 1-based row, to get
    columns in the file's own text."""

    text: str
    column_shifts: Dict[int, int] = field(default_factory=dict)


def cst_source(text: str) -> CstSource:
    """The file's text as LibCST should see it (see the module doc)."""
    if FORM_FEED not in text:
        return CstSource(text)
    inside_strings = _rows_inside_strings(text)
    if inside_strings is None:  # the tokenizer failed: the file does not parse anyway
        return CstSource(text)
    lines = split_lines(text)
    shifts: Dict[int, int] = {}
    for row, line in enumerate(lines, 1):
        if FORM_FEED not in line or row in inside_strings:
            continue
        prefix = _FORM_FEED_INDENT.match(line)
        if prefix is not None:
            shifts[row] = prefix.end()
            lines[row - 1] = line[prefix.end() :]
    return CstSource("".join(lines), shifts)


def _rows_inside_strings(text: str):
    """Rows that continue a multi-line string: their leading whitespace is string content."""
    rows: Set[int] = set()
    try:
        # newline=None: lone "\r" ends a line, as it does for CPython and split_lines
        for token in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            if token.type in _STRING_TOKENS and token.end[0] > token.start[0]:
                rows.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        return None
    return rows


def parse_module(text: str):
    """`cst.parse_module(text)` without LibCST's check of each node it builds (see the module
    doc): for text CPython has parsed. Callers parse under `in_deep_stack`, one at a time."""
    from libcst._nodes.base import CSTNode  # where the check is; no public switch exists

    checked = CSTNode.__dict__["__post_init__"]
    setattr(CSTNode, "__post_init__", _unchecked)
    try:
        return cst.parse_module(text)
    finally:
        setattr(CSTNode, "__post_init__", checked)


def _unchecked(node) -> None:
    """A node's `__post_init__` while `parse_module` runs."""


Result = TypeVar("Result")


def in_deep_stack(function: Callable[[], Result]) -> Result:
    """`function()` run in a thread with a large stack and a raised recursion limit;
    its exception, if any, is raised here."""
    outcome: list = []

    def target() -> None:
        try:
            outcome.append((True, function()))
        except BaseException as error:  # handed to the caller's thread
            outcome.append((False, error))

    with _DEEP_LOCK:
        old_limit = sys.getrecursionlimit()
        old_stack = threading.stack_size()
        try:
            threading.stack_size(DEEP_STACK_BYTES)
            thread = threading.Thread(target=target, name="torchlint-deep")
            threading.stack_size(old_stack)
            sys.setrecursionlimit(max(old_limit, DEEP_RECURSION_LIMIT))
            thread.start()
            thread.join()
        finally:
            sys.setrecursionlimit(old_limit)
    ok, value = outcome[0]
    if ok:
        return value
    raise value


# The recursion limit is per interpreter: two deep runs must not restore it under each other.
_DEEP_LOCK = threading.Lock()
