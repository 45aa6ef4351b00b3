"""How a diagnostic's filename is spelled in each kind of output."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote


def absolute(filename: str) -> str:
    """The absolute, normalised path (symlinks kept), as ruff writes in JSON."""
    return os.path.abspath(filename)


def _relative(filename: str, base: str) -> str | None:
    path = absolute(filename)
    base = absolute(base)
    try:
        if os.path.commonpath([path, base]) != base:
            return None
    except ValueError:  # different drives on Windows
        return None
    return os.path.relpath(path, base)


def for_humans(filename: str) -> str:
    """Relative to the working directory when under it, else as given (ruff's relativize_path)."""
    relative = _relative(filename, os.getcwd())
    return relative if relative is not None else filename


def for_root(filename: str, root: Path) -> str:
    """Relative to the project root when under it (forward slashes), else absolute."""
    relative = _relative(filename, str(root))
    if relative is None:
        return Path(absolute(filename)).as_posix()
    return Path(relative).as_posix()


def sarif_uri(filename: str, root: Path) -> tuple[str, bool]:
    """The artifact URI and whether it is relative to `%SRCROOT%`."""
    relative = _relative(filename, str(root))
    if relative is None:
        return Path(absolute(filename)).as_uri(), False
    return quote(Path(relative).as_posix(), safe="/"), True


def root_uri(root: Path) -> str:
    """`file:///root/`; SARIF requires a base URI to end with a slash."""
    uri = Path(absolute(str(root))).as_uri()
    return uri if uri.endswith("/") else uri + "/"
