"""The user's secret cache key: what makes a cache entry this user's torchlint's own work.

A cache directory lies in the repository being linted, which is not trusted: a pack
committed to it (or edited there) could otherwise carry findings that hide a problem,
or fixes that `--fix` would write. Every pack is therefore signed with HMAC-SHA256
under a random key kept outside any repository, readable by its owner only
(`$XDG_CACHE_HOME/torchlint/cache-key`, by default `~/.cache/torchlint/cache-key`, only
where `torchlint.run.key_location` finds that place out of the repository's reach).
A pack whose signature does not verify is a cache miss: the file is linted again.
The key file is read only if it is a regular file of this user's, private to them; it is
opened without blocking (a FIFO there is refused, not waited on) and written by a
temporary file linked into place, removed whatever fails.
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from contextlib import suppress
from hashlib import sha256
from pathlib import Path
from typing import Optional

from torchlint.core.directory_writes import CREATE, READ, open_directory, write_all
from torchlint.run.key_location import KeyRefused, check_owner, key_directory

KEY_NAME = "cache-key"
KEY_BYTES = 32


def _key_at(path: Path) -> bytes:
    """The key in `path`, made if missing; KeyRefused where it cannot be kept safely."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        check_owner(path.parent)
        directory = open_directory(os.path.realpath(path.parent))
        try:
            if os.fstat(directory).st_uid != os.getuid():  # swapped since it was checked
                raise ValueError(f"{path.parent}: not this user's directory")
            try:
                return _read_key(directory, path)
            except FileNotFoundError:
                _create_key(directory)
                return _read_key(directory, path)
        finally:
            os.close(directory)
    except ValueError as error:
        raise KeyRefused(str(error)) from None
    except OSError as error:
        raise KeyRefused(f"{path}: {error.strerror or error}") from None


def user_key(project: Optional[Path] = None) -> bytes:
    """This user's key, created on first use, for a run on `project` (default: the
    working directory); KeyRefused where it cannot be kept out of the repository's reach
    (then nothing is cached)."""
    return _key_at(key_directory(project if project is not None else Path.cwd()) / KEY_NAME)


def _read_key(directory: int, path: Path) -> bytes:
    handle = os.open(KEY_NAME, READ, dir_fd=directory)
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise ValueError(f"{path}: not a private file of this user")
        key = bytes.fromhex(os.read(handle, 4 * KEY_BYTES).decode("ascii").strip())
    finally:
        os.close(handle)
    if len(key) != KEY_BYTES:
        raise ValueError(f"{path}: not a key")
    return key


def _create_key(directory: int) -> None:
    """Write a new key atomically; where another process won the race, its key stands.
    The temporary file goes whatever fails (a full disk leaves nothing behind)."""
    temp = f".{KEY_NAME}.{secrets.token_hex(8)}"
    handle = os.open(temp, CREATE, 0o600, dir_fd=directory)
    try:
        try:
            write_all(handle, secrets.token_hex(KEY_BYTES).encode("ascii") + b"\n")
        finally:
            os.close(handle)
        try:  # a link fails where a key already exists: it never replaces one
            os.link(temp, KEY_NAME, src_dir_fd=directory, dst_dir_fd=directory, follow_symlinks=False)
        except FileExistsError:
            pass
    finally:
        with suppress(OSError):
            os.unlink(temp, dir_fd=directory)


def signature(key: bytes, name: str, body: bytes) -> str:
    """The signature of a pack's `body` stored under `name` (a pack cannot pass for another)."""
    mac = hmac.new(key, name.encode("utf-8", "surrogateescape") + b"\0", sha256)
    mac.update(body)
    return mac.hexdigest()


def verified(key: bytes, name: str, signed: bytes) -> Optional[bytes]:
    """The body of a signed pack (`<signature>\\n<body>`), or None if it is not authentic."""
    stated, newline, body = signed.partition(b"\n")
    if not newline:
        return None
    try:
        return body if hmac.compare_digest(stated.decode("ascii"), signature(key, name, body)) else None
    except UnicodeDecodeError:
        return None


def signed(key: bytes, name: str, body: bytes) -> bytes:
    return signature(key, name, body).encode("ascii") + b"\n" + body
