"""The CLI's findings in a tree, for the TL2xx tests."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import run_torchlint


def findings(root, *args) -> list:
    """Sorted (file name, row, column, code) of `torchlint check` on `root` with `args`."""
    result = run_torchlint("check", "--no-cache", "--output-format", "json", *args, ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr.decode()
    return sorted(
        (Path(d["filename"]).name, d["location"]["row"], d["location"]["column"], d["code"])
        for d in json.loads(result.stdout)
    )
