"""Run one command and measure it: wall time, CPU time and peak memory of its process tree.

- wall: `time.perf_counter()` from just before the spawn to the reaping of the child.
- CPU: user + system time from `os.wait4`. The kernel adds to a process's counts the
  times of the descendants it has reaped, so this is the whole tree as long as every
  worker was waited for (a process pool joins its workers before it exits).
- peak RSS per process: `ru_maxrss` from `os.wait4`, which on Linux is the largest peak
  RSS of the child or of any descendant it reaped: the biggest single process, not a
  sum. Linux carries the pre-`exec` high-water mark across `exec`, so a value can never
  be below the RSS of this (small) benchmark process at spawn time.
- peak RSS of the tree: the sum of the current RSS of the child and all its
  descendants (`/proc/PID/task/*/children`), sampled every 20 ms. It counts pages shared
  by forked workers once per process (an over-estimate) and can miss a peak shorter
  than the sampling interval (an under-estimate).
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

SAMPLE_SECONDS = 0.02
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Sample:
    wall: float
    cpu: float
    rss_process: int  # bytes
    rss_tree: int  # bytes
    exit_code: int
    timed_out: bool = False
    stderr_tail: str = ""


def descendants(pid: int) -> list:
    """`pid` and every process below it, as far as /proc shows them right now."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                children = Path(f"/proc/{current}/task/{task}/children").read_text().split()
            except OSError:
                continue
            pending.extend(int(child) for child in children)
    return found


def resident_bytes(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/statm").read_text().split()
    except OSError:
        return 0
    return int(fields[1]) * PAGE_SIZE


class TreeSampler(threading.Thread):
    """Polls the summed RSS of a process tree; kills the tree's group past `timeout`."""

    def __init__(self, pid: int, timeout: Optional[float]) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.deadline = time.monotonic() + timeout if timeout else None
        self.peak = 0
        self.timed_out = False
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(SAMPLE_SECONDS):
            self.peak = max(self.peak, sum(resident_bytes(p) for p in descendants(self.pid)))
            if self.deadline is not None and time.monotonic() > self.deadline:
                self.timed_out = True
                _kill_group(self.pid)
                return

    def stop(self) -> None:
        self._done.set()
        self.join()


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def measure(argv: Sequence[str], cwd: Path, timeout: Optional[float] = None) -> Sample:
    """Run `argv` in `cwd` with its output discarded (stderr kept for errors) and measure it."""
    with tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        child = subprocess.Popen(
            list(argv),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,  # its own process group, so a timeout kills the workers too
        )
        sampler = TreeSampler(child.pid, timeout)
        sampler.start()
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        sampler.stop()
        child.returncode = os.waitstatus_to_exitcode(status)
        stderr.seek(0)
        tail = stderr.read()[-2000:].decode("utf-8", "replace")
    return Sample(
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        rss_process=usage.ru_maxrss * 1024,
        rss_tree=max(sampler.peak, usage.ru_maxrss * 1024),  # a tree is never smaller than its largest process
        exit_code=child.returncode,
        timed_out=sampler.timed_out,
        stderr_tail=tail,
    )
