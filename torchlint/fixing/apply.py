"""Apply fixes: non-overlapping text edits, proven by the guard, re-lint, repeat until stable."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable, List, Optional, Sequence, Tuple

from torchlint.fixing import guard as fix_guard
from torchlint.core.diagnostics import Applicability, Diagnostic, FileResult, Fix, Location
from torchlint.core.source import split_lines

MAX_ITERATIONS = 10


def is_applicable(fix: Optional[Fix], unsafe: bool) -> bool:
    if fix is None:
        return False
    if fix.applicability is Applicability.SAFE:
        return True
    return unsafe and fix.applicability is Applicability.UNSAFE


def without_unfixable(diagnostics: List[Diagnostic], config) -> List[Diagnostic]:
    """The findings, those of rules `config` does not let --fix touch (`fixable` /
    `unfixable`) without their fixes: reported, never applied or counted as fixable."""
    if not (config.fixable or config.unfixable):
        return diagnostics
    return [replace(d, fix=None) if d.fix is not None and not config.may_fix(d.code) else d for d in diagnostics]


def line_offsets(text: str) -> List[int]:
    """The offset where each line of `text` starts, and the end of the text."""
    return fix_guard.line_starts(split_lines(text))


def text_offset(starts: Sequence[int], location: Location) -> int:
    """The offset of `location` in the text whose `line_offsets` are `starts` (a row past
    the end is the end of the text)."""
    row = min(max(location.row, 1), len(starts))
    return starts[row - 1] + location.column - 1


Span = Tuple[int, int, str]


def _chosen(text: str, fixes: Sequence[Tuple[str, Fix]]) -> List[Tuple[int, List[Span]]]:
    """The fixes whose edits touch nothing an earlier fix touched, with their spans."""
    starts = line_offsets(text)
    taken: List[Tuple[int, int]] = []
    chosen: List[Tuple[int, List[Span]]] = []
    for index, (_, fix) in enumerate(fixes):
        spans = [(text_offset(starts, e.start), text_offset(starts, e.end), e.content) for e in fix.edits]
        if any(_conflicts(span[:2], other) for span in spans for other in taken):
            continue
        taken.extend(span[:2] for span in spans)
        chosen.append((index, spans))
    return chosen


def _splice(text: str, chosen: Sequence[Tuple[int, List[Span]]]) -> Tuple[str, List[Span]]:
    spans = sorted((span for _, fix_spans in chosen for span in fix_spans), key=lambda span: span[:2])
    pieces = []
    position = 0
    for start, end, content in spans:
        pieces.append(text[position:start])
        pieces.append(content)
        position = max(position, end)
    pieces.append(text[position:])
    return "".join(pieces), spans


@dataclass
class CheckedFixes:
    """Fixes applied to a text and proven by the guard; `dropped` are those that were not."""

    text: str
    applied: Counter
    indices: List[int]
    dropped: List[Tuple[int, str]]
    spans: List[Span] = field(default_factory=list)  # the applied edits, in the old text


def apply_checked(text: str, fixes: Sequence[Tuple[str, Fix]]) -> CheckedFixes:
    """Apply the non-conflicting fixes and prove the result with the guard. If the
    combination fails, the fixes are tried one at a time in order and each one that makes
    the result fail is dropped (with the reason), so that one bad fix costs only itself."""
    chosen = _chosen(text, fixes)
    new_text, spans = _splice(text, chosen)
    if not chosen or fix_guard.check(text, new_text, spans) is None:
        return CheckedFixes(new_text, Counter(fixes[i][0] for i, _ in chosen), [i for i, _ in chosen], [], spans)
    kept: List[Tuple[int, List[Span]]] = []
    dropped: List[Tuple[int, str]] = []
    for candidate in chosen:
        trial_text, trial_spans = _splice(text, kept + [candidate])
        problem = fix_guard.check(text, trial_text, trial_spans)
        if problem is None:
            kept.append(candidate)
        else:
            dropped.append((candidate[0], problem))
    new_text, spans = _splice(text, kept)
    return CheckedFixes(new_text, Counter(fixes[i][0] for i, _ in kept), [i for i, _ in kept], dropped, spans)


def _conflicts(a: Tuple[int, int], b: Tuple[int, int]) -> bool:
    return a[0] == b[0] or max(a[0], b[0]) < min(a[1], b[1])


def dropped_message(diagnostic: Diagnostic, problem: str) -> str:
    """A warning, not an error: the guard did its job, and the finding is still reported."""
    where = f"{diagnostic.filename}:{diagnostic.location.row}:{diagnostic.location.column}"
    return f"{where}: the {diagnostic.code} fix was not applied ({problem}); the finding stays"


@dataclass
class FixOutcome:
    text: str
    result: FileResult
    applied: Counter = field(default_factory=Counter)
    error: Optional[str] = None
    dropped: List[str] = field(default_factory=list)  # why fixes were refused: warnings

    @property
    def changed(self) -> bool:
        return sum(self.applied.values()) > 0


def _fix_key(diagnostic: Diagnostic) -> Tuple:
    """Names a fix across rounds, where its positions may have moved."""
    return diagnostic.code, diagnostic.message, tuple(edit.content for edit in diagnostic.fix.edits)


def fix_text(text: str, lint: Callable[[str], FileResult], unsafe: bool, layout=None) -> FixOutcome:
    """Fix until nothing applicable is left (bounded). Each round is proven by the guard
    (`fix_guard`); a fix that fails it is dropped and said so in `dropped` (its finding
    stays in the result), and the other fixes are kept. The result must re-parse.

    `layout` (a notebook's `notebook.Layout`) decides which fixes may be applied (none
    that spans two cells) and follows the edits."""
    original = text
    start_layout = layout.copy() if layout is not None else None
    applied: Counter = Counter()
    dropped: List[str] = []
    refused: set = set()
    result = lint(text)
    for _ in range(MAX_ITERATIONS):
        candidates = [
            d
            for d in result.diagnostics
            if is_applicable(d.fix, unsafe)
            and _fix_key(d) not in refused
            and (layout is None or layout.admits(text, d.fix))
        ]
        if not candidates:
            break
        checked = apply_checked(text, [(d.code, d.fix) for d in candidates])
        for index, problem in checked.dropped:
            refused.add(_fix_key(candidates[index]))
            dropped.append(dropped_message(candidates[index], problem))
        if not checked.indices:
            break
        text = checked.text
        if layout is not None:
            layout.moved(checked.spans)
        applied.update(checked.applied)
        result = lint(text)
    if applied and not parses(text):
        if layout is not None:
            layout.starts, layout.masks = start_layout.starts, start_layout.masks
        result = lint(original)
        message = f"{result.path}: the fixes produced code that does not parse; file left unchanged"
        return FixOutcome(original, result, Counter(), message, [message, *dropped])
    return FixOutcome(text, result, applied, dropped[0] if dropped else None, dropped)


def parses(text: str) -> bool:
    """Whether CPython and LibCST (given the text as the engine gives it) both parse it."""
    import ast

    from torchlint.core.lazy import cst
    from torchlint.core.parse import cst_source, in_deep_stack

    try:
        ast.parse(text)
        in_deep_stack(lambda: cst.parse_module(cst_source(text).text))
    except Exception:
        return False
    return True


def unified_diff(path: str, before: str, after: str) -> str:
    import difflib

    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
