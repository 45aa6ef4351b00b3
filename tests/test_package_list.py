"""Every package of the source tree is in pyproject.toml's package list (a package left
out would be missing from the wheel; the slow wheel test would find it, this finds it now)."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent


def source_packages():
    found = set()
    for root, name in ((REPO / "torchlint", "torchlint"), (REPO / "rules", "torchlint.rules")):
        for init in root.rglob("__init__.py"):
            parts = init.parent.relative_to(root).parts
            found.add(".".join((name, *parts)))
    return found


def test_every_package_is_listed():
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert set(setuptools["packages"]) == source_packages()
