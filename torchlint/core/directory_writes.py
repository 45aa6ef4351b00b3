"""Writes inside a directory torchlint opened: a temporary file made there (never through a
link), filled, then renamed over its name, both relative to the directory's descriptor. A
reader sees the old file or the new one; a directory swapped for a link after it was
opened cannot redirect the write; the temporary file goes whatever fails."""

from __future__ import annotations

import errno
import os
from contextlib import suppress
from typing import Callable, Optional

DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
READ = os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def open_directory(path: str, follow: bool = True) -> int:
    """A descriptor of the directory at `path` (a link there is followed only if `follow`)."""
    return os.open(path, DIRECTORY if follow else DIRECTORY | NOFOLLOW)


def write_all(handle: int, data: bytes, durable: bool = True) -> None:
    """Write every byte of `data` (a full disk raises ENOSPC), and if `durable` flush it
    to the disk."""
    view = memoryview(data)
    while view:
        written = os.write(handle, view)
        if written == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]
    if durable:
        os.fsync(handle)


def replace_in(
    directory: int,
    name: str,
    data: bytes,
    temp: str,
    mode: int = 0o644,
    prepare: Optional[Callable[[int], None]] = None,
    durable: bool = True,
) -> None:
    """Replace `name` in `directory` with `data` by way of the new file `temp` (its mode
    `mode`, then `prepare(descriptor)` for owner and mode; flushed to the disk if
    `durable`); a link at `name` is replaced, never followed. Raises OSError."""
    handle = os.open(temp, CREATE, mode, dir_fd=directory)
    try:
        try:
            write_all(handle, data, durable)
            if prepare is not None:
                prepare(handle)
        finally:
            os.close(handle)
        os.replace(temp, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        with suppress(OSError):
            os.unlink(temp, dir_fd=directory)
        raise
