"""Write a fixed file back without losing a byte: the link is kept, so are owner, group and
mode; the file must still hold what was linted; temp files never outlive the run."""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Set

from torchlint.core.directory_writes import NOFOLLOW, READ, open_directory, replace_in
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
    group and mode are kept. Everything happens relative to the target's directory, opened
    once: no link met after that (a file or the directory swapped meanwhile) is followed."""
    target = Path(os.path.realpath(path))
    with signals_deferred():
        try:
            directory = open_directory(str(target.parent))
        except FileNotFoundError:  # moved away since it was read
            raise ChangedDuringRun(str(path)) from None
        try:
            _write_in(directory, target, data, linted, str(path))
        finally:
            os.close(directory)


def _write_in(directory: int, target: Path, data: bytes, linted: Snapshot, shown: str) -> None:
    try:
        current = os.fdopen(os.open(target.name, READ, dir_fd=directory), "rb")
    except FileNotFoundError:  # deleted (or renamed away) since it was read
        raise ChangedDuringRun(shown) from None
    except OSError as error:
        if error.errno == errno.ELOOP:  # made a link since it was read
            raise ChangedDuringRun(shown) from None
        raise
    with current:
        before = os.fstat(current.fileno())
        held = current.read() if stat.S_ISREG(before.st_mode) and before.st_size == linted.size else b""
    if not linted.matches(held):
        raise ChangedDuringRun(shown)
    if before.st_nlink > 1:
        _rewrite_in_place(directory, target.name, data, held)
        return
    try:
        _replace(directory, target, data, before)
    except PermissionError:
        if os.access(target.parent, os.W_OK):
            raise
        _rewrite_in_place(directory, target.name, data, held)  # a writable file in a read-only directory


def _replace(directory: int, target: Path, data: bytes, before: os.stat_result) -> None:
    """Temp file beside the target, then one rename: a reader sees the old or the new file."""
    temp = f".{target.name}.{secrets.token_hex(4)}.tmp"
    shown = str(target.parent / temp)
    _LIVE_TEMP_FILES.add(shown)
    try:
        replace_in(directory, target.name, data, temp, prepare=lambda handle: _keep_owner_and_mode(handle, before))
    finally:
        _LIVE_TEMP_FILES.discard(shown)


def _rewrite_in_place(directory: int, name: str, data: bytes, old: bytes) -> None:
    """A rename would split the hard links, so the same inode is overwritten. Not atomic: a
    crash mid-write (power loss, SIGKILL) can leave it partial, which is the price of keeping
    the links; a failed write puts the old bytes back. Owner and mode are untouched."""
    with os.fdopen(os.open(name, os.O_RDWR | NOFOLLOW, dir_fd=directory), "r+b") as handle:
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


def _keep_owner_and_mode(handle: int, before: os.stat_result) -> None:
    here = os.fstat(handle)
    if (here.st_uid, here.st_gid) != (before.st_uid, before.st_gid):
        try:
            os.fchown(handle, before.st_uid, before.st_gid)
        except OSError as error:  # not root: the file becomes ours, as any editor would do
            if error.errno != errno.EPERM:
                raise
    os.fchmod(handle, stat.S_IMODE(before.st_mode))  # after chown, which clears setuid


def remove_temp_files() -> None:
    """Remove the temp files of writes cut short (called when the run is stopped)."""
    for name in list(_LIVE_TEMP_FILES):
        try:
            os.unlink(name)
        except FileNotFoundError:
            pass
        _LIVE_TEMP_FILES.discard(name)
