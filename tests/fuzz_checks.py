"""The properties every module keeps through `check` and `--fix`, checked through the
library API (the same calls the runner makes), with every rule enabled.

For a module that compiles:
- no rule crashes and no internal error is reported (`FileResult.errors` is empty), and
  a module Python compiles is not reported as unparsable (TL000);
- every diagnostic and every edit lies within the file, starts no later than it ends,
  and a diagnostic starts and ends on code, not on whitespace;
- every round of fixes (safe, then safe and unsafe) leaves code that ast and LibCST
  parse and Python compiles, with the file's newline style;
- every top-level statement that no applied edit touches is, after the round, the
  same (`ast.dump`) top-level statement at its shifted offset;
- fixing the fixed module changes nothing (idempotence);
- leaving the definitions no rule needs out of the LibCST parse (torchlint/core/partial_parse.py)
  changes no finding, fix, error or fact, with every rule and option on and with the
  defaults.

A failure raises `PropertyFailure`, whose `signature` (property and rule codes) tells
one bug from another in the long run.
"""

from __future__ import annotations

import ast
import json
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Dict, List, Optional, Sequence, Tuple

from torchlint.core.config import Config
from torchlint import engine
from torchlint.engine import lint_text
from torchlint.index.resolver import project_findings
from torchlint.fixing.apply import apply_checked, dropped_message, fix_text, is_applicable, parses
from torchlint.core.diagnostics import SYNTAX_CODE, Diagnostic, FileResult, Fix, Location
from torchlint.core.lazy import cst
from torchlint.core.parse import cst_source
from torchlint.rule_api.registry import all_rules
from torchlint.run.project_fixes import MAX_PROJECT_ROUNDS
from torchlint.core.source import DecodeError, decode_source, split_lines

PATH = "fuzzed.py"
PROPERTIES = ("no-crash", "positions", "reparse", "newlines", "untouched", "idempotent", "elision")


class PropertyFailure(AssertionError):
    def __init__(self, prop: str, codes: Sequence[str], detail: str, kind: str = "") -> None:
        self.prop = prop
        self.codes = tuple(sorted(set(codes)))
        self.signature = f"{prop}:{','.join(self.codes) or '-'}" + (f":{kind}" if kind else "")
        super().__init__(f"[{self.signature}] {detail}")


def widest_config() -> Config:
    """Every rule selected, and every boolean option on (each widens what its rule checks)."""
    options = tuple(
        (rule.name, tuple((key, True if isinstance(value, bool) else value) for key, value in rule.options.items()))
        for rule in all_rules()
        if rule.options
    )
    return replace(Config(), select=("ALL",), rule_options=options)


RULES = all_rules()
CONFIG = widest_config()
DEFAULT_RULES = tuple(rule for rule in RULES if rule.default_enabled)


def compiles(text) -> bool:
    """Whether Python compiles the text (or the bytes, decoded as Python decodes them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarnings of odd but valid code
        try:
            compile(text, "<fuzz>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    return True


def reparses(text: str) -> Optional[str]:
    """Why the text fails to parse (ast, LibCST) or compile; None if it does all three."""
    try:
        ast.parse(text)
    except (SyntaxError, ValueError) as error:
        return f"ast: {error}"
    try:
        cst.parse_module(cst_source(text).text)  # as the engine gives it to LibCST (form feeds)
    except Exception as error:  # LibCST's ParserSyntaxError and its internal errors alike
        return f"libcst: {type(error).__name__}: {error}"
    if not compiles(text):
        return "compile() refuses it"
    return None


# ---- linting with the project pass ---------------------------------------------------------


class Linter:
    """`lint_text` with every rule, remembered per text: linting is deterministic, and
    the fixer, the project pass and the idempotence check ask about the same texts."""

    def __init__(self, newline: str) -> None:
        self.newline = newline
        self._results: Dict[str, FileResult] = {}

    def __call__(self, text: str) -> FileResult:
        result = self._results.get(text)
        if result is None:
            result = self._results[text] = lint_text(text, PATH, CONFIG, RULES, newline=self.newline)
        return result

    def project(self, text: str) -> List[Diagnostic]:
        """The project-level diagnostics of this one file."""
        result = self(text)
        if result.facts is None:
            return []
        try:
            return project_findings({PATH: result.facts}, RULES, CONFIG)
        except Exception as error:
            codes = [rule.code for rule in RULES if rule.project_rule]
            raise PropertyFailure("no-crash", codes, f"the project pass raised {error!r}") from error


@dataclass
class Round:
    """One application of fixes: the text before, the fixes applied, the text after."""

    before: str
    fixes: Optional[List[Tuple[str, Fix]]]  # None: not known (the untouched check is skipped)
    after: str


@dataclass
class Recorder:
    """The `lint` callback given to `fix_text`; it records each round of fixes."""

    linter: Linter
    unsafe: bool
    rounds: List[Round] = field(default_factory=list)
    _pending: Optional[Tuple[str, List[Tuple[str, Fix]]]] = None

    def __call__(self, text: str) -> FileResult:
        if self._pending is not None:
            before, fixes = self._pending
            checked = apply_checked(before, fixes)
            if checked.text == text:  # else fix_text is re-linting the original after a refusal
                self.rounds.append(Round(before, [fixes[i] for i in checked.indices], text))
            elif text != before:  # fixes refused in an earlier round were left out: edits unknown
                self.rounds.append(Round(before, None, text))
        result = self.linter(text)
        self._pending = (text, [(d.code, d.fix) for d in result.diagnostics if is_applicable(d.fix, self.unsafe)])
        return result

    def forget(self) -> None:
        """A project-level round was recorded apart: the next text starts afresh."""
        self._pending = None


def fix_module(text: str, linter: Linter, unsafe: bool) -> Tuple[str, List[Round], List[str]]:
    """Fix as `check --fix` does (per-file fixpoint, then project-level fixes to a
    fixpoint, as in project_fixes.fix_project): the text, the rounds applied, and the errors."""
    recorder = Recorder(linter, unsafe)
    outcome = fix_text(text, recorder, unsafe)
    errors = list(outcome.result.errors) + outcome.dropped
    fixed = outcome.text
    for _ in range(MAX_PROJECT_ROUNDS):
        group = [d for d in linter.project(fixed) if is_applicable(d.fix, unsafe)]
        if not group:
            break
        fixes = [(d.code, d.fix) for d in group]
        checked = apply_checked(fixed, fixes)
        errors += [dropped_message(group[index], problem) for index, problem in checked.dropped]
        if checked.indices and not parses(checked.text):
            errors.append(f"{PATH}: a project-level fix produced code that does not parse; not applied")
        if not checked.indices or not parses(checked.text):
            break
        recorder.rounds.append(Round(fixed, [fixes[i] for i in checked.indices], checked.text))
        recorder.forget()
        outcome = fix_text(checked.text, recorder, unsafe)
        errors += [error for error in outcome.result.errors + outcome.dropped if error not in errors]
        fixed = outcome.text
    return fixed, recorder.rounds, errors


# ---- the properties ------------------------------------------------------------------------


def check_program(data: bytes) -> int:
    """Check every property on one file's bytes; the number of property checks made."""
    if not compiles(data):
        return 0
    try:
        source = decode_source(data)
    except DecodeError as error:
        raise PropertyFailure(
            "no-crash", [SYNTAX_CODE], f"bytes Python compiles are not decoded: {error}", kind="decode"
        ) from None
    text, newline = source.text, source.newline
    checks = 0
    linter = Linter(newline)
    result, project = linter(text), linter.project(text)
    if result.errors:
        raise PropertyFailure("no-crash", _crashed_codes(result.errors), "; ".join(result.errors))
    syntax = [d for d in result.diagnostics if d.code == SYNTAX_CODE]
    if syntax:
        raise PropertyFailure(
            "no-crash", [SYNTAX_CODE], f"a module that compiles is reported: {syntax[0].message}", kind="parse"
        )
    checks += 1
    for diagnostic in result.diagnostics + project:
        check_positions(text, diagnostic)
    checks += 1
    check_elision(text, newline, result)
    checks += 2
    for unsafe in (False, True):
        fixed, rounds, errors = fix_module(text, linter, unsafe)
        if errors:
            raise PropertyFailure("no-crash", _crashed_codes(errors) or _round_codes(rounds), "; ".join(errors))
        for round_ in rounds:
            check_round(round_, text)
        again, second_rounds, _ = fix_module(fixed, linter, unsafe)
        if again != fixed:
            raise PropertyFailure(
                "idempotent", _round_codes(second_rounds), f"unsafe={unsafe}: a second fix changed\n{fixed!r}\ninto\n{again!r}"
            )
        checks += 4
    return checks


@contextmanager
def whole_module_parses():
    """Within: LibCST parses every statement of a file (no elision), to compare with."""
    elide = engine.elide_statements
    engine.elide_statements = lambda *args: None
    try:
        yield
    finally:
        engine.elide_statements = elide


def check_elision(text: str, newline: str, result: FileResult) -> None:
    """The same outcome with and without the elision, with every rule and option on
    (`result`) and with the default rules and options."""
    for config, rules, elided in ((CONFIG, RULES, result), (Config(), DEFAULT_RULES, None)):
        if elided is None:
            elided = lint_text(text, PATH, config, rules, newline=newline)
        with whole_module_parses():
            whole = lint_text(text, PATH, config, rules, newline=newline)
        if _outcome(whole) != _outcome(elided):
            differing = set(_outcome(whole)[0]) ^ set(_outcome(elided)[0])
            codes = {finding[0] for finding in differing} or {rule.code for rule in rules if rule.project_rule}
            raise PropertyFailure(
                "elision", sorted(codes), f"whole module:\n{_outcome(whole)}\nelided:\n{_outcome(elided)}"
            )


def _outcome(result: FileResult) -> tuple:
    findings = sorted(
        (d.code, d.location.row, d.location.column, d.end_location.row, d.end_location.column, d.message, repr(d.fix))
        for d in result.diagnostics
    )
    record = result.facts.to_json() if result.facts is not None else None
    return findings, sorted(result.errors), json.dumps(record, sort_keys=True, default=str)


def _crashed_codes(errors: Sequence[str]) -> List[str]:
    return [word for error in errors for word in error.split() if word.startswith("TL") and word[2:].isdigit()]


def _round_codes(rounds: Sequence[Round]) -> List[str]:
    return [code for round_ in rounds for code, _ in round_.fixes or ()]


def _within(lines: Sequence[str], location: Location, eof_ok: bool) -> bool:
    if eof_ok and location == Location(len(lines) + 1, 1):
        return True
    if not 1 <= location.row <= len(lines):
        return False
    return 1 <= location.column <= len(lines[location.row - 1].rstrip("\r\n")) + 1


def check_positions(text: str, diagnostic: Diagnostic) -> None:
    lines = split_lines(text)
    where = f"{diagnostic.code} at {diagnostic.location}-{diagnostic.end_location}"
    codes = [diagnostic.code]
    if not (_within(lines, diagnostic.location, False) and _within(lines, diagnostic.end_location, True)):
        raise PropertyFailure("positions", codes, f"{where} is outside the file")
    if diagnostic.end_location < diagnostic.location:
        raise PropertyFailure("positions", codes, f"{where} ends before it starts")
    starts = _line_offsets(text)
    first = text[_offset(starts, diagnostic.location) : _offset(starts, diagnostic.location) + 1]
    last = text[max(0, _offset(starts, diagnostic.end_location) - 1) : _offset(starts, diagnostic.end_location)]
    if diagnostic.end_location > diagnostic.location and (not first.strip() or not last.strip()):
        raise PropertyFailure("positions", codes, f"{where} starts at {first!r} or ends at {last!r}, not on code")
    for edit in diagnostic.fix.edits if diagnostic.fix else ():
        if not (_within(lines, edit.start, True) and _within(lines, edit.end, True)) or edit.end < edit.start:
            raise PropertyFailure("positions", codes, f"{where}: edit {edit} is outside the file or reversed")


def _line_offsets(text: str) -> List[int]:
    starts = [0]
    for line in split_lines(text):
        starts.append(starts[-1] + len(line))
    return starts


def _offset(starts: Sequence[int], location: Location) -> int:
    return starts[min(location.row, len(starts)) - 1] + location.column - 1


def _line_endings(text: str) -> set:
    return {line[len(line.rstrip("\r\n")) :] for line in split_lines(text)} - {""}


def check_round(round_: Round, original: str) -> None:
    codes = [code for code, _ in round_.fixes or ()]
    problem = reparses(round_.after)
    if problem:
        raise PropertyFailure("reparse", codes, f"{problem}\n--- before\n{round_.before!r}\n--- after\n{round_.after!r}")
    added = _line_endings(round_.after) - _line_endings(original)
    if added and _line_endings(original):
        raise PropertyFailure("newlines", codes, f"new line endings {added!r} in {round_.after!r}")
    if round_.fixes is not None:
        check_untouched(round_, codes)


def _statement_spans(text: str) -> List[Tuple[int, int, ast.stmt]]:
    """Each top-level statement's character span (decorators included)."""
    tree = ast.parse(text)
    raw = split_lines(text)
    starts = _line_offsets(text)

    def offset(row: int, byte_column: int) -> int:
        line = raw[row - 1] if row <= len(raw) else ""
        return starts[row - 1] + len(line.encode("utf-8")[:byte_column].decode("utf-8", "replace"))

    spans = []
    for node in tree.body:
        start = offset(node.lineno, node.col_offset)
        decorators = getattr(node, "decorator_list", ())
        if decorators:
            row = min(d.lineno for d in decorators)
            line = raw[row - 1]
            start = starts[row - 1] + len(line) - len(line.lstrip(" \t\f"))
        spans.append((start, offset(node.end_lineno, node.end_col_offset), node))
    return spans


def check_untouched(round_: Round, codes: Sequence[str]) -> None:
    starts = _line_offsets(round_.before)
    edits: List[Tuple[int, int, int]] = [
        (_offset(starts, e.start), _offset(starts, e.end), len(e.content)) for _, fix in round_.fixes for e in fix.edits
    ]
    after: Dict[int, ast.stmt] = {start: node for start, _, node in _statement_spans(round_.after)}
    for start, end, node in _statement_spans(round_.before):
        touched = any((a < end and start < b) or (a == b and start < a < end) for a, b, _ in edits)
        if touched:
            continue
        shifted = start + sum(length - (b - a) for a, b, length in edits if b <= start)
        moved = after.get(shifted)
        if moved is None or ast.dump(moved) != ast.dump(node):
            raise PropertyFailure(
                "untouched",
                codes,
                f"statement at line {node.lineno} ({ast.unparse(node)[:60]!r}) changed though no edit touched it"
                f"\n--- before\n{round_.before!r}\n--- after\n{round_.after!r}",
            )
