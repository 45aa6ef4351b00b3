"""Run the per-file pass over many files (cached, in parallel), then the project pass."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import pathspec

from torchlint.run.cache import Cache, entry_key
from torchlint.core.config import Config
from torchlint.core.engine import describe, lint_bytes, lint_text, syntax_diagnostic
from torchlint.index.record_text import RecordText
from torchlint.index.resolver import project_findings
from torchlint.fixing.apply import FixOutcome, apply_checked, dropped_message, fix_text, is_applicable, parses, unified_diff
from torchlint.core.diagnostics import Diagnostic, FileResult
from torchlint.run.interrupts import signals_deferred, worker_signals
from torchlint.integrations.notebook import Layout, Notebook, NotebookError, is_notebook, read_notebook
from torchlint.core.registry import all_rules, code_fingerprint
from torchlint.core.source import DecodeError, SourceFile, decode_source
from torchlint.fixing.write import ChangedDuringRun, Snapshot, write_fixed

SERIAL_BELOW = 24


@dataclass(frozen=True)
class RunSettings:
    config: Config
    codes: Tuple[str, ...]
    mode: str = "check"  # check | fix | diff
    unsafe: bool = False
    use_cache: bool = True
    keep_sources: bool = False


@dataclass
class FileOutcome:
    display: str
    diagnostics: List[Diagnostic] = field(default_factory=list)
    record: RecordText = field(default_factory=RecordText)  # what the project pass reads of the file
    errors: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)  # fixes refused (the guard, a file changed): their findings stay
    applied: Counter = field(default_factory=Counter)
    diff: Optional[str] = None
    original: Optional[SourceFile] = None
    fixed_text: Optional[str] = None
    linted: Optional[Snapshot] = None  # the bytes fixed: the file must still hold them when written
    source: Optional[str] = None
    undecoded: Optional[bytes] = None  # the bytes of `source`, decoded only if a finding needs the text
    cached: bool = False
    notebook: Optional[Notebook] = None  # the file is a notebook: its source is the cells' module
    layout: Optional[Layout] = None  # where the notebook's cells are in the (fixed) module
    unread_notebook: Optional[bytes] = None  # a cached notebook, read only if a finding needs its cells
    key: Optional[str] = None  # the cache key of the bytes read (`cache.entry_key`)


@dataclass
class RunResult:
    outcomes: List[FileOutcome]
    diagnostics: List[Diagnostic]

    @property
    def errors(self) -> List[str]:
        return [error for outcome in self.outcomes for error in outcome.errors]

    @property
    def warnings(self) -> List[str]:
        return [warning for outcome in self.outcomes for warning in outcome.warnings]

    @property
    def applied(self) -> Dict[str, Counter]:
        return {o.display: o.applied for o in self.outcomes if o.applied}

    def sources(self) -> Dict[str, str]:
        """The text kept of each file with findings, by `Diagnostic.source_name` (a
        notebook: each cell)."""
        found: Dict[str, str] = {}
        reported = {diagnostic.filename for diagnostic in self.diagnostics}
        for outcome in self.outcomes:
            if outcome.undecoded is not None and outcome.display in reported:
                try:
                    outcome.source = decode_source(outcome.undecoded).text
                except DecodeError:
                    pass
                outcome.undecoded = None
            if outcome.source is None:
                continue
            if outcome.notebook is not None:
                found.update(outcome.notebook.cell_sources(outcome.display, outcome.source, outcome.layout))
            else:
                found[outcome.display] = outcome.source
        return found


@lru_cache(maxsize=None)
def _pattern(pattern: str) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines([pattern])


def rules_for(display: str, settings: RunSettings) -> List[type]:
    """The selected rules minus those `per-file-ignores` turns off for this path."""
    notebook = is_notebook(display)
    rules = [r for r in all_rules() if r.code in settings.codes and (r.applies_to_notebooks or not notebook)]
    ignored = set()
    relative = _relative(display, settings.config) if settings.config.per_file_ignores else display
    for pattern, codes in settings.config.per_file_ignores:
        if _pattern(pattern).match_file(relative):
            ignored.update(codes)
    if ignored:
        rules = [r for r in rules if not any(r.code.startswith(code) for code in ignored)]
    return rules


def _relative(display: str, config: Config) -> str:
    """The file's path relative to the project root (absolute outside it): what
    `per-file-ignores` match and the cache is keyed by, whatever the working directory."""
    # string operations: pathlib costs more than the warm run's cache lookup itself
    absolute = os.path.abspath(display)
    root = os.path.join(str(config.root), "")
    relative = absolute[len(root):] if absolute.startswith(root) else absolute
    return relative.replace(os.sep, "/")


Job = Tuple[str, Optional[Path], Optional[bytes]]


def _read(job: Job) -> Tuple[Optional[bytes], Optional[FileOutcome]]:
    """The file's bytes, or the outcome that reports why it cannot be read."""
    display, path, data = job
    if data is not None:
        return data, None
    try:
        return path.read_bytes(), None
    except OSError as error:
        outcome = FileOutcome(display)
        message = f"Cannot read file: {error.strerror or error}"
        outcome.diagnostics.append(syntax_diagnostic(display, message, 1, 1))
        return None, outcome


def lookup(job: Job, settings: RunSettings, cache: Optional[Cache] = None) -> Tuple[Optional[FileOutcome], Job, Optional[str]]:
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
    name = _relative(display, settings.config)
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
            outcome = _with_result(outcome, lint_bytes(data, display, settings.config, rules), data if settings.keep_sources else None)
    except Exception as error:  # e.g. RecursionError deep inside LibCST: this file only
        outcome.errors.append(f"{display}: internal error: {describe(error)}")
        return outcome
    outcome.record = RecordText.of(outcome.record)  # text: what the parent keeps of every file
    return outcome


def _has_fix(result: FileResult, unsafe: bool) -> bool:
    return any(is_applicable(d.fix, unsafe) for d in result.diagnostics)


def _cache(settings: RunSettings) -> Cache:
    """The run's cache (its salt: config, selected rules and torchlint's own code)."""
    salt = "|".join((settings.config.fingerprint(), ",".join(settings.codes), code_fingerprint()))
    return Cache(settings.config.root, salt)


def _codes_for(display: str, settings: RunSettings) -> List[str]:
    return [rule.code for rule in rules_for(display, settings)]


def _store(cache: Cache, fresh: Sequence[FileOutcome], settings: RunSettings) -> None:
    """Cache what the per-file pass found (check mode: a fix run's results describe the
    fixed text, not the bytes read)."""
    if settings.mode != "check":
        return
    for outcome in fresh:
        if outcome.key is not None:
            result = FileResult(outcome.display, outcome.diagnostics, outcome.record.text, outcome.errors)
            cache.put(_relative(outcome.display, settings.config), outcome.key, result)


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
    outcome.diagnostics = list(result.diagnostics)
    outcome.record = result.facts
    outcome.errors = list(result.errors)
    if data is not None and not is_notebook(outcome.display):
        outcome.undecoded = data
    return outcome


def _fixed(
    text: str, display: str, rules: Sequence[type], newline: str, settings: RunSettings, layout: Optional[Layout]
) -> FixOutcome:
    """The file's text fixed to a fixpoint with these rules (`fix.fix_text`); `layout`:
    a notebook's cells, which no fix may straddle."""

    def lint(current: str) -> FileResult:
        return lint_text(current, display, settings.config, rules, newline=newline)

    return fix_text(text, lint, settings.unsafe, layout)


def _fix_file(outcome, path, data, rules, settings: RunSettings) -> FileOutcome:
    """Fix in memory; the parent writes (or diffs) once project rules have had their say."""
    display = outcome.display
    try:
        source = decode_source(data)
    except DecodeError:
        return _with_result(outcome, lint_bytes(data, display, settings.config, rules), None)
    return _fix_source(outcome, data, source, rules, settings)


def _fix_source(outcome: FileOutcome, data: bytes, source, rules, settings: RunSettings) -> FileOutcome:
    """Fix a decoded file (a `SourceFile` or a `Notebook`) in memory."""
    display = outcome.display
    fixed = _fixed(source.text, display, rules, source.newline, settings, outcome.layout)
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
        notebook = _attach_notebook(outcome, data, settings)
    except NotebookError as error:
        outcome.diagnostics.append(syntax_diagnostic(outcome.display, f"Cannot read notebook: {error}", 1, 1))
        return outcome
    if settings.mode != "check":
        return _fix_source(outcome, data, notebook, rules, settings)
    result = lint_text(notebook.text, outcome.display, settings.config, rules, newline=notebook.newline)
    return _with_result(outcome, result, None)


def _attach_notebook(outcome: FileOutcome, data: bytes, settings: RunSettings) -> Notebook:
    notebook = read_notebook(data)
    outcome.notebook, outcome.layout = notebook, notebook.layout.copy()
    if settings.keep_sources:
        outcome.source = notebook.text
    return notebook


def _read_cached_notebooks(outcomes: Sequence[FileOutcome], project: Sequence[Diagnostic], settings: RunSettings) -> None:
    """Read the cached notebooks that a finding is in or names rows of; a warm run parses
    no other notebook."""
    unread = [o for o in outcomes if o.unread_notebook is not None]
    if not unread:
        return
    diagnostics = [d for outcome in outcomes for d in outcome.diagnostics] + list(project)
    in_files = {d.filename for d in diagnostics}
    for outcome in unread:
        data, outcome.unread_notebook = outcome.unread_notebook, None
        if outcome.notebook is not None:  # a project fix read it already
            continue
        if outcome.display in in_files or any(outcome.display in d.message for d in diagnostics):
            try:
                _attach_notebook(outcome, data, settings)
            except NotebookError:  # its cached finding says why
                pass


def _in_cells(outcomes: Sequence[FileOutcome], project: List[Diagnostic]) -> List[Diagnostic]:
    """Notebook findings (each outcome's and the project pass's) with cell positions."""
    notebooks = {outcome.display: outcome for outcome in outcomes if outcome.layout is not None}

    def in_cells(outcome: FileOutcome, diagnostic: Diagnostic) -> Diagnostic:
        text = outcome.fixed_text if outcome.fixed_text is not None else outcome.notebook.text
        return outcome.notebook.in_cells(diagnostic, text, outcome.layout)

    def rows_named(diagnostic: Diagnostic) -> Diagnostic:
        message = diagnostic.message
        for display, outcome in notebooks.items():
            text = outcome.fixed_text if outcome.fixed_text is not None else outcome.notebook.text
            message = outcome.notebook.name_rows(message, display, text, outcome.layout)
        return diagnostic if message == diagnostic.message else replace(diagnostic, message=message)

    for outcome in outcomes:
        if outcome.display in notebooks:
            outcome.diagnostics = [in_cells(outcome, d) for d in outcome.diagnostics]
        if notebooks:
            outcome.diagnostics = [rows_named(d) for d in outcome.diagnostics]
    project = [in_cells(notebooks[d.filename], d) if d.filename in notebooks else d for d in project]
    return [rows_named(d) for d in project] if notebooks else project


def fixed_bytes(outcome: FileOutcome) -> bytes:
    """The fixed file as it is to be written: the encoding, BOM and newlines it had; a
    notebook with only its changed cells' sources replaced."""
    if outcome.layout is not None:
        return outcome.notebook.encode(outcome.fixed_text, outcome.layout)
    return outcome.original.encode(outcome.fixed_text)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def worker_count(requested: Optional[int], files: int) -> int:
    """Workers for `files` files: as many as asked (default: one per core), but never more
    than the files nor than twice the cores (more only costs forks and memory)."""
    cores = default_jobs()
    return max(1, min(requested or cores, 2 * cores, files))


def run(
    jobs_in: Sequence[Tuple[str, Optional[Path], Optional[bytes]]],
    settings: RunSettings,
    workers: Optional[int] = None,
) -> RunResult:
    """Every file's outcome (in input order) and all diagnostics, project rules included."""
    cache = _cache(settings) if settings.use_cache else None
    outcomes = lint_files(jobs_in, settings, workers, cache)
    project = _project_findings(outcomes, settings, cache)
    if cache is not None:
        cache.save()
    if settings.mode != "check":
        project = _fix_project(outcomes, project, settings)
        refused = [outcome for outcome, job in zip(outcomes, jobs_in) if not _finish_fix(outcome, job[1], settings)]
        if refused:
            for outcome in refused:
                _unfixed(outcome, settings)
            project = project_pass(outcomes, settings)
    _read_cached_notebooks(outcomes, project, settings)
    project = _in_cells(outcomes, project)
    diagnostics = [d for outcome in outcomes for d in outcome.diagnostics] + project
    diagnostics.sort(key=lambda d: d.sort_key)
    return RunResult(outcomes, diagnostics)


def lint_files(
    jobs_in: Sequence[Tuple[str, Optional[Path], Optional[bytes]]],
    settings: RunSettings,
    workers: Optional[int] = None,
    cache: Optional[Cache] = None,
) -> List[FileOutcome]:
    """The per-file pass over many files (cached, in parallel): each file's outcome, in
    input order. Without a `cache` to fill, the run's own is read and saved."""
    own_cache = cache is None and settings.use_cache
    if own_cache:
        cache = _cache(settings)
    outcomes: List[Optional[FileOutcome]] = []
    keys: List[Optional[str]] = []
    misses: List[Tuple[int, Job]] = []
    for index, job in enumerate(jobs_in):
        outcome, ready, key = lookup(job, settings, cache)
        outcomes.append(outcome)
        keys.append(key)
        if outcome is None:
            misses.append((index, ready))
    workers = worker_count(workers, len(misses))
    if workers <= 1 or len(misses) < SERIAL_BELOW:
        fresh = [process_file(job, settings) for _, job in misses]
    else:
        fresh = _parallel([job for _, job in misses], settings, workers)
    for (index, _), outcome in zip(misses, fresh):
        outcomes[index] = outcome
    for outcome, key in zip(outcomes, keys):
        outcome.key = key
    if cache is not None:
        _store(cache, fresh, settings)
        if own_cache:
            cache.save()
    return outcomes


def _project_findings(outcomes: Sequence[FileOutcome], settings: RunSettings, cache: Optional[Cache]) -> List[Diagnostic]:
    """The project pass, or in check mode its cached findings when no file (nor rule,
    setting or torchlint itself) changed since the run that stored them."""
    if cache is None or settings.mode != "check" or any(o.key is None or o.errors for o in outcomes):
        return project_pass(outcomes, settings)
    files = [(outcome.display, outcome.key) for outcome in outcomes]
    found = cache.project(files)
    if found is None:
        found = project_pass(outcomes, settings)
        cache.put_project(files, found)
    return found


def _parallel(jobs_in, settings: RunSettings, workers: int) -> List[FileOutcome]:
    """Largest files first, in small chunks, so that no worker is left with the heavy tail.
    If the run is stopped (^C, SIGTERM, an error), the workers are killed, never orphaned."""
    import multiprocessing
    from functools import partial

    order = sorted(range(len(jobs_in)), key=lambda index: -_size(jobs_in[index]))
    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    outcomes: List[Optional[FileOutcome]] = [None] * len(jobs_in)
    with signals_deferred():  # a pool half-built when ^C comes would orphan its workers
        pool = context.Pool(workers, initializer=worker_signals)
    try:
        results = pool.imap(partial(process_file, settings=settings), [jobs_in[i] for i in order], chunksize=2)
        for index, outcome in zip(order, results):
            outcomes[index] = outcome
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
    return outcomes


def _size(job) -> int:
    _, path, data = job
    if data is not None:
        return len(data)
    try:
        return path.stat().st_size
    except OSError:
        return 0


def project_pass(outcomes: Sequence[FileOutcome], settings: RunSettings) -> List[Diagnostic]:
    """The findings that wait for other files, decided over every file's record (each
    decoded once here)."""
    rules = [rule for rule in all_rules() if rule.project_rule and rule.code in settings.codes]
    if not rules:
        return []
    records = {}
    for outcome in outcomes:
        record = RecordText.of(outcome.record).decode()
        if record is not None:
            records[outcome.display] = record
    return project_findings(records, rules, settings.config)


MAX_PROJECT_ROUNDS = 5


def _fix_project(
    outcomes: Sequence[FileOutcome], diagnostics: List[Diagnostic], settings: RunSettings
) -> List[Diagnostic]:
    """Project-level fixes to a fixpoint, as per-file fixes are: a file a project fix
    changed is fixed and linted again, its facts renewed, and the project pass rerun,
    until no project fix applies (bounded). Two fixes that overlap (both insert
    `import torch` at the top) are thus applied in turn, and a second --fix finds
    nothing left."""
    for _ in range(MAX_PROJECT_ROUNDS):
        diagnostics, changed = apply_project_fixes(outcomes, diagnostics, settings)
        if not changed:
            break
        for outcome in changed:
            _refix(outcome, settings)
        diagnostics = project_pass(outcomes, settings)
    return diagnostics


def _refix(outcome: FileOutcome, settings: RunSettings) -> None:
    """Fix and lint a file's fixed text again after a project-level fix changed it."""
    rules = rules_for(outcome.display, settings)
    fixed = _fixed(outcome.fixed_text, outcome.display, rules, outcome.original.newline, settings, outcome.layout)
    outcome.diagnostics = list(fixed.result.diagnostics)
    outcome.record = RecordText.of(fixed.result.facts)
    outcome.errors.extend(e for e in fixed.result.errors if e not in outcome.errors)
    outcome.warnings.extend(w for w in fixed.dropped if w not in outcome.warnings)
    outcome.fixed_text = fixed.text
    outcome.applied.update(fixed.applied)
    if outcome.source is not None:
        outcome.source = fixed.text


def apply_project_fixes(
    outcomes: Sequence[FileOutcome], diagnostics: List[Diagnostic], settings: RunSettings
) -> Tuple[List[Diagnostic], List[FileOutcome]]:
    """Apply the fixes of project-level findings to their files' (already fixed) text;
    return the findings that remain and the outcomes whose text changed."""
    by_file: Dict[str, List[Diagnostic]] = {}
    for diagnostic in diagnostics:
        if is_applicable(diagnostic.fix, settings.unsafe):
            by_file.setdefault(diagnostic.filename, []).append(diagnostic)
    remaining = [d for d in diagnostics if not any(d in group for group in by_file.values())]
    outcomes_by_name = {outcome.display: outcome for outcome in outcomes}
    changed: List[FileOutcome] = []
    for filename, group in by_file.items():
        outcome = outcomes_by_name.get(filename)
        if outcome is None or not _load_original(outcome):
            remaining.extend(group)
            continue
        if outcome.layout is not None:
            remaining.extend(d for d in group if not outcome.layout.admits(outcome.fixed_text, d.fix))
            group = [d for d in group if outcome.layout.admits(outcome.fixed_text, d.fix)]
        checked = apply_checked(outcome.fixed_text, [(d.code, d.fix) for d in group])
        if checked.indices and not parses(checked.text):
            outcome.warnings.append(f"{filename}: a project-level fix produced code that does not parse; not applied")
            remaining.extend(group)
            continue
        outcome.warnings.extend(dropped_message(group[index], problem) for index, problem in checked.dropped)
        if checked.indices:
            changed.append(outcome)
        outcome.fixed_text = checked.text
        if outcome.layout is not None:
            outcome.layout.moved(checked.spans)
        outcome.applied.update(checked.applied)
        remaining.extend(d for index, d in enumerate(group) if index not in checked.indices)
    return remaining, changed


def _load_original(outcome: FileOutcome) -> bool:
    if outcome.fixed_text is not None:
        return True
    try:
        data = Path(outcome.display).read_bytes()
        if is_notebook(outcome.display):
            outcome.original = read_notebook(data)
            outcome.notebook, outcome.layout = outcome.original, outcome.original.layout.copy()
        else:
            outcome.original = decode_source(data)
    except (OSError, DecodeError, NotebookError):
        return False
    outcome.linted = Snapshot.of(data)
    outcome.fixed_text = outcome.original.text
    return True


def _finish_fix(outcome: FileOutcome, path: Optional[Path], settings: RunSettings) -> bool:
    """Write the fixed text (`torchlint.fixing.write`: only over the bytes that were linted), or
    keep its diff (`--diff`), or keep it for stdout. False if the file changed since it
    was read, so the fixes were not written: the guard doing its job, not an error."""
    if outcome.original is None or not outcome.applied:
        return True
    if settings.mode == "diff":
        if outcome.layout is not None:
            outcome.diff = outcome.notebook.diff(outcome.display, outcome.fixed_text, outcome.layout)
        else:
            outcome.diff = unified_diff(outcome.display, outcome.original.text, outcome.fixed_text)
        return True
    if path is None:
        return True
    try:
        write_fixed(path, fixed_bytes(outcome), outcome.linted)
    except ChangedDuringRun:
        outcome.warnings.append(f"{outcome.display}: changed during the run, so its fixes were not written; its findings stay")
        return False
    except (OSError, NotebookError) as error:
        outcome.errors.append(f"{outcome.display}: cannot write the fixed file: {error}")
        outcome.applied = Counter()
    return True


def _unfixed(outcome: FileOutcome, settings: RunSettings) -> None:
    """A file whose fixes were not written: its findings (and facts) are those of the text
    that was read, as a run without --fix reports them."""
    rules = rules_for(outcome.display, settings)
    if outcome.notebook is not None:
        outcome.layout = outcome.notebook.layout.copy()
    result = lint_text(outcome.original.text, outcome.display, settings.config, rules, newline=outcome.original.newline)
    outcome.diagnostics = list(result.diagnostics)
    outcome.record = RecordText.of(result.facts)
    outcome.fixed_text = outcome.original.text
    outcome.applied = Counter()
    if outcome.source is not None:
        outcome.source = outcome.original.text
