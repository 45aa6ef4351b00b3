"""Per-file results, cached by content, in one small JSON "pack" per source directory.

Layout, in `.torchlint_cache/v<version>/`:
- `<hash of (config, directory)>.json`: `{"files": {name: {"key", "used", "diagnostics"}}}`;
- the same hash `.facts`: `{"files": {name: {"key", "record"}}}`, what the project pass
  knows of each file (its `torchlint.index.record.FileRecord` as JSON text, or null),
  read only when a project pass needs it;
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

The directory lies in the repository under review, so it is not trusted: every pack is
signed with the user's own key (kept outside any repository, `torchlint.run.cache_key`) and a
pack that does not verify is a miss, so a committed or edited cache can neither hide a
finding nor bring a fix the rules would not compute now; links are never followed, a
directory of another user is refused, and only names torchlint writes are pruned
(`torchlint.run.cache_ground`).

Findings entries are validated on read, type by type; a record is decoded by its own
reader (`torchlint.index.record_text.decode`), which checks its shape, not every value's
type (only a signed pack, one this user's torchlint wrote, reaches it). A corrupt,
truncated or foreign entry is a miss and is overwritten, never an error. Records are written beside their findings but
not atomically with them (another run may win one of the two writes): a file whose
record is missing or carries another key is linted again for it (see the runner).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from contextlib import suppress
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from torchlint import __version__
from torchlint.core.bounded_read import loads_json
from torchlint.run.cache_ground import PACK, SUPPORTED, Directory, UntrustedCache, written_by_torchlint
from torchlint.run.cache_key import signed, user_key, verified
from torchlint.run.key_location import KeyRefused
from torchlint.core.console import warning
from torchlint.core.diagnostics import Applicability, Diagnostic, Edit, FileResult, Fix, Location

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
    """One run's view of the cache: packs are read on first use and written by `save`.

    Every pack is signed with the user's key (`torchlint.run.cache_key`) and handled through
    `torchlint.run.cache_ground`: nothing in the directory is trusted that this user's
    torchlint did not write, and nothing is followed out of it."""

    def __init__(self, root: Path, salt: str, now: Optional[float] = None) -> None:
        self.root = root
        self.base = root / CACHE_DIRNAME
        self.version = f"v{__version__}"
        self.directory = self.base / self.version
        self.salt = f"{__version__}\0{salt}"
        self.now = time.time() if now is None else now
        self.today = int(self.now // DAY)
        self._packs: Dict[Tuple[str, str], Dict[str, Any]] = {}  # (directory, suffix) -> files
        self._changed: set = set()
        self._project: Optional[Tuple[str, Dict[str, Any]]] = None  # a project result to write
        self._key = _key_for(root) if SUPPORTED else None
        self._opened: Optional[Tuple[Directory, Directory]] = None  # (base, version) once open
        self._refused = self._key is None

    def get(self, name: str, display: str, key: str) -> Optional[FileResult]:
        """The cached findings of the file at project path `name`, if its `key` (see
        `entry_key`) is the one it was linted with; named `display`. Without its record:
        `record` gives it."""
        directory, base = _split(name)
        files = self._pack(directory, FINDINGS)
        entry = files.get(base)
        if entry is None:
            return None
        try:
            if entry["key"] != key:
                return None
            _of(entry["used"], int)
            result = FileResult(display, [_diagnostic(d, display) for d in _of(entry["diagnostics"], list)])
        except (KeyError, TypeError, ValueError):
            del files[base]
            self._changed.add((directory, FINDINGS))
            return None
        if entry["used"] != self.today:
            entry["used"] = self.today
            self._changed.add((directory, FINDINGS))
        return result

    def record(self, name: str, key: str) -> Tuple[bool, Optional[str]]:
        """Whether the record of the file at project path `name` with this `key` is
        stored, and if so the record as JSON text (None: the file has none)."""
        directory, base = _split(name)
        entry = self._pack(directory, FACTS).get(base)
        if not isinstance(entry, dict) or entry.get("key") != key or "record" not in entry:
            return False, None
        text = entry["record"]
        if text is not None and type(text) is not str:
            return False, None
        return True, text

    def put(self, name: str, key: str, result: FileResult, record: Optional[str]) -> None:
        """Store a file's findings and its record (JSON text or None)."""
        if result.errors:
            return
        self.put_record(name, key, record)
        directory, base = _split(name)
        self._pack(directory, FINDINGS)[base] = {
            "key": key,
            "used": self.today,
            "diagnostics": [_stored(d) for d in result.diagnostics],
        }
        self._changed.add((directory, FINDINGS))

    def put_record(self, name: str, key: str, text: Optional[str]) -> None:
        directory, base = _split(name)
        self._pack(directory, FACTS)[base] = {"key": key, "record": text}
        self._changed.add((directory, FACTS))

    def project(self, files: Sequence[Tuple[str, str]]) -> Optional[List[Diagnostic]]:
        """The project pass's findings over `files` ((display name, key) pairs), if cached."""
        name, key = self._project_name(files)
        data = self._read(name)
        try:
            if data is None or data["key"] != key:
                return None
            found = [_diagnostic(d, _of(d["filename"], str)) for d in _of(data["diagnostics"], list)]
            if _of(data["used"], int) != self.today:
                data["used"] = self.today
                self._project = (name, data)
            return found
        except (ValueError, KeyError, TypeError):
            return None

    def put_project(self, files: Sequence[Tuple[str, str]], diagnostics: Sequence[Diagnostic]) -> None:
        name, key = self._project_name(files)
        self._project = (name, {"key": key, "used": self.today, "diagnostics": [d.to_json() for d in diagnostics]})

    def _project_name(self, files: Sequence[Tuple[str, str]]) -> Tuple[str, str]:
        names = hashlib.blake2b(self.salt.encode("utf-8", "surrogateescape"), digest_size=16)
        keys = names.copy()
        for display, key in sorted(files):
            names.update(display.encode("utf-8", "surrogateescape") + b"\0")
            keys.update(f"{display}\0{key}\0".encode("utf-8", "surrogateescape"))
        return f"{names.hexdigest()}{PROJECT}", keys.hexdigest()

    def save(self) -> None:
        """Write the packs that changed, then prune. Never raises for a cache problem."""
        try:
            if (self._changed or self._project is not None) and self._ground(create=True) is not None:
                # records first: findings without their record are linted again, never trusted
                for directory, suffix in sorted(self._changed, key=lambda item: (item[1] != FACTS, item)):
                    self._write_pack(directory, suffix)
                if self._project is not None:
                    self._write(*self._project)
            self._prune()
        except OSError:
            pass
        finally:
            self._changed.clear()
            self._project = None
            self._close()

    def _pack_name(self, directory: str, suffix: str) -> str:
        digest = hashlib.blake2b(f"{self.salt}\0{directory}".encode("utf-8", "surrogateescape"), digest_size=16)
        return f"{digest.hexdigest()}{suffix}"

    def _pack(self, directory: str, suffix: str) -> Dict[str, Any]:
        if (directory, suffix) not in self._packs:
            files = None
            data = self._read(self._pack_name(directory, suffix))
            if data is not None:
                files = data.get("files") if isinstance(data, dict) else None
                if not isinstance(files, dict):
                    self._changed.add((directory, suffix))  # overwrite what cannot be read
            self._packs[directory, suffix] = files if isinstance(files, dict) else {}
        return self._packs[directory, suffix]

    def _read(self, name: str) -> Any:
        """The data of the pack `name` if this user's torchlint wrote it; None if it is
        missing; {} if it is there but corrupt, foreign or forged."""
        ground = self._ground(create=False)
        if ground is None:
            return None
        data = ground[1].read(name, MAX_BYTES)
        if data is None:
            return None
        body = verified(self._key, name, data)
        try:
            return {} if body is None else loads_json(body)
        except ValueError:
            return {}

    def _write_pack(self, directory: str, suffix: str) -> None:
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
        self._write(self._pack_name(directory, suffix), {"files": files})

    def _write(self, name: str, data: Dict[str, Any]) -> None:
        """Write atomically (a reader sees the old pack or the new one); a failure leaves the old."""
        ground = self._ground(create=True)
        if ground is None:
            return
        try:
            # dumps, unlike dump, uses the C encoder
            body = json.dumps(data, separators=(",", ":")).encode("utf-8", "surrogateescape")
            ground[1].write(name, signed(self._key, name, body))
        except (OSError, TypeError, ValueError):
            pass

    def _ground(self, create: bool) -> Optional[Tuple[Directory, Directory]]:
        """The cache's base and version directories, open; None where there is no cache
        yet (unless `create`) or it is refused (said once, as a warning)."""
        if self._opened is not None or self._refused:
            return self._opened
        base = None
        try:
            root = Directory.at(str(self.root))
            try:
                base = Directory.open(CACHE_DIRNAME, root, create=create)
            finally:
                root.close()
            with suppress(OSError):  # on every open: a tag emptied or deleted since is written again
                _tag(base)
            self._opened = (base, Directory.open(self.version, base, create=create))
        except FileNotFoundError:
            if base is not None:
                base.close()
        except UntrustedCache as refusal:
            self._refused = True
            warning(f"cache not used: {refusal}")
        except OSError:
            self._refused = True
        return self._opened

    def _close(self) -> None:
        if self._opened is not None:
            for directory in self._opened:
                directory.close()
            self._opened = None

    def _prune(self) -> None:
        """At most once a day: delete what no run has used for a while."""
        ground = self._ground(create=False)
        if ground is None:
            return
        base, version = ground
        marker = version.stat(PRUNE_MARKER)
        if marker is not None and stat.S_ISREG(marker.st_mode) and self.now - marker.st_mtime < DAY:
            return
        self._prune_versions(base)
        self._prune_packs(version)
        version.touch(PRUNE_MARKER)

    def _prune_versions(self, base: Directory) -> None:
        """Other versions' directories, unless one was used lately (two versions in turn,
        e.g. pre-commit's pinned one and a development install, keep their caches)."""
        for entry in base.entries():
            if not entry.is_dir(follow_symlinks=False) or entry.name == self.version or not entry.name.startswith("v"):
                continue
            with suppress(OSError):
                used = [entry.stat(follow_symlinks=False).st_mtime]
                marker = _marker_time(base, entry.name)
                if marker is not None:
                    used.append(marker)
                if self.now - max(used) > 2 * DAY:
                    base.remove_own(entry.name)

    def _prune_packs(self, version: Directory) -> None:
        """Stale packs and stray temporary files, then the oldest packs until the
        directory fits in MAX_BYTES; only names torchlint writes."""
        packs = []
        for entry in version.entries():
            if entry.name == PRUNE_MARKER or not written_by_torchlint(entry.name):
                continue
            with suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                is_pack = PACK.fullmatch(entry.name) is not None
                # a young .tmp may be another run's write in progress
                if not stat.S_ISREG(info.st_mode) or self.now - info.st_mtime > (MAX_AGE_DAYS * DAY if is_pack else DAY):
                    version.unlink(entry.name)
                elif is_pack:
                    packs.append((info.st_mtime, info.st_size, entry.name))
        total = sum(size for _, size, _ in packs)
        for _, size, name in sorted(packs):
            if total <= MAX_BYTES:
                break
            version.unlink(name)
            total -= size


def _key_for(root: Path) -> Optional[bytes]:
    """The user's key, or None (said once, as a warning) where it cannot be kept safely."""
    try:
        return user_key(root)
    except KeyRefused as refusal:
        warning(f"cache not used: {refusal}")
        return None


def _tag(base: Directory) -> None:
    """The directory tag and a `.gitignore` of `*`, written again where missing, wrong
    (a full disk left them empty) or a link (which is replaced, never written through)."""
    for name, text in (("CACHEDIR.TAG", CACHEDIR_TAG), (".gitignore", "*\n")):
        data = text.encode("utf-8")
        if not base.holds(name, data):
            base.write(name, data)


def _marker_time(base: Directory, name: str) -> Optional[float]:
    """When the version directory `name` was last pruned, if it says."""
    try:
        child = Directory.open(name, base)
    except (OSError, UntrustedCache):
        return None
    try:
        info = child.stat(PRUNE_MARKER)
        return info.st_mtime if info is not None else None
    finally:
        child.close()


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


def remove_cache(root: Path) -> bool:
    """Delete the cache under `root` (`torchlint clean`): what torchlint wrote there, then
    the directories once empty; never through a link, nothing of another user's. False if
    there was none; UntrustedCache if it is not this user's own plain directory."""
    try:
        project = Directory.at(str(root))
    except OSError:
        return False
    try:
        base = Directory.open(CACHE_DIRNAME, project)
    except FileNotFoundError:
        project.close()
        return False
    try:
        for entry in base.entries():
            if entry.is_dir(follow_symlinks=False):
                base.remove_own(entry.name)
            elif entry.name in ("CACHEDIR.TAG", ".gitignore") or written_by_torchlint(entry.name):
                base.unlink(entry.name)
        with suppress(OSError):  # something not torchlint's is left in it
            os.rmdir(CACHE_DIRNAME, dir_fd=project.handle)
    finally:
        base.close()
        project.close()
    return True
