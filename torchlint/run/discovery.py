"""Expand the paths on the command line into the Python files to lint.

Directories are walked for `*.py`, `*.pyi`, `*.ipynb` (as in ruff since 0.6; `extend-exclude =
["*.ipynb"]` leaves notebooks out) and what `extend-include` adds, skipping `exclude`/`extend-exclude` matches
and `.gitignore`d paths. A file named on the command line is always linted, unless `--force-exclude`
is given and it is excluded (pre-commit passes every changed file by name).

Symlinks, as in ruff (whose walker does not follow links): a symlink to a file is linted,
a symlink to a directory met during the walk is not entered, a directory named on the
command line is walked even when it is a symlink. Each file is linted once however many
names reach it. Nothing on disk stops a run: a symlink loop or a directory that cannot be
read is skipped with a one-line warning.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, FrozenSet, Hashable, Iterator, List, Optional, Sequence, Tuple

import pathspec

from torchlint.core.bounded_read import ReadRefused, is_inside, read_bounded
from torchlint.core.config import Config

PYTHON_SUFFIXES = (".py", ".pyi", ".ipynb")  # what a directory is walked for
IGNORE_FILE_BYTES = 4 * 1024 * 1024

Warn = Callable[[str], None]


def _under(absolute: str, base: str) -> Optional[str]:
    """`absolute` relative to the directory `base` (posix), None if not under it; string
    operations, because pathlib's cost per file is most of a warm run's walk."""
    prefix = os.path.join(base, "")
    if not absolute.startswith(prefix):
        return None
    return absolute[len(prefix):].replace(os.sep, "/")


@dataclass(frozen=True)
class _IgnoreFile:
    base: str
    spec: pathspec.PathSpec

    def ignores(self, absolute: str, is_dir: bool) -> bool:
        relative = _under(absolute, self.base)
        if relative is None:
            return False
        return self.spec.match_file(relative + "/" if is_dir else relative)


def _gitignore(directory: Path, warn: Warn) -> Optional[_IgnoreFile]:
    """The rules of the directory's `.gitignore`, read as git does (a symbolic link is not
    followed), never blocking and within IGNORE_FILE_BYTES; None where there are none."""
    path = directory / ".gitignore"
    try:
        data = read_bounded(path, IGNORE_FILE_BYTES, follow=False)
    except ReadRefused as refusal:
        warn(f"{path}: not read ({refusal})")
        return None
    except OSError as error:  # none, a directory, unreadable: no rules from here
        if error.errno == errno.ELOOP:
            warn(f"{path}: a symbolic link; not read")
        return None
    lines = data.decode("utf-8", errors="replace").splitlines()
    return _IgnoreFile(str(directory), pathspec.GitIgnoreSpec.from_lines(lines))


def repository_root(start: Path) -> Optional[Path]:
    for directory in (start, *start.parents):
        try:
            if (directory / ".git").exists():
                return directory
        except OSError:  # a directory we may not look into: no repository known there
            continue
    return None


class PathPatterns:
    """Answers "does this path match?" for patterns in gitignore syntax, matched against
    the path relative to the project root and against the name alone."""

    def __init__(self, root: Path, patterns: Sequence[str]) -> None:
        self.root = str(root)
        patterns = list(patterns)
        # A bare name (`build`, `.venv`: all the default excludes) matches a path that has
        # it as a component, which a set answers at once; pathspec tries every pattern's
        # regex on every path. Order matters only once a pattern negates (`!keep`).
        if any(pattern.startswith("!") for pattern in patterns):
            self.names: FrozenSet[str] = frozenset()
        else:
            self.names = frozenset(p for p in patterns if _BARE_NAME.fullmatch(p) and p not in (".", ".."))
        rest = [pattern for pattern in patterns if pattern not in self.names]
        self.spec = pathspec.GitIgnoreSpec.from_lines(rest) if rest else None

    def matches(self, path: Path, is_dir: bool, absolute: Optional[str] = None) -> bool:
        absolute = absolute or os.path.abspath(path)
        relative = _under(absolute, self.root)
        if relative is None:
            relative = absolute.replace(os.sep, "/").lstrip("/")
        if self.names and not self.names.isdisjoint(relative.split("/")):
            return True
        if self.spec is None:
            return False
        suffix = "/" if is_dir else ""
        return any(self.spec.match_file(candidate + suffix) for candidate in (relative, os.path.basename(absolute)))


_BARE_NAME = re.compile(r"\.?[A-Za-z0-9_][A-Za-z0-9._-]*")


class Excluder(PathPatterns):
    """Answers "is this path excluded?" for the config's `exclude` and `extend-exclude`."""

    def __init__(self, config: Config) -> None:
        super().__init__(config.root, list(config.exclude) + list(config.extend_exclude))

    excluded = PathPatterns.matches


def discover(
    paths: Sequence[str], config: Config, force_exclude: bool = False, warn: Optional[Warn] = None
) -> List[Tuple[str, Path]]:
    """(display name, path) of each file to lint, sorted.

    A file reached twice (through a symlink, or named as `a.py`, `/abs/a.py` and
    `d/../a.py`) is linted once, under the first name met. What cannot be walked (a
    symlink loop, a directory that cannot be read) is skipped, told to `warn` in one line.
    """
    walker = _Walker(Excluder(config), warn or (lambda message: None), PathPatterns(config.root, config.extend_include),
                     config.root)
    found: Dict[Hashable, Tuple[str, Path]] = {}
    for name in paths:
        path = Path(name)
        if path.is_dir():
            if force_exclude and walker.excluder.excluded(path, True):
                continue
            for file, identity in walker.walk(path):
                found.setdefault(identity, (os.path.normpath(file.as_posix()), file))
        else:
            if force_exclude and walker.excluder.excluded(path, False):
                continue
            identity = walker.identity(path)
            if identity is not None:
                found.setdefault(identity, (os.path.normpath(name), path))
    return sorted(found.values())


class _Walker:
    """Walks directories as ruff does: symlinks to files are linted, symlinks to
    directories met inside the tree are not followed (so a walk cannot loop), a
    directory named on the command line is walked even if it is a symlink. Unlike
    ruff, a symlink met in the walk that leads out of both the walked directory and the
    project root is skipped: a cloned repository must not make `--fix` write, or a
    report quote, a file of the user's elsewhere (docs/security.md)."""

    def __init__(self, excluder: Excluder, warn: Warn, included: PathPatterns, root: Path) -> None:
        self.excluder = excluder
        self.warn = warn
        self.included = included
        self.root = os.path.realpath(root)
        self.bounds: Tuple[str, ...] = ()

    def identity(self, path: Path, inode: Optional[Tuple[int, int]] = None) -> Optional[Hashable]:
        """What tells two names of one file apart: (device, inode); the path itself when
        it cannot be stat'ed (reading it will report why); None for a symlink loop."""
        if inode is not None:
            return inode
        try:
            status = os.stat(path)
        except OSError as error:
            if error.errno == errno.ELOOP:
                self.warn(f"{path}: symlink loop; skipped")
                return None
            return os.path.abspath(path)
        return (status.st_dev, status.st_ino)

    def walk(self, top: Path) -> Iterator[Tuple[Path, Hashable]]:
        absolute_top = Path(os.path.abspath(top))
        repository = repository_root(absolute_top)
        inherited: List[_IgnoreFile] = []
        if repository is not None:
            for directory in reversed(absolute_top.parents):
                if directory == repository or repository in directory.parents:
                    ignore = _gitignore(directory, self.warn)
                    # a directory named on the command line is linted even if a .gitignore above ignores it
                    if ignore and not ignore.ignores(str(absolute_top), True):
                        inherited.append(ignore)
        self.bounds = (os.path.realpath(top), self.root)
        yield from self._directory(top, inherited, repository is not None)

    def _leads_out(self, path: str) -> bool:
        target = os.path.realpath(path)
        return not any(is_inside(target, bound) for bound in self.bounds)

    def _directory(self, directory: Path, ignores: List[_IgnoreFile], in_git: bool):
        try:
            device = os.stat(directory).st_dev
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError as error:
            self.warn(f"{directory}: cannot read directory ({error.strerror or error}); skipped")
            return
        own = _gitignore(Path(os.path.abspath(directory)), self.warn) if in_git else None
        active = ignores + [own] if own else ignores
        for entry in entries:
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir()
            except OSError as error:  # ELOOP: a symlink to itself, or a chain too long
                reason = "symlink loop" if error.errno == errno.ELOOP else error.strerror
                self.warn(f"{path}: {reason}; skipped")
                continue
            if is_dir and entry.is_symlink():
                continue
            absolute = os.path.abspath(entry.path)
            if self.excluder.excluded(path, is_dir, absolute):
                continue
            if any(ignore.ignores(absolute, is_dir) for ignore in active):
                continue
            if is_dir:
                if entry.name != ".git":
                    yield from self._directory(path, active, in_git)
            elif entry.name.endswith(PYTHON_SUFFIXES) or self.included.matches(path, False, absolute):
                if entry.is_symlink() and self._leads_out(entry.path):
                    self.warn(f"{path}: a symbolic link out of the project; skipped")
                    continue
                # a plain file's inode comes free with the directory listing
                inode = None if entry.is_symlink() else (device, entry.inode())
                identity = self.identity(path, inode)
                if identity is not None:
                    yield path, identity
