"""Fixes proven by execution: run programs on CPU torch before and after the real CLI's
fix, and compare what each printed and the exception it ended with.

All programs of one side run in one child process (torch is imported once), each by
`runpy` in its own folder, with its own globals and the environment put back after it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterable, NamedTuple, Optional

RUNNER = r"""
import contextlib, io, json, os, runpy, sys, warnings
results = {}
for path in sys.argv[1:]:
    out, error, environ, cwd = io.StringIO(), None, dict(os.environ), os.getcwd()
    os.chdir(os.path.dirname(path))
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runpy.run_path(path, run_name="__main__")
    except BaseException as exception:
        error = type(exception).__name__
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(environ)
    results[path] = [out.getvalue(), error]
print(json.dumps(results))
"""


class Outcome(NamedTuple):
    """What a program printed, and the name of the exception it ended with (None: none)."""

    stdout: str
    error: Optional[str]

    def lines(self) -> Dict[str, str]:
        """Its printed `label: value` lines, by label."""
        return dict(line.split(": ", 1) for line in self.stdout.splitlines() if ": " in line)


def run_programs(paths: Iterable[Path], timeout: int = 600) -> Dict[Path, Outcome]:
    """Run each program (a path to a .py file) in one CPU torch child process."""
    paths = [Path(path) for path in paths]
    result = subprocess.run(
        [sys.executable, "-c", RUNNER, *map(str, paths)], capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
    )
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.splitlines()[-1])
    return {path: Outcome(*found[str(path)]) for path in paths}
