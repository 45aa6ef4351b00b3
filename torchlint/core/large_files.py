"""Files too long to parse whole: linted through the top-level statements rules can need.

CPython's ast of a file costs about 2.7 KB per statement and LibCST's about 12 KB, so a
generated module of 1,000,000 one-line statements would need tens of GiB. A text with
more than `LARGE_STATEMENTS` top-level statements is therefore parsed in chunks of
statements (a chunk cut inside a string or bracket does not parse and is grown until it
does), and only these statements are kept, rows whole and in order: those that hold a
trigger of a rule that may fire where a name could begin (`lu` in `x.lu(`, not in
`value_1`), imports, own-line `# torchlint: noqa` comments, and
the statements that bind a name the kept ones read (two rounds). The rules run on that
text as on any file; their findings are moved back to the file's rows.

A file whose code (`code_size`) is over `LARGE_CODE` is cut the same way, however few
its statements (a 6 MB dict literal beside a training loop): a chunk grows until it holds
the statement whole, which the stdlib ast reads at a fiftieth of LibCST's cost. Where the
statements kept still hold more code than that (a list of 200,000 `x.item()` calls), one
TL000 finding says so.

What such a file gives up: fixes (a fix is proven on the whole text, which is what does
not fit) and its part in the project pass (its facts would name the reduced text's
rows). A text beyond `MAX_LINES` lines or `MAX_CHARS` characters is not linted: one
TL000 finding says so. Measured by bench/large_files.py.
"""

from __future__ import annotations

import ast
import bisect
import builtins
import re
from dataclasses import dataclass
from typing import Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from torchlint.core.source import split_lines

LARGE_STATEMENTS = 50_000
# LibCST takes about 1.3 KB and 60 us per character of code (a 2.8 MB list literal: 3.7 GB, 167 s)
LARGE_CODE = 1024 * 1024
MAX_LINES = 2_000_000
MAX_CHARS = 32 * 1024 * 1024
CHUNK_LINES = 4_000
CLOSURE_ROUNDS = 2

# a line that may start a top-level statement: not indented, not a comment, a closing
# bracket or a clause that continues a compound statement (`_LINE_MAY_START`: where a
# line starts in a text, after \n, \r\n or a lone \r)
_NOT_A_START = r"(?![ \t\f\r\n#)\]}]|(?:else|elif|except|finally)\b)"
_MAY_START = re.compile(_NOT_A_START)
_LINE_MAY_START = re.compile(r"(?:\A|(?<=\n)|(?<=\r)(?!\n))" + _NOT_A_START)
_FILE_NOQA_LINE = re.compile(r"^[ \t]*#[ \t]*torchlint:[ \t]*noqa", re.IGNORECASE | re.MULTILINE)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BINDERS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BUILTINS = frozenset(dir(builtins)) | {"__name__", "__file__", "__doc__", "__spec__", "__path__"}


def beyond_bound(text: str) -> Optional[str]:
    """Why the text is not linted at all, or None."""
    if len(text) > MAX_CHARS:
        return f"the file has {len(text):,} characters; torchlint lints files of up to {MAX_CHARS:,}"
    lines = _line_ends(text) + 1
    if lines > MAX_LINES:
        return f"the file has {lines:,} lines; torchlint lints files of up to {MAX_LINES:,}"
    return None


def is_large(text: str) -> bool:
    """More lines that may start a top-level statement than a whole parse should hold, or
    more code (`code_size`) than LibCST should parse at once, in statements of any number."""
    if len(text) > LARGE_CODE and code_size(text) > LARGE_CODE:
        return True
    if _line_ends(text) < LARGE_STATEMENTS:
        return False
    starts = 0
    for _ in _LINE_MAY_START.finditer(text):
        starts += 1
        if starts > LARGE_STATEMENTS:
            return True
    return False


def code_size(text: str) -> int:
    """The characters of `text` LibCST would make nodes of: all but blanks and the runs of
    numbers in data displays, which the parse elides (`torchlint.core.parse.elide_data`)."""
    from torchlint.core.parse import elide_data

    elided = elide_data(text)
    return len(elided) - elided.count(" ")


def _line_ends(text: str) -> int:
    """At least the number of line ends (exact unless a text mixes lone \r with \n)."""
    return text.count("\n") or text.count("\r")


@dataclass(frozen=True)
class Reduced:
    """The rows of the file that kept statements span (`text`), the file's row of each
    (`rows[i]` for row i + 1), and how many top-level statements they hold."""

    text: str
    rows: List[int]
    statements: int

    def file_row(self, row: int) -> int:
        if row <= 0:
            return row
        if row <= len(self.rows):
            return self.rows[row - 1]
        return (self.rows[-1] if self.rows else 0) + row - len(self.rows)


def reduce(text: str, needles: Iterable[str]) -> Reduced:
    """The statements of `text` worth linting (see the module's doc). Raises SyntaxError,
    with the file's row, for text that does not parse. No chunk's ast outlives its scan."""
    lines = split_lines(text)
    needles = sorted({needle for needle in needles if needle})
    kept: Set[int] = set()
    read: Set[str] = set()
    bound: Set[str] = set()
    statements = 0
    kept_chars = 0  # once over LARGE_CODE the file is not linted: no names are needed then
    chunks: List[Tuple[int, int]] = []
    for first, stop, tree, chunk_text in _chunks(lines):
        chunks.append((first, stop))
        pattern = _needle_pattern(_present(needles, chunk_text))
        for statement in tree.body:
            is_import = isinstance(statement, (ast.Import, ast.ImportFrom))
            if not is_import and pattern is None:
                continue
            start, end = _span(statement, first)
            if is_import or _holds(lines, start, end, pattern):
                kept.update(range(start, end + 1))
                kept_chars += sum(len(lines[row - 1]) for row in range(start, end + 1))
                if kept_chars <= LARGE_CODE:
                    read |= _names_read(statement)
                    bound |= _binds(statement)
                statements += 1
    if kept_chars > LARGE_CODE:
        rows = sorted(kept)
        return Reduced("".join(lines[row - 1] for row in rows), rows, statements)
    for _ in range(CLOSURE_ROUNDS):
        wanted = read - bound - _BUILTINS
        if not wanted:
            break
        read = set()
        for first, stop in chunks:
            for statement in ast.parse("".join(lines[first - 1 : stop - 1])).body:
                start, end = _span(statement, first)
                if start not in kept and _binds(statement) & wanted:
                    kept.update(range(start, end + 1))
                    read |= _names_read(statement)
                    bound |= _binds(statement)
                    statements += 1
    noqa_comments = list(_FILE_NOQA_LINE.finditer(text)) if "torchlint" in text else []
    if noqa_comments:
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line))
        kept.update(_row_at(starts, match.start()) for match in noqa_comments)
    rows = sorted(kept)
    return Reduced("".join(lines[row - 1] for row in rows), rows, statements)


def _chunks(lines: Sequence[str]) -> Iterator[Tuple[int, int, ast.Module, str]]:
    """(first row, row after the last, ast, text) of consecutive runs of about CHUNK_LINES rows that parse, cut
    at rows that may start a statement; a run that does not parse is doubled until it
    does (a cut inside a string or bracket), or raises the file's SyntaxError at EOF."""
    cuts = [row for row, line in enumerate(lines, start=1) if _MAY_START.match(line)] + [len(lines) + 1]
    at = 0  # index in cuts of the chunk's first row
    while cuts[at] <= len(lines):
        size = CHUNK_LINES
        while True:
            end = _cut_after(cuts, at, size)
            first, stop = cuts[at], cuts[end]
            chunk_text = "".join(lines[first - 1 : stop - 1])
            try:
                tree = ast.parse(chunk_text)
            except SyntaxError as error:
                if stop > len(lines):  # the rest of the file does not parse: its error
                    if error.lineno is not None:
                        error.lineno += first - 1
                    raise error from None
                size *= 2
                continue
            yield first, stop, tree, chunk_text
            at = end
            break


def _cut_after(cuts: List[int], at: int, size: int) -> int:
    """The index of the first cut at least `size` rows after cuts[at] (the last if none)."""
    target = cuts[at] + size
    low, high = at + 1, len(cuts) - 1
    while low < high:
        middle = (low + high) // 2
        if cuts[middle] < target:
            low = middle + 1
        else:
            high = middle
    return low


def _span(statement: ast.stmt, first: int) -> Tuple[int, int]:
    decorators = getattr(statement, "decorator_list", None)
    start = min(d.lineno for d in decorators) if decorators else statement.lineno
    return start + first - 1, (statement.end_lineno or statement.lineno) + first - 1


def _present(needles: Sequence[str], text: str) -> List[str]:
    """The needles that occur in `text` where a name could begin. A regex of hundreds of
    alternatives is slow on megabytes; the text's names, sorted, answer a name-like
    needle (or its leading name) by one bisection, and only a hit is searched for."""
    words = sorted(set(_WORD.findall(text)))
    found = []
    for needle in needles:
        head = _WORD.match(needle)
        if head is not None:
            at = bisect.bisect_left(words, head.group())
            if at == len(words) or not words[at].startswith(head.group()):
                continue
        if needle in text:
            found.append(needle)
    return found


def _needle_pattern(needles: Iterable[str]) -> Optional["re.Pattern[str]"]:
    """The triggers as a regex that matches one only where a name could begin: `lu`
    (`torch.lu`) in `x.lu(`, not in `value_1`, which a plain substring test would take."""
    parts = sorted({(r"(?<![\w])" if needle[:1].isidentifier() else "") + re.escape(needle) for needle in needles if needle})
    return re.compile("|".join(parts)) if parts else None


def _holds(lines: Sequence[str], start: int, end: int, pattern) -> bool:
    text = lines[start - 1] if start == end else "".join(lines[start - 1 : end])
    return pattern.search(text) is not None


def _names_read(statement: ast.stmt) -> Set[str]:
    """The names a statement reads and does not bind itself (its parameters, its locals)."""
    loaded, stored = set(), set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else stored).add(node.id)
        elif isinstance(node, ast.arg):
            stored.add(node.arg)
    return loaded - stored


def _binds(statement: ast.stmt) -> Set[str]:
    if isinstance(statement, _BINDERS):
        return {statement.name}
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in statement.names}
    if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return {node.id for target in targets for node in ast.walk(target) if isinstance(node, ast.Name)}
    return set()


def _row_at(starts: List[int], offset: int) -> int:
    return bisect.bisect_right(starts, offset)
