"""Run the per-file pass over many files (cached, in parallel), then the project pass."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from torchlint.run.cache import Cache
from torchlint.run.jobs import RunResult
from torchlint.run.notebook_cells import read_cached_notebooks, with_cell_positions
from torchlint.run.per_file import lookup, process_file, run_cache, store_outcomes
from torchlint.run.pool import SERIAL_BELOW, lint_in_parallel, worker_count
from torchlint.run.project import cached_project_pass, project_pass
from torchlint.run.project_fixes import finish_fix, fix_project, restore_unfixed

if TYPE_CHECKING:
    from torchlint.run.jobs import FileOutcome, Job, RunSettings


def run(
    jobs_in: Sequence[Tuple[str, Optional[Path], Optional[bytes]]],
    settings: RunSettings,
    workers: Optional[int] = None,
) -> RunResult:
    """Every file's outcome (in input order) and all diagnostics, project rules included."""
    cache = run_cache(settings) if settings.use_cache else None
    outcomes = lint_files(jobs_in, settings, workers, cache)
    project = cached_project_pass(outcomes, settings, cache)
    if cache is not None:
        cache.save()
    if settings.mode != "check":
        project = fix_project(outcomes, project, settings)
        refused = [outcome for outcome, job in zip(outcomes, jobs_in) if not finish_fix(outcome, job[1], settings)]
        if refused:
            for outcome in refused:
                restore_unfixed(outcome, settings)
            project = project_pass(outcomes, settings)
    read_cached_notebooks(outcomes, project, settings)
    project = with_cell_positions(outcomes, project)
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
        cache = run_cache(settings)
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
        fresh = lint_in_parallel([job for _, job in misses], settings, workers)
    for (index, _), outcome in zip(misses, fresh):
        outcomes[index] = outcome
    for outcome, key in zip(outcomes, keys):
        outcome.key = key
    if cache is not None:
        store_outcomes(cache, fresh, settings)
        if own_cache:
            cache.save()
    return outcomes
