"""Per-file results, cached by content, in one small JSON "pack" per source directory.

Layout, in `.torchlint_cache/v<version>/`:
- `<hash of (config, directory)>.json`: `{"files": {name: {"key", "used", "diagnostics"}}}`;
- the same hash `.facts`: `{"files": {name: {"key", "facts"}}}`, what project rules
  recorded of each file (`{code: JSON text}`), read only when a project pass needs them;
- `<hash of (config, the run's file names)>.project`: `{"key", "used", "diagnostics"}`,
  the findings of the last project pass over that set of files, valid while its `key`
  (a hash of every file's key) matches: a warm run of an unchanged tree reads neither
  facts nor runs project rules.

A file's entry is found by its path relative to the project root (so the working
directory does not matter) and is valid while its `key` (a hash of the bytes and of the
rules selected for that path) still matches. Unlike an mtime key, a content key hits on
a fresh CI checkout, so caching `.torchlint_cache/` between CI runs works.

Why packs (ruff keeps one cache file per package, for the same reasons): a warm run reads
one file per directory instead of one per source file, and the cache stays about the size
of its data instead of one 4 KiB block per file.

Pruning is cheap and happens at the end of a run (`save`):
- a pack is rewritten only when something in it changed; its entries unused for
  `MAX_AGE_DAYS` (files deleted or renamed) are dropped then;
- once a day (a marker file's mtime says when it last happened): packs untouched for
  `MAX_AGE_DAYS` (old configs, deleted directories) are deleted, then the oldest ones
  until the directory is under `MAX_BYTES`; so are other versions' directories that no
  run has used for two days. That is one `scandir` of a few hundred packs a day.

Entries are validated on read, type by type: a corrupt, truncated or foreign entry is a
miss and is overwritten, never an error. Facts are written beside their findings but
not atomically with them (another run may win one of the two writes): a file whose
facts are missing or carry another key is linted again for them (see the runner).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from contextlib import suppress
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from torchlint import __version__
from torchlint.ftypes import Applicability, Diagnostic, Edit, FileResult, Fix, Location

CACHE_DIRNAME = ".torchlint_cache"
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by torchlint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
MAX_AGE_DAYS = 30
MAX_BYTES = 64 * 1024 * 1024
PRUNE_MARKER = ".pruned"
DAY = 86400
FINDINGS, FACTS, PROJECT = ".json", ".facts", ".project"  # the suffixes of the three kinds of pack


class Cache:
    """One run's view of the cache: packs are read on first use and written by `save`."""

    def __init__(self, root: Path, salt: str, now: Optional[float] = None) -> None:
        self.base = root / CACHE_DIRNAME
        self.version = f"v{__version__}"
        self.directory = self.base / self.version
        self.salt = f"{__version__}\0{salt}"
        self.now = time.time() if now is None else now
        self.today = int(self.now // DAY)
        self._packs: Dict[Tuple[str, str], Dict[str, Any]] = {}  # (directory, suffix) -> files
        self._changed: set = set()
        self._project: Optional[Tuple[Path, Dict[str, Any]]] = None  # a project result to write

    def get(self, name: str, display: str, key: str) -> Optional[FileResult]:
        """The cached findings of the file at project path `name`, if its `key` (see
        `entry_key`) is the one it was linted with; named `display`. Without facts:
        `facts` gives them."""
        directory, base = _split(name)
        files = self._pack(directory, FINDINGS)
        entry = files.get(base)
        if entry is None:
            return None
        try:
            if entry["key"] != key:
                return None
            _of(entry["used"], int)
            result = FileResult(display, [_diagnostic(d, display) for d in _of(entry["diagnostics"], list)], {})
        except (KeyError, TypeError, ValueError):
            del files[base]
            self._changed.add((directory, FINDINGS))
            return None
        if entry["used"] != self.today:
            entry["used"] = self.today
            self._changed.add((directory, FINDINGS))
        return result

    def facts(self, name: str, key: str) -> Optional[Dict[str, str]]:
        """The facts of the file at project path `name` with this `key`, if stored: each
        rule's as JSON text (see `torchlint.file_facts`)."""
        directory, base = _split(name)
        entry = self._pack(directory, FACTS).get(base)
        if not isinstance(entry, dict) or entry.get("key") != key:
            return None
        facts = entry.get("facts")
        if type(facts) is not dict or any(type(text) is not str for text in facts.values()):
            return None
        return facts

    def put(self, name: str, key: str, result: FileResult) -> None:
        if result.errors:
            return
        self.put_facts(name, key, result.facts)
        directory, base = _split(name)
        self._pack(directory, FINDINGS)[base] = {
            "key": key,
            "used": self.today,
            "diagnostics": [_stored(d) for d in result.diagnostics],
        }
        self._changed.add((directory, FINDINGS))

    def put_facts(self, name: str, key: str, facts: Mapping[str, str]) -> None:
        directory, base = _split(name)
        self._pack(directory, FACTS)[base] = {"key": key, "facts": facts}
        self._changed.add((directory, FACTS))

    def project(self, files: Sequence[Tuple[str, str]]) -> Optional[List[Diagnostic]]:
        """The project pass's findings over `files` ((display name, key) pairs), if cached."""
        path, key = self._project_path(files)
        try:
            with open(path, "rb") as handle:
                data = json.load(handle)
            if data["key"] != key:
                return None
            found = [_diagnostic(d, _of(d["filename"], str)) for d in _of(data["diagnostics"], list)]
            if _of(data["used"], int) != self.today:
                data["used"] = self.today
                self._project = (path, data)
            return found
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put_project(self, files: Sequence[Tuple[str, str]], diagnostics: Sequence[Diagnostic]) -> None:
        path, key = self._project_path(files)
        self._project = (path, {"key": key, "used": self.today, "diagnostics": [d.to_json() for d in diagnostics]})

    def _project_path(self, files: Sequence[Tuple[str, str]]) -> Tuple[Path, str]:
        names = hashlib.blake2b(self.salt.encode("utf-8", "surrogateescape"), digest_size=16)
        keys = names.copy()
        for display, key in sorted(files):
            names.update(display.encode("utf-8", "surrogateescape") + b"\0")
            keys.update(f"{display}\0{key}\0".encode("utf-8", "surrogateescape"))
        return self.directory / f"{names.hexdigest()}{PROJECT}", keys.hexdigest()

    def save(self) -> None:
        """Write the packs that changed, then prune. Never raises for a cache problem."""
        try:
            if self._changed or self._project is not None:
                self._prepare()
            # facts first: findings without their facts are linted again, never trusted
            for directory, suffix in sorted(self._changed, key=lambda item: (item[1] != FACTS, item)):
                self._write(directory, suffix)
            if self._project is not None:
                _write_json(self._project[0], self._project[1])
            self._prune()
        except OSError:
            pass
        self._changed.clear()
        self._project = None

    def _pack_path(self, directory: str, suffix: str) -> Path:
        digest = hashlib.blake2b(f"{self.salt}\0{directory}".encode("utf-8", "surrogateescape"), digest_size=16)
        return self.directory / f"{digest.hexdigest()}{suffix}"

    def _pack(self, directory: str, suffix: str) -> Dict[str, Any]:
        if (directory, suffix) not in self._packs:
            self._packs[directory, suffix] = self._read(directory, suffix)
        return self._packs[directory, suffix]

    def _read(self, directory: str, suffix: str) -> Dict[str, Any]:
        try:
            with open(self._pack_path(directory, suffix), "rb") as handle:
                files = json.load(handle)["files"]
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError):
            files = None
        if not isinstance(files, dict):
            self._changed.add((directory, suffix))  # overwrite what cannot be read
            return {}
        return files

    def _write(self, directory: str, suffix: str) -> None:
        if suffix == FACTS:  # the facts of files whose findings are kept
            findings = self._pack(directory, FINDINGS)
            files = {name: entry for name, entry in self._pack(directory, FACTS).items() if name in findings}
        else:
            oldest = self.today - MAX_AGE_DAYS
            files = {
                name: entry
                for name, entry in self._pack(directory, suffix).items()
                if isinstance(entry, dict) and type(entry.get("used")) is int and entry["used"] >= oldest
            }
        _write_json(self._pack_path(directory, suffix), {"files": files})

    def _prepare(self) -> None:
        if self.directory.is_dir():
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        tag = self.base / "CACHEDIR.TAG"
        if not tag.exists():
            tag.write_text(CACHEDIR_TAG, encoding="utf-8")
            (self.base / ".gitignore").write_text("*\n", encoding="utf-8")

    def _prune(self) -> None:
        """At most once a day: delete what no run has used for a while."""
        marker = self.directory / PRUNE_MARKER
        try:
            if self.now - marker.stat().st_mtime < DAY:
                return
        except FileNotFoundError:
            pass
        if not self.directory.is_dir():
            return
        self._prune_versions()
        self._prune_packs()
        marker.touch()

    def _prune_versions(self) -> None:
        """Other versions' directories, unless one was used lately (two versions in turn,
        e.g. pre-commit's pinned one and a development install, keep their caches)."""
        for entry in os.scandir(self.base):
            if not entry.is_dir(follow_symlinks=False) or entry.name == self.version or not entry.name.startswith("v"):
                continue
            with suppress(OSError):
                used = [entry.stat(follow_symlinks=False).st_mtime]
                with suppress(FileNotFoundError):
                    used.append(os.stat(os.path.join(entry.path, PRUNE_MARKER)).st_mtime)
                if self.now - max(used) > 2 * DAY:
                    shutil.rmtree(entry.path, ignore_errors=True)

    def _prune_packs(self) -> None:
        """Stale packs, stray temporary files and anything of an older layout, then the
        oldest packs until the directory fits in MAX_BYTES."""
        packs = []
        for entry in os.scandir(self.directory):
            if entry.name == PRUNE_MARKER:
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
                continue
            with suppress(OSError):
                stat = entry.stat(follow_symlinks=False)
                is_pack = entry.name.endswith((FINDINGS, FACTS, PROJECT))
                # a young .tmp may be another run's write in progress
                if self.now - stat.st_mtime > (MAX_AGE_DAYS * DAY if is_pack else DAY):
                    os.unlink(entry.path)
                elif is_pack:
                    packs.append((stat.st_mtime, stat.st_size, entry.path))
        total = sum(size for _, size, _ in packs)
        for _, size, path in sorted(packs):
            if total <= MAX_BYTES:
                break
            with suppress(OSError):
                os.unlink(path)
                total -= size


def _write_json(path: Path, data: Dict[str, Any]) -> None:
    """Write atomically (a reader sees the old pack or the new one); a failure leaves the old."""
    handle, temp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            # dumps, unlike dump, uses the C encoder
            out.write(json.dumps(data, separators=(",", ":")))
        os.replace(temp, path)
    except (OSError, TypeError, ValueError):
        with suppress(OSError):
            os.unlink(temp)


def _split(name: str):
    directory, _, base = name.rpartition("/")
    return directory, base


def entry_key(data: bytes, codes: Sequence[str]) -> str:
    """A file's cache key: its bytes and the rules selected for it."""
    digest = hashlib.sha256(",".join(codes).encode() + b"\0")  # hardware-accelerated where blake2b is not
    digest.update(data)
    return digest.hexdigest()


def _stored(diagnostic: Diagnostic) -> dict:
    data = diagnostic.to_json()
    del data["filename"]  # the display name depends on the working directory
    return data


# Strict readers: anything but the exact types written is a corrupt entry (ValueError).


def _of(value: Any, kind: type) -> Any:
    if type(value) is not kind:
        raise ValueError(f"expected {kind.__name__}")
    return value


def _location(data: Any) -> Location:
    return Location(_of(data["row"], int), _of(data["column"], int))


def _fix(data: Any) -> Optional[Fix]:
    if data is None:
        return None
    edits = tuple(
        Edit(_location(edit["location"]), _location(edit["end_location"]), _of(edit["content"], str))
        for edit in _of(data["edits"], list)
    )
    return Fix(_of(data["message"], str), edits, Applicability(_of(data["applicability"], str)))


def _diagnostic(data: Any, display: str) -> Diagnostic:
    noqa_row = data["noqa_row"]
    return Diagnostic(
        code=_of(data["code"], str),
        message=_of(data["message"], str),
        filename=display,
        location=_location(data["location"]),
        end_location=_location(data["end_location"]),
        fix=_fix(data["fix"]),
        noqa_row=None if noqa_row is None else _of(noqa_row, int),
        cell=None if data.get("cell") is None else _of(data["cell"], int),
    )
