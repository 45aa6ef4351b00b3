"""The worker pool of the per-file pass: how many workers, and the files linted in parallel, largest first."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, List, Optional

from torchlint.core.interrupts import signals_deferred, worker_signals
from torchlint.run.per_file import process_file

if TYPE_CHECKING:
    from torchlint.run.jobs import FileOutcome, RunSettings

# fewer files than this are linted in the parent: a pool costs more than it saves
SERIAL_BELOW = 24


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


def lint_in_parallel(jobs_in, settings: RunSettings, workers: int) -> List[FileOutcome]:
    """Largest files first, in small chunks, so that no worker is left with the heavy tail.
    If the run is stopped (^C, SIGTERM, an error), the workers are killed, never orphaned."""
    import gc
    import multiprocessing
    from functools import partial

    from torchlint.core.lazy import cst, load

    order = sorted(range(len(jobs_in)), key=lambda index: -_size(jobs_in[index]))
    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    outcomes: List[Optional[FileOutcome]] = [None] * len(jobs_in)
    # LibCST loaded once, here, rather than by every worker after the fork; and what is
    # loaded so far kept out of the workers' collections, whose scans would copy its pages
    load(cst)
    frozen_before = gc.get_freeze_count() > 0  # a caller's freeze (the server's) is its own to undo
    gc.freeze()
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
        if not frozen_before:
            gc.unfreeze()
    return outcomes


def _size(job) -> int:
    _, path, data = job
    if data is not None:
        return len(data)
    try:
        return path.stat().st_size
    except OSError:
        return 0
