"""Stable identities for findings, shared by SARIF (code scanning) and the baseline.

A finding's key is its rule, its path relative to a root, and the stripped text of its
line: the row is left out so that moving code up or down keeps the identity, and an
edit elsewhere in the file does not touch it.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Dict, Iterable, Iterator, Mapping, Tuple

from torchlint.core.diagnostics import Diagnostic
from torchlint.core import paths
from torchlint.report.sources import SourceLines

FingerprintKey = Tuple[str, str, str]  # rule id, root-relative path, stripped line text


def line_hash(key: FingerprintKey) -> str:
    """The 16-hex-digit hash of one key (pinned: changing it re-opens every triaged alert)."""
    return hashlib.sha256("\0".join(key).encode("utf-8")).hexdigest()[:16]


def line_hashes(keys: Iterable[FingerprintKey]) -> Iterator[str]:
    """`<hash>:<occurrence>` for each key, in GitHub's primaryLocationLineHash shape.

    The 1-based occurrence among identical keys keeps duplicates apart.
    """
    seen: Counter = Counter()
    for key in keys:
        seen[key] += 1
        yield f"{line_hash(key)}:{seen[key]}"


class FingerprintKeys:
    """Computes the key of each finding from the run's sources (one split per file)."""

    def __init__(self, sources: Mapping[str, str], root: Path):
        self.root = root
        self.sources = SourceLines(sources)
        self._relative: Dict[str, str] = {}

    def relative_path(self, filename: str) -> str:
        if filename not in self._relative:
            self._relative[filename] = paths.for_root(filename, self.root)
        return self._relative[filename]

    def key(self, diagnostic: Diagnostic) -> FingerprintKey:
        text = self.sources.line(diagnostic.source_name, diagnostic.location.row) or ""
        return (diagnostic.code, self.relative_path(diagnostic.filename), text.strip())
