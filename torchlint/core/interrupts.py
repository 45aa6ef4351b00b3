"""^C and SIGTERM stop a run cleanly: SIGTERM raises Terminated as ^C raises
KeyboardInterrupt, and the few steps that must not be cut in half defer both."""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


class Terminated(BaseException):
    """SIGTERM arrived: unwinds the run like ^C does (workers stopped, temp files removed)."""


def raise_on_sigterm():
    """Make SIGTERM raise Terminated in this process (a forked child that has not yet set
    its own handler just exits); the previous handler, or None where none can be set."""
    owner = os.getpid()

    def terminate(signum, frame):
        if os.getpid() != owner:
            os._exit(128 + signum)
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, terminate)
    except ValueError:  # not the main thread
        return None
    if not getattr(sys.unraisablehook, "terminates_again", False):
        sys.unraisablehook = _terminated_again(sys.unraisablehook)
    return signal.SIG_DFL if previous is None else previous  # None: set outside Python


def _terminated_again(previous):
    """An unraisable-exception hook for Terminated raised where Python cannot pass it on (the
    signal arrived inside a weakref callback, such as importlib's module-lock one, or a
    `__del__`): nothing is printed, and SIGTERM is sent again, from another thread once this
    hook has returned (a tenth of a second later), so that the process unwinds at its next
    step instead of running on; any other exception goes to `previous`."""

    def hook(unraisable) -> None:
        if isinstance(unraisable.exc_value, Terminated):
            again = threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGTERM))
            again.daemon = True  # a process that ends first is not held up, nor signalled as it exits
            again.start()
            return
        previous(unraisable)

    hook.terminates_again = True
    return hook


@contextmanager
def signals_deferred() -> Iterator[None]:
    """^C or SIGTERM take effect when the block is done, never half-way through it. Child
    processes forked inside it start with both blocked (see `worker_signals`)."""
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    except (AttributeError, ValueError):  # not on POSIX, or not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def worker_signals() -> None:
    """A worker process ignores ^C (the terminal sends it to the whole group; the parent
    handles it) and is simply ended by SIGTERM, which is how the parent stops it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
