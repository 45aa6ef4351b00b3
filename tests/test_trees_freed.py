"""A file's lint leaves nothing for the cycle collector but a few closures: its rules let
go of their reports and context as the lint ends (`engine._release`), so its trees are
freed by reference counting at once, and the collector, paused while a file is linted,
has no tree to walk when it runs again."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from torchlint.core.config import Config
from torchlint.engine import lint_text
from torchlint.rule_api.registry import all_rules

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.mark.parametrize("path", ["ocr/losses.py", "ocr/lit.py", "trainer/logging_utils.py"])
def test_a_files_trees_go_when_its_lint_ends(path):
    text = (FIXTURES / path).read_text(encoding="utf-8")
    rules = list(all_rules())
    findings = lint_text(text, path, Config(), rules).diagnostics  # imports and caches first
    assert findings
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector finds is kept in `gc.garbage` to look at
    try:
        assert lint_text(text, path, Config(), rules).diagnostics == findings
        gc.collect()
        trees = [node for node in gc.garbage if type(node).__module__.split(".")[0] in ("libcst", "ast")]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()
    assert not trees  # before `_release`: every node of both trees of the file
