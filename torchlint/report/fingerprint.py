"""Stable identities for findings, so that code scanning tracks alerts across commits."""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Iterable, Iterator, Tuple

FingerprintKey = Tuple[str, str, str]  # rule id, root-relative path, stripped line text


def line_hashes(keys: Iterable[FingerprintKey]) -> Iterator[str]:
    """`<hash>:<occurrence>` for each key, in GitHub's primaryLocationLineHash shape.

    The row is left out so that moving code up or down keeps the alert; the
    1-based occurrence among identical keys keeps duplicates apart.
    """
    seen: Counter = Counter()
    for key in keys:
        seen[key] += 1
        digest = hashlib.sha256("\0".join(key).encode("utf-8")).hexdigest()[:16]
        yield f"{digest}:{seen[key]}"
