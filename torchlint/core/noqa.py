"""Suppression comments, as flake8 and ruff read them.

- `# noqa` / `# noqa: TL001,TL3` anywhere on the logical line (a multi-line statement or
  string counts as one line) suppresses all / the listed codes or prefixes. flake8 reads
  a directive only on the reported row's physical line (or multi-line string), so the
  flake8 plugin applies these rules itself: the CLI, the plugin and the language server
  honour the same places, and `--add-noqa` writes on the logical line's last row.
- `# torchlint: noqa` on a line of its own disables the whole file;
  `# torchlint: noqa: TL001` disables one rule in the file. As ruff does, `# ruff: noqa`
  and flake8's `# flake8: noqa` mean the same (the file's own choice, as a `# noqa` is).
"""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

from torchlint.core.diagnostics import CODE_PREFIX
from torchlint.core.logical_rows import LogicalRows, Rows

# A code is letters then digits, as flake8 reads them: the words after a code list
# (`# noqa: E501 see issue 12`) are free text, not codes
_CODE_LIST = r"[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*"
NOQA = re.compile(rf"#\s*noqa(?::[\s]?(?P<codes>{_CODE_LIST}))?", re.IGNORECASE)
FILE_NOQA = re.compile(
    rf"^[ \t]*#[ \t]*(?:torchlint|ruff|flake8):[ \t]*noqa(?::[ \t]*(?P<codes>{_CODE_LIST}))?",
    re.IGNORECASE | re.MULTILINE,
)
_SPLIT = re.compile(r"[,\s]+")

# None means "every code"
Codes = Optional[FrozenSet[str]]


def _codes(text: Optional[str]) -> Codes:
    if not text:
        return None
    return frozenset(code.upper() for code in _SPLIT.split(text.strip()) if code)


def code_matches(code: str, codes: Codes) -> bool:
    return codes is None or any(code.startswith(prefix) for prefix in codes)


def file_exemption(text: str) -> Tuple[bool, FrozenSet[str]]:
    """(whole file disabled, torchlint's codes disabled for the file).

    Only real comments on a line of their own count: the same words inside a string
    literal (a docstring showing how to disable torchlint) disable nothing."""
    # the substring test and the regex keep the tokenizer off almost every file, and off those
    # whose exemptions are another tool's alone (`# ruff: noqa: N806`)
    if "noqa" not in text.lower() or all(_codes_of_others(match) for match in FILE_NOQA.finditer(text)):
        return False, frozenset()
    disabled = set()
    for comment in _own_line_comments(text):
        match = FILE_NOQA.match(comment)
        if match is None:
            continue
        codes = _codes(match.group("codes"))
        if codes is None:
            return True, frozenset()
        disabled |= {code for code in codes if code.startswith(CODE_PREFIX)}
    return False, frozenset(disabled)


def _codes_of_others(match: re.Match) -> bool:
    """Whether a file exemption names codes, none of them torchlint's (codes are letters then
    digits: only one that starts with `TL` can match a torchlint code)."""
    codes = _codes(match.group("codes"))
    return codes is not None and not any(code.startswith(CODE_PREFIX) for code in codes)


def tokens(text: str) -> Iterator[tokenize.TokenInfo]:
    """The text's tokens, lines ended as CPython ends them: a lone `\r` ends a line too
    (a plain StringIO would make a file with CR-only line endings one line)."""
    return tokenize.generate_tokens(io.StringIO(text, newline=None).readline)


def _own_line_comments(text: str) -> Iterator[str]:
    """The comments that are alone on their line (up to a tokenize error, if any)."""
    try:
        for token in tokens(text):
            if token.type == tokenize.COMMENT and not token.line[: token.start[1]].strip():
                yield token.string
    except (tokenize.TokenError, SyntaxError):
        return


@dataclass
class LineSuppressions:
    """For each row: the last row of its logical line, and the noqa codes of that line."""

    logical_end: Dict[int, int] = field(default_factory=dict)
    noqa: Dict[int, Codes] = field(default_factory=dict)

    def noqa_row(self, row: int) -> int:
        return self.logical_end.get(row, row)

    def suppresses(self, row: int, code: str) -> bool:
        end = self.noqa_row(row)
        if end not in self.noqa:
            return False
        return code_matches(code, self.noqa[end])

    def shifted(self, rows: int) -> "LineSuppressions":
        """The same lines `rows` rows further down."""
        return LineSuppressions(
            {row + rows: end + rows for row, end in self.logical_end.items()},
            {row + rows: codes for row, codes in self.noqa.items()},
        )


class StatementSuppressions:
    """A file's LineSuppressions, tokenized one top-level statement at a time, when a
    finding first asks about a row of it: a logical line, and the `# noqa` that ends
    it, never leave the top-level statement they are in. Given the top-level stdlib-ast
    `statements` (those of `spans`), only the innermost run of whole logical lines
    around the row is tokenized (`torchlint.core.logical_rows`): the statement of a
    method, not the class around it.

    Cost: per row asked about, the run around it is found in O(nesting depth) and
    tokenized once; each top-level statement's text, with no `statements`, once."""

    def __init__(
        self,
        lines: Sequence[str],
        spans: Sequence[Tuple[int, int]],
        memo: Optional[Dict[str, LineSuppressions]] = None,
        statements: Optional[Sequence[ast.stmt]] = None,
    ) -> None:
        self._lines = lines
        # statement text -> its suppressions counted from row 1, kept across the versions
        # of one file (an editor's next version has most statements unchanged)
        self._memo = memo
        self._spans = spans  # (first row, last row) of each top-level statement, in order
        self._firsts = [first for first, _ in spans]
        self._done: Dict[int, LineSuppressions] = {}
        self._statements = statements
        self._runs = None if statements is None else LogicalRows(lines)
        # rows of a run -> its suppressions; None where the tokenizer stopped short of its end
        self._done_runs: Dict[Rows, Optional[LineSuppressions]] = {}

    def noqa_row(self, row: int) -> int:
        return self._around(row).noqa_row(row)

    def suppresses(self, row: int, code: str) -> bool:
        return self._around(row).suppresses(row, code)

    def _around(self, row: int) -> LineSuppressions:
        at = bisect.bisect_right(self._firsts, row) - 1
        if at < 0 or self._spans[at][1] < row:
            return LineSuppressions()
        if self._runs is not None:
            for rows in self._runs.inside(self._statements[at], row):
                found = self._run(rows)
                if found is not None:
                    return found
        if at not in self._done:
            first, last = self._spans[at]
            text = "".join(self._lines[first - 1 : last])
            if self._memo is None:
                self._done[at] = line_suppressions(text, first)
            else:
                found = self._memo.get(text)
                if found is None:
                    found = self._memo[text] = line_suppressions(text)
                self._done[at] = found.shifted(first - 1)
        return self._done[at]


    def _run(self, rows: Rows) -> Optional[LineSuppressions]:
        """A run's suppressions; None if it does not tokenize to its end (a run is whole
        logical lines only as far as the text shows: the statement around it decides then)."""
        if rows not in self._done_runs:
            first, last = rows
            found, complete = _tokenized("".join(self._lines[first - 1 : last]), first)
            self._done_runs[rows] = found if complete else None
        return self._done_runs[rows]


def line_suppressions(text: str, first_row: int = 1) -> LineSuppressions:
    """Tokenize once; map rows to logical lines and gather noqa comments per logical
    line. `first_row`: the row of the file where `text` starts."""
    return _tokenized(text, first_row)[0]


def _tokenized(text: str, first_row: int) -> Tuple[LineSuppressions, bool]:
    """`line_suppressions`, and whether the tokenizer reached the end of the text."""
    complete = True
    result = LineSuppressions()
    comments: List[Tuple[int, str]] = []
    start_row = None
    shift = first_row - 1
    try:
        for token in tokens(text):
            kind = token.type
            if kind == tokenize.COMMENT:
                comments.append((token.start[0] + shift, token.string))
            if kind in (tokenize.NL, tokenize.COMMENT) and start_row is None:
                continue
            if kind in (tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
                continue
            if start_row is None:
                start_row = token.start[0] + shift
            if kind == tokenize.NEWLINE:
                end_row = token.end[0] + shift
                for row in range(start_row, end_row + 1):
                    result.logical_end[row] = end_row
                start_row = None
    except (tokenize.TokenError, SyntaxError, IndentationError):
        complete = False
    for row, comment in comments:
        match = NOQA.search(comment)
        if match is None:
            continue
        end = result.logical_end.get(row, row)
        codes = _codes(match.group("codes"))
        previous = result.noqa.get(end, frozenset())
        if codes is None or previous is None:
            result.noqa[end] = None
        else:
            result.noqa[end] = previous | codes
    return result, complete
