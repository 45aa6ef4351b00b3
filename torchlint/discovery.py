"""Expand the paths on the command line into the Python files to lint.

Directories are walked, skipping `exclude`/`extend-exclude` matches and `.gitignore`d
paths. A file named on the command line is always linted, unless `--force-exclude`
is given and it is excluded (pre-commit passes every changed file by name).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

import pathspec

from torchlint.config import Config

PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True)
class _IgnoreFile:
    base: Path
    spec: pathspec.PathSpec

    def ignores(self, path: Path, is_dir: bool) -> bool:
        try:
            relative = path.relative_to(self.base).as_posix()
        except ValueError:
            return False
        return self.spec.match_file(relative + "/" if is_dir else relative)


def _gitignore(directory: Path) -> Optional[_IgnoreFile]:
    candidate = directory / ".gitignore"
    if not candidate.is_file():
        return None
    try:
        lines = candidate.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return _IgnoreFile(directory, pathspec.GitIgnoreSpec.from_lines(lines))


def repository_root(start: Path) -> Optional[Path]:
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


class Excluder:
    """Answers "is this path excluded?" for the config's patterns (gitignore syntax)."""

    def __init__(self, config: Config) -> None:
        self.root = config.root
        patterns = list(config.exclude) + list(config.extend_exclude)
        self.spec = pathspec.GitIgnoreSpec.from_lines(patterns)

    def excluded(self, path: Path, is_dir: bool) -> bool:
        absolute = path.absolute()
        try:
            relative = absolute.relative_to(self.root).as_posix()
        except ValueError:
            relative = absolute.as_posix().lstrip("/")
        candidates = [relative, path.name]
        suffix = "/" if is_dir else ""
        return any(self.spec.match_file(candidate + suffix) for candidate in candidates)


def discover(paths: Sequence[str], config: Config, force_exclude: bool = False) -> List[Tuple[str, Path]]:
    """(display name, path) of each file to lint, sorted, without duplicates."""
    excluder = Excluder(config)
    found = {}
    for name in paths:
        path = Path(name)
        if path.is_dir():
            if force_exclude and excluder.excluded(path, True):
                continue
            for file in _walk(path, excluder):
                found.setdefault(os.path.normpath(file.as_posix()), file)
        else:
            if force_exclude and excluder.excluded(path, False):
                continue
            found.setdefault(os.path.normpath(name), path)
    return sorted(found.items())


def _walk(top: Path, excluder: Excluder) -> Iterator[Path]:
    absolute_top = top.absolute()
    repository = repository_root(absolute_top)
    inherited: List[_IgnoreFile] = []
    if repository is not None:
        for directory in reversed(absolute_top.parents):
            if directory == repository or repository in directory.parents:
                ignore = _gitignore(directory)
                # a directory named on the command line is linted even if a .gitignore above ignores it
                if ignore and not ignore.ignores(absolute_top, True):
                    inherited.append(ignore)
    yield from _walk_directory(top, excluder, inherited, repository is not None)


def _walk_directory(directory: Path, excluder: Excluder, ignores: List[_IgnoreFile], in_git: bool):
    own = _gitignore(directory.absolute()) if in_git else None
    active = ignores + [own] if own else ignores
    try:
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        path = Path(entry.path)
        is_dir = entry.is_dir()
        if excluder.excluded(path, is_dir):
            continue
        absolute = path.absolute()
        if any(ignore.ignores(absolute, is_dir) for ignore in active):
            continue
        if is_dir:
            if entry.name == ".git":
                continue
            yield from _walk_directory(path, excluder, active, in_git)
        elif entry.name.endswith(PYTHON_SUFFIXES):
            yield path
