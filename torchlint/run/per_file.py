"""The per-file pass for one file: read it, look it up in the cache, else lint (or fix in memory) its source or
notebook, and store what was found."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from torchlint.core.bounded_read import ReadRefused
from torchlint.core.diagnostics import FileResult
from torchlint.engine import describe, lint_bytes, lint_text, syntax_diagnostic
from torchlint.rule_api.registry import code_fingerprint
from torchlint.core.source import DecodeError, decode_source, read_source
from torchlint.fixing.apply import FixOutcome, fix_text, is_applicable
from torchlint.fixing.write import Snapshot
from torchlint.index.record_text import RecordText
from torchlint.run.notebook import Layout, Notebook, is_notebook, read_notebook
from torchlint.run.notebook_json import NotebookError
from torchlint.run.cache import Cache, entry_key
from torchlint.run.jobs import FileOutcome, relative_path, rules_for

if TYPE_CHECKING:
    from torchlint.run.jobs import Job, RunSettings


def _read(job: Job) -> Tuple[Optional[bytes], Optional[FileOutcome]]:
    """The file's bytes, or the outcome that reports why it cannot be read."""
    display, path, data = job
    if data is not None:
        return data, None
    try:
        return read_source(path), None
    except (OSError, ReadRefused) as error:
        outcome = FileOutcome(display)
        message = f"Cannot read file: {getattr(error, 'strerror', None) or error}"
        outcome.diagnostics.append(syntax_diagnostic(display, message, 1, 1))
        return None, outcome


def lookup(
    job: Job, settings: RunSettings, cache: Optional[Cache] = None
) -> Tuple[Optional[FileOutcome], Job, Optional[str]]:
    """The cached outcome of an unchanged file (or of one that cannot be read), else None;
    the job with its bytes read, ready for `process_file`; and the bytes' cache key."""
    data, unreadable = _read(job)
    if unreadable is not None:
        return unreadable, job, None
    display, path, _ = job
    job = (display, path, data)
    if cache is None:  # nothing to look up, and no key to store results under
        return None, job, None
    key = entry_key(data, _codes_for(display, settings))
    name = relative_path(display, settings.config)
    cached = cache.get(name, display, key)
    if cached is None or (settings.mode != "check" and _has_fix(cached, settings.unsafe)):
        return None, job, key
    outcome = _with_result(FileOutcome(display, cached=True), cached, data if settings.keep_sources else None)
    outcome.record = _stored_record(cache, name, job, key, settings)
    if is_notebook(display):
        outcome.unread_notebook = data
    return outcome, job, key


def process_file(job: Job, settings: RunSettings) -> FileOutcome:
    """Lint (or fix) one file, not found in the cache. `job` is (display name, path,
    bytes if already read)."""
    data, unreadable = _read(job)
    if unreadable is not None:
        return unreadable
    display, path, _ = job
    outcome = FileOutcome(display)
    rules = rules_for(display, settings)
    try:
        if is_notebook(display):
            outcome = _notebook_file(outcome, data, rules, settings)
        elif settings.mode != "check":
            outcome = _fix_file(outcome, path, data, rules, settings)
        else:
            result = lint_bytes(data, relative_path(display, settings.config), settings.config, rules)
            outcome = _with_result(outcome, result, data if settings.keep_sources else None)
    except Exception as error:  # e.g. RecursionError deep inside LibCST: this file only
        outcome.errors.append(f"{display}: internal error: {describe(error)}")
    return outcome


def _has_fix(result: FileResult, unsafe: bool) -> bool:
    return any(is_applicable(d.fix, unsafe) for d in result.diagnostics)


def run_cache(settings: RunSettings) -> Cache:
    """The run's cache (its salt: config, selected rules and torchlint's own code)."""
    salt = "|".join((settings.config.fingerprint(), ",".join(settings.codes), code_fingerprint()))
    return Cache(settings.config.root, salt)


def _codes_for(display: str, settings: RunSettings) -> List[str]:
    return [rule.code for rule in rules_for(display, settings)]


def store_outcomes(cache: Cache, fresh: Sequence[FileOutcome], settings: RunSettings) -> None:
    """Cache what the per-file pass found (check mode: a fix run's results describe the
    fixed text, not the bytes read)."""
    if settings.mode != "check":
        return
    for outcome in fresh:
        if outcome.key is not None:
            result = FileResult(outcome.display, outcome.diagnostics, errors=outcome.errors)
            cache.put(relative_path(outcome.display, settings.config), outcome.key, result, outcome.record.text)


def _stored_record(cache: Cache, name: str, job: Job, key: str, settings: RunSettings) -> RecordText:
    def load() -> Optional[str]:
        found, text = cache.record(name, key)
        if found:
            return text
        # pruned, or another run's write won: lint the file again for it
        text = process_file(job, replace(settings, mode="check", keep_sources=False)).record.text
        cache.put_record(name, key, text)
        return text

    return RecordText(load=load)


def _with_result(outcome: FileOutcome, result: FileResult, data: Optional[bytes]) -> FileOutcome:
    # linted under its path from the project root (`relative_path`), shown under its display name
    outcome.diagnostics = [replace(d, filename=outcome.display) for d in result.diagnostics]
    outcome.record = RecordText.of(result.facts)  # text: what the parent keeps of every file
    outcome.errors = list(result.errors)
    if data is not None and not is_notebook(outcome.display):
        outcome.undecoded = data
    return outcome


def fixed_to_fixpoint(
    text: str, display: str, rules: Sequence[type], newline: str, settings: RunSettings, layout: Optional[Layout]
) -> FixOutcome:
    """The file's text fixed to a fixpoint with these rules (`fix.fix_text`), linted as
    `display`; `layout`: a notebook's cells, which no fix may straddle."""

    def lint(current: str) -> FileResult:
        return lint_text(current, display, settings.config, rules, newline=newline)

    return fix_text(text, lint, settings.unsafe, layout)


def _fix_file(outcome, path, data, rules, settings: RunSettings) -> FileOutcome:
    """Fix in memory; the parent writes (or diffs) once project rules have had their say."""
    display = outcome.display
    try:
        source = decode_source(data)
    except DecodeError:
        result = lint_bytes(data, relative_path(display, settings.config), settings.config, rules)
        return _with_result(outcome, result, None)
    return _fix_source(outcome, data, source, rules, settings)


def _fix_source(outcome: FileOutcome, data: bytes, source, rules, settings: RunSettings) -> FileOutcome:
    """Fix a decoded file (a `SourceFile` or a `Notebook`) in memory."""
    name = relative_path(outcome.display, settings.config)
    fixed = fixed_to_fixpoint(source.text, name, rules, source.newline, settings, outcome.layout)
    _with_result(outcome, fixed.result, None)
    outcome.original = source
    outcome.linted = Snapshot.of(data)
    outcome.fixed_text = fixed.text
    outcome.applied = fixed.applied
    outcome.warnings = list(fixed.dropped)
    outcome.source = fixed.text if settings.keep_sources else None
    return outcome


def _notebook_file(outcome: FileOutcome, data: bytes, rules, settings: RunSettings) -> FileOutcome:
    """Lint (or fix) a notebook's code cells as one module; a file that is not a
    notebook gets one TL000 line."""
    try:
        notebook = attach_notebook(outcome, data, settings)
    except NotebookError as error:
        outcome.diagnostics.append(syntax_diagnostic(outcome.display, f"Cannot read notebook: {error}", 1, 1))
        return outcome
    if settings.mode != "check":
        return _fix_source(outcome, data, notebook, rules, settings)
    name = relative_path(outcome.display, settings.config)
    result = lint_text(notebook.text, name, settings.config, rules, newline=notebook.newline)
    return _with_result(outcome, result, None)


def attach_notebook(outcome: FileOutcome, data: bytes, settings: RunSettings) -> Notebook:
    notebook = read_notebook(data)
    outcome.notebook, outcome.layout = notebook, notebook.layout.copy()
    if settings.keep_sources:
        outcome.source = notebook.text
    return notebook
