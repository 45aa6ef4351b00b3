"""A stopped run leaves no worker process and no temp file behind (issue 8, D)."""

from __future__ import annotations

import signal

import pytest

from process_support import make_tree, start_cli, stop, wait_for_children, wait_gone


@pytest.mark.slow
@pytest.mark.parametrize("signum, code, word", [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")])
def test_a_signal_in_the_parallel_phase_stops_the_workers(tmp_path, signum, code, word):
    make_tree(tmp_path / "tree")
    before = sorted(p.name for p in (tmp_path / "tree").iterdir())
    process = start_cli("check", "--fix", "--no-cache", "--jobs", "2", "tree", cwd=tmp_path)
    workers = wait_for_children(process, 2)
    try:
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == code
        assert stderr.decode().splitlines() == [f"torchlint: {word}"]
        assert not wait_gone(workers), "worker processes outlived the run"
    finally:  # a failed run must not leave processes behind either
        stop(process, workers)
    assert sorted(p.name for p in (tmp_path / "tree").iterdir()) == before  # no .tmp left


_WRITE_INTERRUPTED = """
import os, signal, sys
from pathlib import Path
from torchlint.core.interrupts import Terminated, raise_on_sigterm
from torchlint.fixing.write import Snapshot, write_fixed

path = Path(sys.argv[1])
real_fsync = os.fsync

def fsync_then_signal(fd):
    real_fsync(fd)
    os.kill(os.getpid(), signal.SIGTERM)

raise_on_sigterm()
os.fsync = fsync_then_signal
try:
    write_fixed(path, b"a = 2\\n", Snapshot.of(b"a = 1\\n"))
except Terminated:
    sys.exit(143)
sys.exit(0)
"""


@pytest.mark.slow
def test_sigterm_during_a_write_takes_effect_once_the_file_is_whole(tmp_path):
    # SIGTERM arrives while the temp file is being synced: the write completes (no temp
    # file, no half-written file), then the run stops. In a process of its own, as the
    # CLI's: a process-directed signal goes to any thread that does not block it, and the
    # test process has other threads (torch's, once a test has imported it).
    import subprocess
    import sys

    path = tmp_path / "x.py"
    path.write_bytes(b"a = 1\n")
    completed = subprocess.run([sys.executable, "-c", _WRITE_INTERRUPTED, str(path)], capture_output=True, timeout=60)
    assert completed.returncode == 143, completed.stderr.decode()
    assert path.read_bytes() == b"a = 2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["x.py"]


_TERMINATED_IN_A_CALLBACK = """
import gc, os, signal, sys, weakref
from torchlint.core.interrupts import Terminated, raise_on_sigterm

class Held:
    pass

raise_on_sigterm()
held = Held()
# SIGTERM handled inside a weakref callback, where an exception can only be "ignored" (as in
# importlib's module-lock callback while a module is being imported)
watch = weakref.ref(held, lambda ref: (os.kill(os.getpid(), signal.SIGTERM), sum(range(1000))))
try:
    del held
    gc.collect()
    for _ in range(10 ** 7):
        pass
except Terminated:
    sys.exit(143)
sys.exit(0)
"""


@pytest.mark.slow
def test_sigterm_inside_a_callback_still_stops_the_process_and_prints_nothing():
    # the language server's project worker printed "Exception ignored in: <function
    # _get_module_lock.<locals>.cb ...>" with a Terminated traceback when stopped mid-import
    import subprocess
    import sys

    completed = subprocess.run([sys.executable, "-c", _TERMINATED_IN_A_CALLBACK], capture_output=True, timeout=60)
    assert completed.returncode == 143, completed.stderr.decode()
    assert completed.stderr == b""
