"""The per-file pass: prefilter, gate, parse once, one traversal for all rules, suppress.

This is the one function that both the CLI and the flake8 plugin call. Cost: the bytes read
and decoded, one stdlib-ast parse and walk for the sites, a LibCST parse of the statements
that hold a site, and one batched traversal of them for all rules; what each rule adds is
stated by the analyses it asks (`Cost:` in their docstrings; tests/test_complexity.py).
"""

from __future__ import annotations

import ast
from dataclasses import replace
from functools import lru_cache
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple, Union

from torchlint.core.collector import collector_paused
from torchlint.core.config import Config
from torchlint.fixing.apply import without_unfixable
from torchlint.core.gating import definitions_needed, has_site_within, may_fire, site_rows
from torchlint.core.partial_parse import DEFINITIONS, elide_statements, names_none
from torchlint.core import large_files as large_text
from torchlint.core.diagnostics import SYNTAX_CODE, Diagnostic, FileResult, Location
from torchlint.core.lazy import cst
from torchlint.core.noqa import code_matches, file_exemption
from torchlint.core.parse import cst_source, elide_data, in_deep_stack, parse_module
from torchlint.rule_api.registry import selected_codes
from torchlint.analysis.definition_memo import NO_MEMO, DefinitionMemo, NoMemo
from torchlint.analysis.source_view import SourceView
from torchlint.rule_api.rule import Rule, RuleContext
from torchlint.core.source import DecodeError, decode_source, detect_newline
from torchlint.core.incremental_parse import StatementParser
from torchlint.index.record import FileRecord
from torchlint.core.walk import forget_trees, visit_batched



def triggered_rules(text: str, path: str, config: Config, rules: Sequence[type]) -> List[type]:
    """The rules not disabled for the file whose trigger substrings occur in its text."""
    disabled_file, disabled_codes = file_exemption(text)
    if disabled_file:
        return []
    candidates = []
    occurs: Dict[str, bool] = {}  # rules share triggers (TL101-TL103 the whole list of old names)
    for rule in rules:
        if disabled_codes and code_matches(rule.code, disabled_codes):
            continue
        triggers = rule.trigger_strings(config, path)
        if not triggers or any(_occurs(trigger, text, occurs) for trigger in triggers):
            candidates.append(rule)
    return candidates


def _occurs(trigger: str, text: str, known: Dict[str, bool]) -> bool:
    found = known.get(trigger)
    if found is None:
        found = known[trigger] = trigger in text
    return found


def gated_rules(view: SourceView, config: Config, rules: Sequence[type]) -> List[type]:
    """The rules with a site in the file (`Rule.sites`): only these make it worth a LibCST parse."""
    return [rule for rule in rules if may_fire(rule, view, config)]


def needed_definitions(view: SourceView, config: Config, rules: Sequence[type]) -> Optional[Set[int]]:
    """The top-level definitions holding some rule's sites (None: all of them)."""
    needed: Set[int] = set()
    for rule in rules:
        own = definitions_needed(rule, view, config)
        if own is None:
            return None
        needed.update(own)
    return needed


def focused(view: SourceView, focus: Sequence[Tuple[int, int]], rows: Sequence[int]) -> Tuple[Set[int], List[int]]:
    """What LibCST needs of a file whose findings are wanted only in the `focus` spans (a
    definition or a method being edited), as `elide_statements` takes it:
    - the top-level definitions the spans overlap, and those that name one of them (a
      function that runs or builds it: what a rule of the whole tree may need), whole;
    - the rules' site rows inside the spans, and each span's first row: a class keeps the
      methods the spans lie in (and `ALWAYS_KEPT_METHODS`), not the others.
    What else makes a finding there (a loop that reaches it, the class's settings and
    state) is read from the stdlib ast of the whole file. Cost: one pass over the top-level
    statements, the text of each definition scanned once for the names."""
    body, spans = view.tree.body, view.statement_spans
    definitions = {
        index
        for index, (first, last) in enumerate(spans)
        if isinstance(body[index], DEFINITIONS) and any(first <= end and start <= last for start, end in focus)
    }
    names = dict.fromkeys(body[index].name for index in definitions).keys()
    ascii_names = all(name.isascii() for name in names)
    users = {  # a function that runs or builds one of them: what a rule of the whole tree may need
        index
        for index, (first, last) in enumerate(spans)
        if isinstance(body[index], DEFINITIONS)
        and index not in definitions
        and not names_none(names, ascii_names, "".join(view.parse_lines[first - 1 : last]))
    }
    inside = [row for row in rows if any(start <= row <= end for start, end in focus)]
    return definitions | users, inside + [start for start, _ in focus]


def ast_facts(view: SourceView, config: Config, rules: Sequence[type], errors: List[str]) -> FileRecord:
    """The file's record as the rules start it from its stdlib ast (see `Rule.ast_facts`)."""
    record = FileRecord()
    for rule in rules:
        try:
            rule.ast_facts(view, config, record)
        except Exception as error:  # a rule bug must not cost the other rules their findings
            errors.append(f"{view.path}: rule {rule.code} crashed: {describe(error)}")
    return record


def syntax_diagnostic(path: str, message: str, row: int, column: int) -> Diagnostic:
    location = Location(max(row, 1), max(column, 1))
    return Diagnostic(SYNTAX_CODE, message, path, location, location, noqa_row=location.row)


def lint_bytes(data: bytes, path: str, config: Config, rules: Sequence[type]) -> FileResult:
    try:
        source = decode_source(data)
    except DecodeError as error:
        return FileResult(path, [syntax_diagnostic(path, f"Cannot decode file: {error}", 1, 1)])
    return lint_text(source.text, path, config, rules, newline=source.newline)


def lint_text(
    text: str,
    path: str,
    config: Config,
    rules: Sequence[type],
    newline: Optional[str] = None,
    tree: Optional[ast.Module] = None,
    flake8: bool = False,
    parser: Optional[StatementParser] = None,
    focus: Optional[Sequence[Tuple[int, int]]] = None,
    memo: Union[DefinitionMemo, NoMemo] = NO_MEMO,
) -> FileResult:
    """Lint one file's text with the given (already selected) rules; `tree`, the text's
    stdlib ast if the caller has it, saves the gates a parse. `flake8`: leave `# noqa`
    to flake8 and compute no fixes. `parser`: the one that parsed this file's previous
    versions (the language server's), which re-parses only the statements that changed.
    `focus`: only the findings in these (first row, last row) spans are wanted (see
    `focused`), so LibCST parses only the definitions and methods they lie in. `memo`: what
    the analyses found in the definitions of `tree` that an earlier version's tree held too."""
    problem = large_text.beyond_bound(text)
    if problem is not None:
        return FileResult(path, [syntax_diagnostic(path, f"Not linted: {problem}", 1, 1)])
    with collector_paused():
        if large_text.is_large(text):
            result = _lint_large(text, path, config, rules, newline or detect_newline(text), flake8)
        else:
            result = _lint_whole(text, path, config, rules, newline, tree, flake8, parser, focus, memo)
    result.diagnostics = without_unfixable(result.diagnostics, config)
    return result


def _lint_whole(
    text: str, path: str, config: Config, rules: Sequence[type], newline, tree, flake8: bool, parser, focus=None,
    memo=NO_MEMO,
) -> FileResult:
    result = FileResult(path)
    view = SourceView(text, path, tree, elide_data(text), memo)
    if view.tree is None:  # every file is checked, triggered or not: TL000 promises it
        if not _syntax_code_disabled(text):
            result.diagnostics.append(_syntax_error(path, view.syntax_error))
        return result
    try:
        return in_deep_stack(lambda: _lint_tree(result, view, config, rules, newline, flake8, parser, focus))
    except (RecursionError, MemoryError) as error:
        # more than the deep stack gives: this file only, one line
        result.diagnostics.clear()
        result.facts = None
        result.errors[:] = [f"{path}: too deeply nested to analyse: {describe(error)}"]
        return result


def _lint_large(text: str, path: str, config: Config, rules: Sequence[type], newline: str, flake8: bool) -> FileResult:
    """A file with more top-level statements, or more code, than a whole parse should hold:
    the rules run on the statements they can need (`torchlint.core.large_files`), without fixes or facts."""
    # every rule's triggers: those that do not occur keep nothing, and searching the
    # whole text for each rule's first costs more than the cut (the reduced text is
    # what triggered_rules then reads, own-line file noqa comments included)
    needles = [trigger for rule in rules for trigger in rule.trigger_strings(config, path)]
    try:
        reduced = large_text.reduce(text, needles)
    except SyntaxError as error:
        return FileResult(path, [] if _syntax_code_disabled(text) else [_syntax_error(path, error)])
    if reduced.statements > large_text.LARGE_STATEMENTS:
        message = (
            f"Not linted: {reduced.statements:,} of its top-level statements hold what rules look for; "
            f"in a file this long torchlint lints up to {large_text.LARGE_STATEMENTS:,}"
        )
        return FileResult(path, [syntax_diagnostic(path, message, 1, 1)])
    kept_code = large_text.code_size(reduced.text)
    if kept_code > large_text.LARGE_CODE:
        message = (
            f"Not linted: the statements that hold what rules look for have {kept_code:,} characters of code; "
            f"torchlint parses up to {large_text.LARGE_CODE:,} at once"
        )
        return FileResult(path, [syntax_diagnostic(path, message, 1, 1)])
    result = _lint_whole(reduced.text, path, config, rules, newline, None, flake8, None)
    result.diagnostics = [_in_file(diagnostic, reduced) for diagnostic in result.diagnostics]
    result.facts = None
    return result


def _in_file(diagnostic: Diagnostic, reduced) -> Diagnostic:
    """A finding in the reduced text at the file's rows, without its fix."""
    start, end = diagnostic.location, diagnostic.end_location
    noqa_row = diagnostic.noqa_row
    return replace(
        diagnostic,
        location=Location(reduced.file_row(start.row), start.column),
        end_location=Location(reduced.file_row(end.row), end.column),
        noqa_row=None if noqa_row is None else reduced.file_row(noqa_row),
        fix=None,
    )


def _lint_tree(
    result: FileResult, view: SourceView, config: Config, rules: Sequence[type], newline, flake8: bool, parser=None,
    focus=None,
) -> FileResult:
    """Everything after CPython's parse, on the deep stack: valid code of any nesting
    CPython accepts must not exhaust the stack in a gate, a rule or LibCST."""
    if focus is None:
        result.facts = ast_facts(view, config, rules, result.errors)
    rules = gated_rules(view, config, triggered_rules(view.text, view.path, config, rules))
    if focus is not None:  # only the rules that can fire in the focus, and only their facts
        rules = [rule for rule in rules if has_site_within(rule, view, config, focus)]
        result.facts = ast_facts(view, config, rules, result.errors)
    if not rules:
        return result
    try:
        return _lint_parsed(result, view, config, rules, newline, flake8, parser, focus)
    finally:
        forget_trees()  # this file's trees go with it


def _syntax_code_disabled(text: str) -> bool:
    disabled_file, disabled_codes = file_exemption(text)
    return disabled_file or bool(disabled_codes and code_matches(SYNTAX_CODE, disabled_codes))


def _syntax_error(path: str, error: SyntaxError) -> Diagnostic:
    return syntax_diagnostic(path, f"SyntaxError: {error.msg}", error.lineno or 1, error.offset or 1)


def libcst_input(view: SourceView, config: Config, rules: Sequence[type], focus=None):
    """What LibCST parses of a file these rules passed the gates of: the file's source (its
    text as LibCST reads it) and, when the rules need only part of it, the elided text
    (`elide_statements`), or None. Cost: the rules' site searches, then one pass over the rows."""
    source = cst_source(view.parse_text)
    needed = needed_definitions(view, config, rules)
    rows = site_rows(view, config, rules) if needed is not None else []
    if focus is not None:
        needed, rows = focused(view, focus, rows)
    follow_names = any(rule.follows_names for rule in rules)
    return source, elide_statements(source.text, view.tree, needed, rows, follow_names)


def _lint_parsed(
    result: FileResult, view: SourceView, config: Config, rules: Sequence[type], newline, flake8: bool, parser=None,
    focus=None,
) -> FileResult:
    """Parse with LibCST (the file is known to parse for CPython) and run the rules."""
    text, path = view.text, view.path
    source, elided = libcst_input(view, config, rules, focus)
    try:
        if parser is None:
            module = parse_module(source.text if elided is None else elided.text)
        elif elided is None:
            module = parser.parse(source.text, view.tree)
        else:
            module = parser.parse(elided.text, elided.tree, elided.rows)
    except cst.ParserSyntaxError as error:
        # CPython accepts the file: a LibCST limitation, not the user's syntax error
        result.errors.append(f"{path}: cannot be analysed: LibCST rejects it: {' '.join(error.message.split())}")
        return result
    result.parsed = True
    context = RuleContext(
        module,
        text,
        path,
        config,
        newline or detect_newline(text),
        view,
        flake8,
        source.column_shifts,
        elided,
        selected_codes(config),
    )
    context.record = result.facts
    context.defers = focus is None  # a focused lint's findings outside the focus are dropped
    if parser is not None:
        context.known_ranges = parser.ranges
        context.known_suppressions = parser.suppressions
    instances = [rule(context) for rule in rules]
    try:
        crashed = _traverse(module, instances)
        findings = []
        for report in context.reports:
            code = report.rule.code
            if code in crashed:
                continue
            try:  # positions and fixes run rule code too
                findings.append((code, context.diagnostic(report)))
            except Exception as error:
                crashed[code] = error
    finally:
        _release(instances, context)
    result.diagnostics.extend(d for code, d in findings if d is not None and code not in crashed)
    result.facts = context.record.without_pending_of(crashed)
    for code, error in crashed.items():
        result.errors.append(f"{path}: rule {code} crashed: {describe(error)}")
    return result


def _release(instances: Sequence[Rule], context: RuleContext) -> None:
    """Drop what the file's rules hold: a report refers to its rule, which keeps its reports
    and the context, so without this the file's trees would wait for the cycle collector
    (a pass over every object, paused while a file is linted) instead of going at once."""
    for instance in instances:
        instance.__dict__.clear()
    context.reports.clear()


def describe(error: BaseException) -> str:
    """An exception as one short line, for an internal-error report."""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:157] + '...' if len(text) > 160 else text}"


def _traverse(module, rules: Sequence[Rule]) -> Dict[str, BaseException]:
    """Run every rule in one batched traversal; a rule that raises is switched off."""
    crashed: Dict[str, BaseException] = {}
    visitors = [
        (name, _guard(rule, getattr(rule, name), crashed))
        for rule in rules
        for name in _visitor_names(type(rule))
    ]
    visit_batched(module, visitors)
    return crashed


@lru_cache(maxsize=None)
def _visitor_names(rule_class: type) -> tuple:
    return tuple(name for name in dir(rule_class) if name.startswith(("visit_", "leave_")))


def _guard(rule: Rule, method: Callable, crashed: Dict[str, BaseException]) -> Callable:
    def guarded(node):
        if rule.code in crashed:
            return
        try:
            method(node)
        except Exception as error:  # a rule bug must not cost the other rules their findings
            crashed[rule.code] = error

    return guarded
