"""Per-file results cached by content: hash of the bytes + path + effective config + version.

Unlike an mtime key, a content key still hits on a fresh CI checkout, so caching the
`.torchlint_cache/` directory between CI runs (e.g. `actions/cache`) works. A corrupt or
foreign entry is ignored and rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Optional

from torchlint import __version__
from torchlint.ftypes import Diagnostic, FileResult

CACHE_DIRNAME = ".torchlint_cache"
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by torchlint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


class Cache:
    def __init__(self, root: Path, salt: str) -> None:
        self.base = root / CACHE_DIRNAME
        self.directory = self.base / f"v{__version__}"
        self.salt = f"{__version__}\0{salt}".encode()

    def key(self, data: bytes, path: str) -> str:
        digest = hashlib.blake2b(self.salt, digest_size=20)
        digest.update(path.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(data)
        return digest.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str, path: str) -> Optional[FileResult]:
        try:
            with open(self._entry(key), "rb") as handle:
                payload = json.load(handle)
            if payload.get("key") != key:
                return None
            return FileResult(
                path,
                [Diagnostic.from_json({**d, "filename": path}) for d in payload["diagnostics"]],
                payload.get("facts", {}),
                [],
                payload.get("parsed", False),
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def put(self, key: str, result: FileResult) -> None:
        if result.errors:
            return
        payload = {
            "key": key,
            "diagnostics": [d.to_json() for d in result.diagnostics],
            "facts": result.facts,
            "parsed": result.parsed,
        }
        entry = self._entry(key)
        try:
            self._prepare(entry.parent)
            handle, temp = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(payload, out, separators=(",", ":"))
            os.replace(temp, entry)
        except (OSError, TypeError, ValueError):
            pass

    def _prepare(self, directory: Path) -> None:
        if directory.is_dir():
            return
        directory.mkdir(parents=True, exist_ok=True)
        tag = self.base / "CACHEDIR.TAG"
        if not tag.exists():
            tag.write_text(CACHEDIR_TAG, encoding="utf-8")
            (self.base / ".gitignore").write_text("*\n", encoding="utf-8")
