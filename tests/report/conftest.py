from pathlib import Path

import pytest
from report_builders import RULES

from torchlint.report import ReportContext


@pytest.fixture
def make_ctx(tmp_path):
    """A ReportContext rooted at a temporary project, which is also the cwd."""

    def build(**kwargs) -> ReportContext:
        kwargs.setdefault("rules", RULES)
        kwargs.setdefault("root", tmp_path)
        return ReportContext(**kwargs)

    return build


@pytest.fixture(autouse=True)
def in_project(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path
