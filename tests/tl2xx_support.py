"""The CLI's findings in a tree, and user scripts run as `python SCRIPT` would run them,
for the TL2xx tests."""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import warnings
from pathlib import Path
from typing import Optional, Tuple

from cli_support import run_torchlint


def findings(root, *args) -> list:
    """Sorted (file name, row, column, code) of `torchlint check` on `root` with `args`."""
    result = run_torchlint("check", "--no-cache", "--output-format", "json", *args, ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr.decode()
    return sorted(
        (Path(d["filename"]).name, d["location"]["row"], d["location"]["column"], d["code"])
        for d in json.loads(result.stdout)
    )


def run_script(path: Path) -> Tuple[str, Optional[BaseException]]:
    """What the script at `path` prints and the exception it ends with (None when it ends
    normally), run in this process as `python SCRIPT` in its own directory would run it,
    with warning filters of its own (a new interpreter costs seconds once torch is imported)."""
    printed = io.StringIO()
    directory = os.getcwd()
    try:
        os.chdir(path.parent)
        with warnings.catch_warnings(), contextlib.redirect_stdout(printed):
            runpy.run_path(str(path), run_name="__main__")
    except BaseException as error:  # noqa: B036 (a script may end with SystemExit too)
        return printed.getvalue(), error
    finally:
        os.chdir(directory)
    return printed.getvalue(), None
