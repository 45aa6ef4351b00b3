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
