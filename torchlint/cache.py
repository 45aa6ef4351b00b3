"""Per-file results, cached by content, in one small JSON "pack" per source directory.

Layout: `.torchlint_cache/v<version>/<hash of (config, directory)>.json`, holding
`{"files": {name: {"key", "used", "diagnostics", "facts"}}}`. A file's entry is found by
its path relative to the project root (so the working directory does not matter) and is
valid while its `key` (a hash of the bytes and of the rules selected for that path) still
matches. Unlike an mtime key, a content key hits on a fresh CI checkout, so caching
`.torchlint_cache/` between CI runs works.

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
miss and is overwritten, never an error.
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
from typing import Any, Dict, Optional, Sequence

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


class Cache:
    """One run's view of the cache: packs are read on first use and written by `save`."""

    def __init__(self, root: Path, salt: str, now: Optional[float] = None) -> None:
        self.base = root / CACHE_DIRNAME
        self.version = f"v{__version__}"
        self.directory = self.base / self.version
        self.salt = f"{__version__}\0{salt}"
        self.now = time.time() if now is None else now
        self.today = int(self.now // DAY)
        self._packs: Dict[str, Dict[str, Any]] = {}
        self._changed: set = set()

    def get(self, name: str, display: str, data: bytes, codes: Sequence[str]) -> Optional[FileResult]:
        """The cached result for the file at project path `name`, if its bytes and rules
        are those it was linted with; its findings are named `display`."""
        directory, base = _split(name)
        files = self._pack(directory)
        entry = files.get(base)
        if entry is None:
            return None
        try:
            if entry["key"] != _entry_key(data, codes):
                return None
            result = _result(entry, display)
        except (KeyError, TypeError, ValueError):
            del files[base]
            self._changed.add(directory)
            return None
        if entry["used"] != self.today:
            entry["used"] = self.today
            self._changed.add(directory)
        return result

    def put(self, name: str, data: bytes, codes: Sequence[str], result: FileResult) -> None:
        if result.errors:
            return
        directory, base = _split(name)
        self._pack(directory)[base] = {
            "key": _entry_key(data, codes),
            "used": self.today,
            "diagnostics": [_stored(d) for d in result.diagnostics],
            "facts": result.facts,
        }
        self._changed.add(directory)

    def save(self) -> None:
        """Write the packs that changed, then prune. Never raises for a cache problem."""
        try:
            if self._changed:
                self._prepare()
            for directory in sorted(self._changed):
                self._write(directory)
            self._prune()
        except OSError:
            pass
        self._changed.clear()

    def _pack_path(self, directory: str) -> Path:
        digest = hashlib.blake2b(f"{self.salt}\0{directory}".encode("utf-8", "surrogateescape"), digest_size=16)
        return self.directory / f"{digest.hexdigest()}.json"

    def _pack(self, directory: str) -> Dict[str, Any]:
        if directory not in self._packs:
            self._packs[directory] = self._read(directory)
        return self._packs[directory]

    def _read(self, directory: str) -> Dict[str, Any]:
        try:
            with open(self._pack_path(directory), "rb") as handle:
                files = json.load(handle)["files"]
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError):
            files = None
        if not isinstance(files, dict):
            self._changed.add(directory)  # overwrite what cannot be read
            return {}
        return files

    def _write(self, directory: str) -> None:
        oldest = self.today - MAX_AGE_DAYS
        files = {
            name: entry
            for name, entry in self._pack(directory).items()
            if isinstance(entry, dict) and type(entry.get("used")) is int and entry["used"] >= oldest
        }
        handle, temp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                # dumps, unlike dump, uses the C encoder
                out.write(json.dumps({"files": files}, separators=(",", ":")))
            os.replace(temp, self._pack_path(directory))
        except (OSError, TypeError, ValueError):
            with suppress(OSError):
                os.unlink(temp)

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
                is_pack = entry.name.endswith(".json")
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


def _split(name: str):
    directory, _, base = name.rpartition("/")
    return directory, base


def _entry_key(data: bytes, codes: Sequence[str]) -> str:
    digest = hashlib.blake2b(",".join(codes).encode() + b"\0", digest_size=20)
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


def _result(entry: Any, display: str) -> FileResult:
    _of(entry["used"], int)
    facts = _of(entry["facts"], dict)
    diagnostics = [_diagnostic(d, display) for d in _of(entry["diagnostics"], list)]
    return FileResult(display, diagnostics, facts)
