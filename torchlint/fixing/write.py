"""Write a fixed file back without losing a byte: the link is kept, so are owner, group and
mode; the file must still hold what was linted; temp files never outlive the run."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Set

from torchlint.core.interrupts import signals_deferred

_LIVE_TEMP_FILES: Set[str] = set()


class ChangedDuringRun(Exception):
    """The file on disk no longer holds the bytes that were linted."""


@dataclass(frozen=True)
class Snapshot:
    """What was linted: enough to tell whether the file still holds it."""

    size: int
    digest: str

    @classmethod
    def of(cls, data: bytes) -> "Snapshot":
        return cls(len(data), hashlib.blake2b(data, digest_size=20).hexdigest())

    def matches(self, data: bytes) -> bool:
        return len(data) == self.size and Snapshot.of(data).digest == self.digest


def write_fixed(path: Path, data: bytes, linted: Snapshot) -> None:
    """Replace the file's content with `data` if it still holds the linted bytes, else
    raise ChangedDuringRun. A symlink's target is written (the link stays); a file with
    several hard links is rewritten in place so that every link sees the fix; owner,
    group and mode are kept."""
    target = Path(os.path.realpath(path))
    with signals_deferred():
        try:
            with open(target, "rb") as current:
                before = os.fstat(current.fileno())
                held = current.read() if before.st_size == linted.size else b""
        except FileNotFoundError:  # deleted (or renamed away) since it was read
            raise ChangedDuringRun(str(path)) from None
        if not linted.matches(held):
            raise ChangedDuringRun(str(path))
        if before.st_nlink > 1:
            _rewrite_in_place(target, data, held)
            return
        try:
            _replace(target, data, before)
        except PermissionError:
            if os.access(target.parent, os.W_OK):
                raise
            _rewrite_in_place(target, data, held)  # a writable file in a read-only directory


def _replace(target: Path, data: bytes, before: os.stat_result) -> None:
    """Temp file beside the target, then one rename: a reader sees the old or the new file."""
    handle, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    _LIVE_TEMP_FILES.add(temp_name)
    try:
        with os.fdopen(handle, "wb") as temp:
            temp.write(data)
            temp.flush()
            os.fsync(temp.fileno())
        _copy_owner(temp_name, before)
        os.chmod(temp_name, stat.S_IMODE(before.st_mode))  # after chown, which clears setuid
        os.replace(temp_name, target)
    finally:
        if os.path.lexists(temp_name):
            os.unlink(temp_name)
        _LIVE_TEMP_FILES.discard(temp_name)


def _rewrite_in_place(target: Path, data: bytes, old: bytes) -> None:
    """A rename would split the hard links, so the same inode is overwritten. Not atomic: a
    crash mid-write (power loss, SIGKILL) can leave it partial, which is the price of keeping
    the links; a failed write puts the old bytes back. Owner and mode are untouched."""
    with open(target, "r+b") as handle:
        try:
            _overwrite(handle, data)
        except OSError:
            _overwrite(handle, old)
            raise


def _overwrite(handle, data: bytes) -> None:
    handle.seek(0)
    handle.write(data)
    handle.truncate(len(data))
    handle.flush()
    os.fsync(handle.fileno())


def _copy_owner(temp_name: str, before: os.stat_result) -> None:
    here = os.stat(temp_name)
    if (here.st_uid, here.st_gid) == (before.st_uid, before.st_gid):
        return
    try:
        os.chown(temp_name, before.st_uid, before.st_gid)
    except OSError as error:  # not root: the file becomes ours, as any editor would do
        if error.errno != errno.EPERM:
            raise


def remove_temp_files() -> None:
    """Remove the temp files of writes cut short (called when the run is stopped)."""
    for name in list(_LIVE_TEMP_FILES):
        try:
            os.unlink(name)
        except FileNotFoundError:
            pass
        _LIVE_TEMP_FILES.discard(name)
