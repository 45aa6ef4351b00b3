from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cli_support import FIXTURES


@pytest.fixture
def fixtures_copy(tmp_path: Path) -> Path:
    target = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, target)
    return target


@pytest.fixture(autouse=True, scope="session")
def _private_cache_key(tmp_path_factory):
    """The cache key of the runs under test (inherited by the processes they start) lives
    in a directory of the session's own, not in the user's ~/.cache."""
    import os

    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
