"""Finding and reading torchlint's configuration file; the error every config fault raises.

Apart from `torchlint.core.config` so that what reads the file for its own table (the doctor's
`[tool.torchlint.runtime]`) does not import the whole configuration, which validates
that table in turn.
"""

from __future__ import annotations

import configparser
import os
import stat
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Sequence

from torchlint.core.bounded_read import ReadRefused, read_bounded

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

CONFIG_FILENAMES = ("torchlint.toml", "pyproject.toml")
CONFIG_BYTES = 4 * 1024 * 1024


class ConfigError(Exception):
    """A problem in a configuration file or in flags; the message is one line."""


def find_config_file(start: Path) -> Optional[Path]:
    """The nearest torchlint.toml, or pyproject.toml with a [tool.torchlint] table."""
    for candidate in trusted_files_up(start.resolve(), CONFIG_FILENAMES):
        if candidate.name == "torchlint.toml":
            return candidate
        try:
            if "torchlint" in read_toml(candidate).get("tool", {}):
                return candidate
        except ConfigError:
            return candidate
    return None


def trusted_files_up(start: Path, names: Sequence[str]) -> Iterator[Path]:
    """The files called one of `names` in `start` and in each folder above it, nearest
    folder first and in the order of `names` within one, that are files and may be used
    (`trusted_above`)."""
    for directory in (start, *start.parents):
        for name in names:
            candidate = directory / name
            if is_file(candidate) and trusted_above(start, candidate):
                yield candidate


def trusted_above(start: Path, candidate: Path) -> bool:
    """Whether a config file found while walking up from `start` may be used: one above
    the project (not in `start` itself) must not be another user's to plant. Its file
    and its directory belong to this user or root, and a directory anyone may write to
    is used only if it is sticky and the file is this user's own. Warns where refused."""
    if candidate.parent == start:
        return True
    try:
        link, folder = candidate.lstat(), candidate.parent.stat()
        target = candidate.stat()
    except OSError:
        return False
    mine = (os.getuid(), 0)
    owners_ok = link.st_uid in mine and target.st_uid in mine and folder.st_uid in mine
    open_folder = bool(folder.st_mode & stat.S_IWOTH)
    sticky_ok = not open_folder or (folder.st_mode & stat.S_ISVTX and link.st_uid == os.getuid())
    if owners_ok and sticky_ok:
        return True
    from torchlint.core.console import warning

    warning(f"{candidate}: not used: another user can write it (it lies above the project, in a shared directory)")
    return False


def is_file(path: Path) -> bool:
    """Whether `path` is a file; False where the directory cannot be looked into."""
    try:
        return path.is_file()
    except OSError:  # a directory we may not look into holds no config we could read
        return False


def read_table(path: Path, named: bool = False) -> Dict[str, Any]:
    """The torchlint table of a config file (the whole file for torchlint.toml); see
    read_toml for `named`."""
    data = read_toml(path, named)
    if path.name == "torchlint.toml":
        return data.get("tool", {}).get("torchlint", data)
    return data.get("tool", {}).get("torchlint", {})


def read_toml(path: Path, named: bool = False) -> Dict[str, Any]:
    """The file's TOML; ConfigError if it cannot be read (a FIFO, a device, over
    CONFIG_BYTES, a symbolic link out of its directory unless the user `named` the file:
    refused unread) or is not TOML."""
    try:
        return tomllib.loads(read_bounded(path, CONFIG_BYTES, within=None if named else path.parent).decode("utf-8"))
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from None
    except ReadRefused as refusal:
        raise ConfigError(f"{path}: cannot read: {refusal}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 ({error.reason} at byte {error.start})") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None


def read_ini(path: Path) -> Optional[configparser.ConfigParser]:
    """Another tool's ini file (setup.cfg, tox.ini, .flake8), read within the same bounds as a
    TOML config; None when it cannot be read or parsed: such a file is not ours to judge."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(read_bounded(path, CONFIG_BYTES, within=path.parent).decode("utf-8"), source=str(path))
    except (OSError, ReadRefused, UnicodeDecodeError, configparser.Error):
        return None
    return parser
