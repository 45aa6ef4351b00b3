"""The cache directory handled as hostile ground.

`.torchlint_cache/` lies in the repository under review, which may have committed it
with symbolic links (to `../..`, to `~/.ssh/authorized_keys`) or, in a shared
directory, another user may have planted it. So:
- every file and directory is opened relative to its parent's descriptor with
  `O_NOFOLLOW`: nothing is read, written, pruned or deleted through a link;
- a directory not owned by the current user is refused (the whole cache is unused);
- only names torchlint writes (a pack, its temporary file, the prune marker, the
  directory tag and `.gitignore`) are ever replaced or deleted; a directory is removed
  only with `rmdir`, once what torchlint wrote in it is gone.
Reads are bounded by size and never block on a special file.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from contextlib import suppress
from typing import Iterator, Optional

from torchlint.core.bounded_read import ReadRefused, read_regular
from torchlint.core.directory_writes import DIRECTORY, NOFOLLOW, READ, open_directory, replace_in

SUPPORTED = os.open in os.supports_dir_fd and os.scandir in os.supports_fd and bool(NOFOLLOW)

PACK = re.compile(r"[0-9a-f]{32}\.(?:json|facts|project)")
TEMPORARY = re.compile(r"(?:[0-9a-f]{32}\.(?:json|facts|project)|CACHEDIR\.TAG|\.gitignore)\.[0-9a-f]{16}\.tmp")


class UntrustedCache(Exception):
    """The cache directory (or a part of it) is not this user's own plain directory."""


class Directory:
    """An open directory of the cache; every name is resolved inside it, links never followed."""

    def __init__(self, handle: int, label: str) -> None:
        self.handle = handle
        self.label = label

    @classmethod
    def at(cls, path: str) -> "Directory":
        """The directory at `path`, the project root the user named (links there are theirs)."""
        return cls(open_directory(path), path)

    @classmethod
    def open(cls, name: str, parent: Optional["Directory"] = None, create: bool = False) -> "Directory":
        """The directory `name` (inside `parent`, else a path), made if asked; refused
        (UntrustedCache) if it is a link, not a directory, or not owned by this user."""
        where = parent.handle if parent is not None else None
        label = f"{parent.label}/{name}" if parent is not None else name
        if create:
            with suppress(FileExistsError):
                os.mkdir(name, dir_fd=where)
        try:
            handle = os.open(name, DIRECTORY | NOFOLLOW, dir_fd=where)
        except OSError as error:
            info = _lstat(name, where)
            if info is not None and (stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode)):
                raise UntrustedCache(f"{label} is not a directory (a symbolic link or a file)") from None
            raise error
        if os.fstat(handle).st_uid != os.getuid():
            os.close(handle)
            raise UntrustedCache(f"{label} belongs to another user")
        return cls(handle, label)

    def close(self) -> None:
        with suppress(OSError):
            os.close(self.handle)

    def read(self, name: str, limit: int) -> Optional[bytes]:
        """The bytes of the regular file `name`, or None (missing, a link, special, over `limit`)."""
        try:
            handle = os.open(name, READ, dir_fd=self.handle)
        except OSError:
            return None
        with os.fdopen(handle, "rb") as stream:
            try:
                return read_regular(stream, limit)
            except (OSError, ReadRefused):
                return None

    def write(self, name: str, data: bytes, durable: bool = False) -> None:
        """Replace `name` atomically (a reader sees the old file or the new one); a link
        at `name` is replaced, never followed. Raises OSError."""
        replace_in(self.handle, name, data, f"{name}.{secrets.token_hex(8)}.tmp", durable=durable)

    def holds(self, name: str, data: bytes) -> bool:
        """Whether `name` is a regular file with exactly `data`."""
        return self.read(name, len(data)) == data

    def entries(self) -> Iterator[os.DirEntry]:
        with os.scandir(self.handle) as found:
            yield from found

    def stat(self, name: str) -> Optional[os.stat_result]:
        return _lstat(name, self.handle)

    def touch(self, name: str) -> None:
        """Create `name` or update its mtime; a link there is replaced, not followed."""
        info = self.stat(name)
        if info is not None and stat.S_ISREG(info.st_mode):
            os.utime(name, dir_fd=self.handle, follow_symlinks=False)
        else:
            self.write(name, b"")

    def unlink(self, name: str) -> None:
        with suppress(OSError):
            os.unlink(name, dir_fd=self.handle)

    def remove_own(self, name: str) -> None:
        """Delete the subdirectory `name` if it is this user's plain directory holding
        nothing but what torchlint writes (a version directory of another release)."""
        try:
            child = Directory.open(name, self)
        except (OSError, UntrustedCache):
            return
        try:
            for entry in child.entries():
                if written_by_torchlint(entry.name):
                    child.unlink(entry.name)
        finally:
            child.close()
        with suppress(OSError):
            os.rmdir(name, dir_fd=self.handle)


def written_by_torchlint(name: str) -> bool:
    """Whether `name` is one torchlint writes in a version directory."""
    return name == ".pruned" or PACK.fullmatch(name) is not None or TEMPORARY.fullmatch(name) is not None


def _lstat(name: str, where: Optional[int]) -> Optional[os.stat_result]:
    try:
        return os.stat(name, dir_fd=where, follow_symlinks=False)
    except OSError:
        return None
