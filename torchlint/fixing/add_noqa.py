"""`--add-noqa`: a fixer that writes `# noqa: TLxxx` comments instead of code (ruff's flag).

Each finding's directive goes on its `noqa_row`, the last line of its logical line, which
is past the end of any multi-line string or bracket. An existing `# noqa: X` there gains
the new codes; a bare `# noqa` already covers everything; any other comment is kept and
the directive follows it, as ruff does.
"""

from __future__ import annotations

import ast
import tokenize
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Sequence, Set

from torchlint.core.diagnostics import SYNTAX_CODE, Diagnostic
from torchlint.core.noqa import NOQA, code_matches, tokens
from torchlint.core.bounded_read import ReadRefused
from torchlint.core.source import DecodeError, decode_source, read_source, split_lines
from torchlint.fixing.write import ChangedDuringRun, Snapshot, write_fixed


@dataclass
class NoqaOutcome:
    added: int = 0  # lines that gained a directive
    errors: List[str] = field(default_factory=list)


def add_noqa(diagnostics: Sequence[Diagnostic], files: Mapping[str, Path], linted: Mapping[str, str]) -> NoqaOutcome:
    """Add directives for `diagnostics` to the files they are in (`files`: display name ->
    path; `linted`: display name -> the text that was linted). A file that no longer holds
    that text is left untouched."""
    outcome = NoqaOutcome()
    wanted: Dict[str, Dict[int, Set[str]]] = defaultdict(lambda: defaultdict(set))
    for diagnostic in diagnostics:
        if diagnostic.noqa_row is not None and diagnostic.code != SYNTAX_CODE:
            wanted[diagnostic.filename][diagnostic.noqa_row].add(diagnostic.code)
    for display, rows in wanted.items():
        path, text = files.get(display), linted.get(display)
        if path is None or text is None:
            continue
        try:
            outcome.added += _add_to_file(path, rows, text)
        except ChangedDuringRun:
            outcome.errors.append(f"{display}: changed during the run; no noqa directives added")
        except (OSError, ReadRefused, DecodeError, SyntaxError, ValueError, tokenize.TokenError) as problem:
            outcome.errors.append(f"{display}: cannot add noqa directives: {problem}")
    return outcome


def _add_to_file(path: Path, rows: Mapping[int, Set[str]], linted: str) -> int:
    data = read_source(path)
    source = decode_source(data)
    if source.text != linted:
        raise ChangedDuringRun(str(path))
    lines = split_lines(source.text)
    changed = lines_with_directives(source.text, rows)
    if not changed:
        return 0
    for row, body in changed.items():
        line = lines[row - 1]
        lines[row - 1] = body + line[len(line.rstrip("\r\n")):]
    text = "".join(lines)
    if ast.dump(ast.parse(text)) != ast.dump(ast.parse(source.text)):
        raise ValueError("adding comments would change the code")  # never: comments are not code
    write_fixed(path, source.encode(text), Snapshot.of(data))
    return len(changed)


def lines_with_directives(text: str, rows: Mapping[int, Set[str]]) -> Dict[int, str]:
    """The new text (without its line ending) of each line of `text` that gains a
    directive for the codes `rows` wants on it; lines already covered are left out.
    Raises tokenize.TokenError (or SyntaxError) for text that does not tokenize."""
    lines = split_lines(text)
    comments = _comments_by_row(text)
    changed = {}
    for row, codes in rows.items():
        if not 1 <= row <= len(lines):
            continue
        body = lines[row - 1].rstrip("\r\n")
        new_body = _with_directive(body, comments.get(row), sorted(codes))
        if new_body != body:
            changed[row] = new_body
    return changed


def _comments_by_row(text: str) -> Dict[int, tokenize.TokenInfo]:
    """The comment token ending each physical line (a `#` inside a string is not one)."""
    comments = {}
    for token in tokens(text):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token
    return comments


def _with_directive(body: str, comment, codes: List[str]) -> str:
    if comment is None:
        return f"{body.rstrip()}  # noqa: {', '.join(codes)}"
    start = comment.start[1]
    text = comment.string
    match = NOQA.search(text)
    if match is None:
        return f"{body.rstrip()}  # noqa: {', '.join(codes)}"
    existing = match.group("codes")
    if existing is None:
        return body  # a bare `# noqa` suppresses every code already
    present = frozenset(code.upper() for code in existing.replace(",", " ").split())
    missing = [code for code in codes if not code_matches(code, present)]
    if not missing:
        return body
    insert_at = start + match.end("codes")
    return f"{body[:insert_at]}, {', '.join(missing)}{body[insert_at:]}"
