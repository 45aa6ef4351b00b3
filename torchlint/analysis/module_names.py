"""Where a file sits in the linted tree as a Python module, for rules that look across files.

Cost: O(length of the path or name) per call."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Optional


def module_name(path: str) -> str:
    """`pkg/sub/mod.py` -> `pkg.sub.mod`; `pkg/__init__.py` -> `pkg` (path relative to the run)."""
    parts = list(PurePosixPath(path.replace("\\", "/")).with_suffix("").parts)
    parts = [part for part in parts if part not in (".", "")]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_package(path: str) -> bool:
    return PurePosixPath(path.replace("\\", "/")).stem == "__init__"


def absolute_import(importer: str, importer_is_package: bool, target: str) -> Optional[str]:
    """Resolve a (possibly relative) imported module name against the importing module.

    `from ..models import x` inside `pkg.train.loop` names `pkg.models`.
    """
    level = len(target) - len(target.lstrip("."))
    if level == 0:
        return target
    package = importer.split(".") if importer_is_package else importer.split(".")[:-1]
    if level - 1 > len(package):
        return None
    base = package[: len(package) - (level - 1)]
    rest = target[level:]
    return ".".join(base + ([rest] if rest else []))


def suffix_matches(candidate: str, imported: str) -> bool:
    """A module found at `src/pkg/models.py` (`src.pkg.models`) answers `import pkg.models`:
    the run's paths need not start at the import root."""
    return candidate == imported or candidate.endswith("." + imported)
