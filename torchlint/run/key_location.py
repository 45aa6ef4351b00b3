"""Where the user's cache key may live: somewhere the repository being linted cannot reach.

Whoever can write the key can sign packs, so hide findings and make `--fix` write their
code (`torchlint.run.cache_key`). The key's directory, `$XDG_CACHE_HOME/torchlint` or
`~/.cache/torchlint`, is therefore used only where it is:
- absolute: a relative `XDG_CACHE_HOME` or `HOME`, an empty `HOME` (which would mean
  `/`), or an unset `HOME` for a uid without a password entry would put it under the
  working directory or the file system's root;
- outside the project, its git work tree and the working directory (a CI that points
  `XDG_CACHE_HOME` into its workspace, where a checkout can hold `.cache/torchlint/cache-key`);
  a tree that holds the home directory (`~`, `/`) is the user's own, no such risk (so `HOME`
  itself must not lie in a checkout);
- on a path whose directories are this user's or root's and writable by no one else
  (a world-writable one only if sticky), the key's own directory this user's.
Elsewhere nothing is cached and the run says why in one warning (`KeyRefused`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Iterator, Optional, Tuple

from torchlint.core.bounded_read import is_inside

KEY_DIRECTORY = "torchlint"


class KeyRefused(Exception):
    """The key cannot be kept safely; the message says why, in one line."""


def key_directory(project: Path) -> Path:
    """The directory that holds the key, not yet made; KeyRefused where it would be unsafe."""
    directory = os.path.join(_cache_home(), KEY_DIRECTORY)
    real = os.path.realpath(directory)
    for what, tree in _trees_the_repository_reaches(project):
        if is_inside(real, tree):
            raise KeyRefused(f"the cache key's directory {directory} lies inside {what} {tree}")
    return Path(directory)


def check_owner(directory: Path) -> None:
    """KeyRefused unless `directory` is this user's, and every directory above it this
    user's or root's, none writable by others (a world-writable one only if sticky)."""
    real = Path(os.path.realpath(directory))
    uid = os.getuid()
    for path in (real, *real.parents):
        try:
            info = os.stat(path)
        except OSError as error:
            raise KeyRefused(f"{path}: {error.strerror or error}") from None
        mine = info.st_uid == uid if path == real else info.st_uid in (uid, 0)
        if not mine:
            raise KeyRefused(f"{path} belongs to another user")
        writable = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        if writable and not (info.st_mode & stat.S_ISVTX):
            raise KeyRefused(f"{path} can be written by other users")


def _cache_home() -> str:
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        if not os.path.isabs(xdg):
            raise KeyRefused(f"XDG_CACHE_HOME ({xdg}) is not an absolute path")
        return xdg
    return os.path.join(_home(), ".cache")


def _home() -> str:
    home = os.environ.get("HOME")
    if home is None:
        try:
            import pwd

            home = pwd.getpwuid(os.getuid()).pw_dir
        except (ImportError, KeyError):
            raise KeyRefused("HOME is not set and this user has no entry in the password database") from None
    if not os.path.isabs(home):
        raise KeyRefused(f"HOME ({home or 'empty'}) is not an absolute path")
    return home


def _trees_the_repository_reaches(project: Path) -> Iterator[Tuple[str, str]]:
    """The project, the git work trees around it and the cwd, and the cwd; less those
    that hold the home directory (`torchlint check ~`, a run from `/`, dotfiles in a
    git work tree at `~`), which are the user's own."""
    from torchlint.run.discovery import repository_root

    cwd = os.path.realpath(os.getcwd())
    root = os.path.realpath(project)
    trees = [("the project", root)]
    for start in (root, cwd):
        repository = repository_root(Path(start))
        if repository is not None:
            trees.append(("the git work tree", os.path.realpath(repository)))
    trees.append(("the working directory", cwd))
    home = _home_or_none()
    return iter([(what, tree) for what, tree in trees if home is None or not is_inside(home, tree)])


def _home_or_none() -> Optional[str]:
    try:
        return os.path.realpath(_home())
    except KeyRefused:
        return None
