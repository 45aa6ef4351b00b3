"""Per-module and per-check opt-outs: `guard(model, skip={"model.pos_embed": ["embedding-index"]})`.

A key names a module by its printed path (`model.encoder.layer.0`), which also covers
everything under it (`model.encoder` skips the encoder's modules and parameters), or by an
`fnmatch` pattern (`model.*.pos_embed`); a functional call made outside any guarded module
is named by its call (`F.cross_entropy`). A value lists check ids (`embedding-index`),
families (`index`) or `"*"` for every check.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any, Iterable, Mapping, Optional, Tuple

from torchlint.runtime.options import CHECKS

ALL = "*"


class Skips:
    """The opt-outs of one guard; `covers(path, check)` says whether a finding is skipped."""

    def __init__(self, skip: Optional[Mapping[str, Any]] = None) -> None:
        self.rules: Tuple[Tuple[str, frozenset], ...] = tuple(
            (path, _check_ids(path, checks)) for path, checks in (skip or {}).items())

    def __bool__(self) -> bool:
        return bool(self.rules)

    def covers(self, path: str, check: str) -> bool:
        return any(check in checks and _matches(pattern, path) for pattern, checks in self.rules)


def _matches(pattern: str, path: str) -> bool:
    return path == pattern or path.startswith(pattern + ".") or fnmatchcase(path, pattern)


def _check_ids(path: str, checks: Any) -> frozenset:
    if not isinstance(path, str):
        raise ValueError(f"skip: keys are module paths such as 'model.encoder', got {path!r}")
    names: Iterable[str] = [checks] if isinstance(checks, str) else checks
    ids = set()
    known = {check for family in CHECKS.values() for check in family}
    for name in names:
        if name == ALL:
            ids |= known
        elif name in CHECKS:
            ids |= set(CHECKS[name])
        elif name in known:
            ids.add(name)
        else:
            raise ValueError(f"skip[{path!r}]: unknown check {name!r}; known: '*', the families "
                             f"{', '.join(CHECKS)} and the checks {', '.join(sorted(known))}")
    return frozenset(ids)
