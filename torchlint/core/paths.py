"""How a diagnostic's filename is spelled in each kind of output."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote


def printable(text: str) -> str:
    """`text` as valid UTF-8: the bytes of a file name that is not UTF-8 (which Python
    holds as lone surrogates) are written `\\xff`, as `ls --quoting-style=escape` and
    Python's `backslashreplace` do, so that every format can print the name."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that no file name produces
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def absolute(filename: str) -> str:
    """The absolute, normalised path (symlinks kept), as ruff writes in JSON."""
    return printable(os.path.abspath(filename))


def undecodable_uri(filename: str) -> str | None:
    """For a name that is not UTF-8, the `file:` URI of its absolute path, its raw bytes
    percent-encoded (RFC 3986, as SARIF writes them): the exact name, which `absolute`'s
    `\\xff` cannot tell from a name holding those four characters. None for any other name."""
    raw = os.fsencode(os.path.abspath(filename))
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return "file://" + quote(raw, safe="/")
    return None


def _relative(filename: str, base: str) -> str | None:
    path = os.path.abspath(filename)
    base = os.path.abspath(base)
    try:
        if os.path.commonpath([path, base]) != base:
            return None
    except ValueError:  # different drives on Windows
        return None
    return os.path.relpath(path, base)


def for_humans(filename: str) -> str:
    """Relative to the working directory when under it, else as given (ruff's relativize_path)."""
    from torchlint.core.visible import visible_line

    relative = _relative(filename, os.getcwd())
    return visible_line(printable(relative if relative is not None else filename))


def for_root(filename: str, root: Path) -> str:
    """Relative to the project root when under it (forward slashes), else absolute."""
    relative = _relative(filename, str(root))
    return printable(Path(os.path.abspath(filename) if relative is None else relative).as_posix())


def sarif_uri(filename: str, root: Path) -> tuple[str, bool]:
    """The artifact URI and whether it is relative to `%SRCROOT%`; a name's raw bytes are
    percent-encoded (RFC 3986), so a name that is not UTF-8 survives."""
    relative = _relative(filename, str(root))
    if relative is None:
        return Path(os.path.abspath(filename)).as_uri(), False
    return quote(os.fsencode(Path(relative).as_posix()), safe="/"), True


def root_uri(root: Path) -> str:
    """`file:///root/`; SARIF requires a base URI to end with a slash."""
    uri = Path(absolute(str(root))).as_uri()
    return uri if uri.endswith("/") else uri + "/"
