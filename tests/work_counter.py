"""Work done by a run, counted rather than timed: every Python function call, by the
module that defines the function (torchlint's own modules by their path in the repository,
`rules/...` included; everything else by its top-level package). A count does not depend
on the machine's load, so the complexity suite can compare runs at n and 2n exactly."""

from __future__ import annotations

import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Callable, Dict

REPOSITORY = Path(__file__).resolve().parent.parent
_OWN_ROOTS = (str(REPOSITORY / "torchlint") + "/", str(REPOSITORY / "rules") + "/")


def _group(filename: str, cache: Dict[str, str]) -> str:
    group = cache.get(filename)
    if group is None:
        if filename.startswith(_OWN_ROOTS):
            group = str(Path(filename).relative_to(REPOSITORY))
        elif "site-packages/" in filename:
            group = filename.split("site-packages/", 1)[1].split("/", 1)[0]
        else:
            group = "python"
        cache[filename] = group
    return group


def count_calls(run: Callable[[], object]) -> Counter:
    """Calls made while `run()` runs, per module group: in this thread and in the threads
    it starts (the engine lints a file in a thread with a deep stack)."""
    by_file: Counter = Counter()

    def profile(frame, event, arg):
        if event == "call":
            by_file[frame.f_code.co_filename] += 1

    previous = sys.getprofile()
    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(previous)
        threading.setprofile(None)
    groups: Counter = Counter()
    names: Dict[str, str] = {}
    for filename, calls in by_file.items():
        groups[_group(filename, names)] += calls
    return groups
