"""Apply fixes: non-overlapping text edits, re-lint, repeat until stable; write atomically."""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

from torchlint.ftypes import Applicability, FileResult, Fix, Location
from torchlint.source import split_lines

MAX_ITERATIONS = 10


def is_applicable(fix: Optional[Fix], unsafe: bool) -> bool:
    if fix is None:
        return False
    if fix.applicability is Applicability.SAFE:
        return True
    return unsafe and fix.applicability is Applicability.UNSAFE


def _offsets(text: str) -> List[int]:
    starts = [0]
    for line in split_lines(text):
        starts.append(starts[-1] + len(line))
    return starts


def _offset(starts: Sequence[int], location: Location) -> int:
    row = min(max(location.row, 1), len(starts))
    return starts[row - 1] + location.column - 1


def apply_fixes(text: str, fixes: Sequence[Tuple[str, Fix]]) -> Tuple[str, Counter, List[int]]:
    """Apply the fixes whose edits touch nothing an earlier fix touched.

    Returns the new text, the applied fixes counted by code, and their indices."""
    starts = _offsets(text)
    taken: List[Tuple[int, int]] = []
    accepted: List[Tuple[int, int, str]] = []
    applied: Counter = Counter()
    indices: List[int] = []
    for index, (code, fix) in enumerate(fixes):
        spans = [(_offset(starts, e.start), _offset(starts, e.end), e.content) for e in fix.edits]
        if any(_conflicts(span[:2], other) for span in spans for other in taken):
            continue
        taken.extend(span[:2] for span in spans)
        accepted.extend(spans)
        applied[code] += 1
        indices.append(index)
    for start, end, content in sorted(accepted, key=lambda span: span[:2], reverse=True):
        text = text[:start] + content + text[end:]
    return text, applied, indices


def _conflicts(a: Tuple[int, int], b: Tuple[int, int]) -> bool:
    return a[0] == b[0] or max(a[0], b[0]) < min(a[1], b[1])


@dataclass
class FixOutcome:
    text: str
    result: FileResult
    applied: Counter = field(default_factory=Counter)
    error: Optional[str] = None

    @property
    def changed(self) -> bool:
        return sum(self.applied.values()) > 0


def fix_text(text: str, lint: Callable[[str], FileResult], unsafe: bool) -> FixOutcome:
    """Fix until nothing applicable is left (bounded); the result must re-parse."""
    original = text
    applied: Counter = Counter()
    result = lint(text)
    for _ in range(MAX_ITERATIONS):
        fixes = [(d.code, d.fix) for d in result.diagnostics if is_applicable(d.fix, unsafe)]
        if not fixes:
            break
        text, round_applied, _ = apply_fixes(text, fixes)
        applied.update(round_applied)
        result = lint(text)
    if applied and not parses(text):
        result = lint(original)
        message = f"{result.path}: the fixes produced code that does not parse; file left unchanged"
        result.errors.append(message)
        return FixOutcome(original, result, Counter(), message)
    return FixOutcome(text, result, applied)


def parses(text: str) -> bool:
    import ast

    from torchlint.lazy import cst

    try:
        ast.parse(text)
        cst.parse_module(text)
    except Exception:
        return False
    return True


def write_atomic(path: Path, data: bytes) -> None:
    """Replace the file's bytes in one rename, keeping its permission bits."""
    mode = os.stat(path).st_mode & 0o7777
    directory = path.parent
    handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "wb") as temp:
            temp.write(data)
        os.chmod(temp_name, mode)
        os.replace(temp_name, path)
    except BaseException:
        if os.path.exists(temp_name):
            os.unlink(temp_name)
        raise


def unified_diff(path: str, before: str, after: str) -> str:
    import difflib

    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
