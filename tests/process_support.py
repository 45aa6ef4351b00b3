"""Start the real CLI in the background on a tree big enough for its parallel phase, and
watch its worker processes through /proc."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Set

MODULE = (
    "import wandb\nimport torch\n\n\n"
    "def train(model, batches):\n    wandb.init()\n"
    "    for x in batches:\n        loss = model(x).sum()\n        loss.backward()\n"
    "        total = loss.item()\n    return total\n"
)


def make_tree(root: Path, files: int = 300) -> None:
    """`files` modules that TL001 fixes, a few hundred lines each (the parallel phase lasts
    seconds on two cores)."""
    root.mkdir(parents=True, exist_ok=True)
    filler = "".join(f"\n\ndef helper_{n}(a, b):\n    return [a * i + b for i in range(a)]\n" for n in range(40))
    for index in range(files):
        (root / f"m{index:03}.py").write_text(MODULE + filler)


def start_cli(*args, cwd) -> subprocess.Popen:
    """The CLI as a terminal would start it: with ^C's default action, even where the tests
    run with SIGINT ignored (a shell's background job), which Python would keep ignoring."""
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "torchlint", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def children(pid: int) -> Set[int]:
    found: Set[int] = set()
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found.update(int(child) for child in handle.read().split())
    except (FileNotFoundError, ProcessLookupError):
        pass
    return found


def wait_for_children(process: subprocess.Popen, count: int, timeout: float = 60) -> Set[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = children(process.pid)
        if len(found) >= count:
            return found
        if process.poll() is not None:
            raise AssertionError("the run ended before its workers were seen")
        time.sleep(0.005)
    raise AssertionError("no worker processes appeared")


def alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped is not)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pids: Set[int], timeout: float = 10) -> Set[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = {pid for pid in pids if alive(pid)}
        if not left:
            return left
        time.sleep(0.05)
    return {pid for pid in pids if alive(pid)}


def stop(process: subprocess.Popen, workers: Set[int]) -> None:
    """Kill what a test started, by pid, if it is still running."""
    for pid in workers:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    if process.poll() is None:
        process.kill()
        process.wait()
