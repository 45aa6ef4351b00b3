"""Reads of untrusted files (sources, notebooks, `.gitignore`, configs, a baseline, a doctor
facts record, a log) that cannot block or exhaust memory or the stack: a special file
(`/dev/zero`, a FIFO, a device) is refused unread, one beyond a bound is refused from its
size before it is read, and JSON nested too deeply for the decoder is refused as invalid."""

from __future__ import annotations

import json
import os
import stat
from typing import Any, BinaryIO, Optional


class ReadRefused(Exception):
    """The file was not read; the message says why (without the file's name)."""


def read_bounded(path: os.PathLike, limit: int, follow: bool = True, within: Optional[os.PathLike] = None) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; ReadRefused otherwise (OSError
    if it cannot be opened, or, unless `follow`, if it is a symbolic link). Given `within`
    (a project's directory), a path that leads out of it, by a link or not, is refused unread. A FIFO is
    opened without waiting for a writer, and closed unread."""
    if within is not None and not is_inside(os.path.realpath(path), os.path.realpath(within)):
        raise ReadRefused("a symbolic link out of the project" if os.path.islink(path) else "outside the project")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(path, flags)
    with os.fdopen(descriptor, "rb") as handle:
        return read_regular(handle, limit)


def is_inside(path: str, tree: str) -> bool:
    """Whether the path `path` is `tree` or lies under it (both resolved, or both not)."""
    return path == tree or path.startswith(tree.rstrip(os.sep) + os.sep)


def read_regular(handle: BinaryIO, limit: int) -> bytes:
    """The bytes of an open regular file of at most `limit` bytes; ReadRefused otherwise,
    told from its size before anything is read (and read in one buffer of that size, not
    one of `limit`)."""
    info = os.fstat(handle.fileno())
    if not stat.S_ISREG(info.st_mode):
        raise ReadRefused("not a regular file")
    if info.st_size > limit:
        raise ReadRefused(f"larger than {_size(limit)}")
    data = handle.read(info.st_size + 1)
    if len(data) > info.st_size:  # it grew since: read on, up to the bound
        data += handle.read(limit + 1 - len(data))
    if len(data) > limit:
        raise ReadRefused(f"larger than {_size(limit)}")
    return data


def read_stream(handle: BinaryIO, limit: int) -> bytes:
    """At most `limit` bytes of a stream (stdin); ReadRefused if there are more."""
    data = handle.read(limit + 1)
    if len(data) > limit:
        raise ReadRefused(f"larger than {_size(limit)}")
    return data


def loads_json(text: str) -> Any:
    """json.loads, with nesting too deep for the decoder a ValueError like any other
    invalid JSON (the decoder raises RecursionError)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit} bytes"
