"""The guard's documentation stays true: every check id the code raises is in docs/guard.md,
and TL002's doc (`torchlint rule TL002`) points to the guard."""

from __future__ import annotations

import re
from pathlib import Path

from torchlint.cli import main

REPO = Path(__file__).resolve().parents[2]


def raised_check_ids():
    ids = set()
    for path in (REPO / "torchlint" / "runtime").glob("*.py"):
        ids |= set(re.findall(r'"((?:conv|rnn|batchnorm|embedding|index|class|bce|finite)-[a-z0-9-]+)"',
                              path.read_text()))
    return ids


def test_every_check_id_is_documented():
    ids = raised_check_ids()
    assert {"conv-channels", "embedding-index", "class-target", "rnn-cudnn-double-backward",
            "finite-output", "finite-gradient"} <= ids
    guide = (REPO / "docs" / "guard.md").read_text()
    assert [check for check in sorted(ids) if f"`{check}`" not in guide] == []


def test_tl002_doc_points_to_the_guard(capsys):
    assert main(["rule", "TL002"]) == 0
    assert "torchlint.runtime.guard(model)" in capsys.readouterr().out
