"""`check --watch`: run again whenever a checked file changes, until ^C (exit 0), as ruff does.

Cost: every POLL_SECONDS, one discovery walk of the paths and one `stat` per file found."""

from __future__ import annotations

import os
import sys
import time
from typing import Callable, Dict, List, Optional, Tuple

from torchlint.core.console import EXIT_CLEAN

POLL_SECONDS = 0.5


def watch(run: Callable[[], int], jobs: Callable[[], List]) -> int:
    """Run `run` now and after every change to the files `jobs` finds (added, removed,
    written); ^C ends the loop with exit 0."""
    try:
        print("Starting linter in watch mode...", file=sys.stderr, flush=True)
        run()
        sys.stdout.flush()
        seen = _state(jobs())
        while True:
            time.sleep(POLL_SECONDS)
            now = _state(jobs())
            if now != seen:
                seen = now
                print("File change detected...", file=sys.stderr, flush=True)
                run()
                sys.stdout.flush()
    except KeyboardInterrupt:
        return EXIT_CLEAN


def _state(found: List) -> Dict[str, Optional[Tuple[int, int]]]:
    state: Dict[str, Optional[Tuple[int, int]]] = {}
    for display, path, _ in found:
        try:
            info = os.stat(path if path is not None else display)
            state[display] = (info.st_mtime_ns, info.st_size)
        except OSError:
            state[display] = None
    return state
