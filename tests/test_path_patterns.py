"""`PathPatterns` answers bare names from a set: the same answers as pathspec's own matching."""

from __future__ import annotations

import itertools
import os

import pathspec
import pytest

from torchlint.core.config import Config
from torchlint.run.discovery import PathPatterns

PATHS = [
    "build", "build/x.py", "src/build/x.py", "src/builder.py", "rebuild/x.py", "src/x.build", ".venv/lib/a.py",
    "venv", "a/venv", "a/venv.py", "dist/pkg/__init__.py", "pkg/dist.py", "tests/data/a.py", "a.pyi", "docs/conf.py",
    "node_modules/x/y.py", "pkg/site-packages/z.py", "x/.git/config", "x/.github/a.py",
]
PATTERN_SETS = [
    list(Config().exclude),
    ["build", "*.pyi", "docs/"],
    ["tests/data", "venv", "a/"],
    ["build", "!build/keep.py", "dist"],  # a negation: order matters, pathspec decides all
    ["src/build", "**/dist", "x.build"],
]


@pytest.mark.parametrize("patterns", PATTERN_SETS)
def test_bare_names_match_as_pathspec_matches(tmp_path, patterns):
    reference = pathspec.GitIgnoreSpec.from_lines(patterns)
    fast = PathPatterns(tmp_path, patterns)
    for relative, is_dir in itertools.product(PATHS, (False, True)):
        absolute = os.path.join(str(tmp_path), *relative.split("/"))
        suffix = "/" if is_dir else ""
        expected = any(reference.match_file(c + suffix) for c in (relative, relative.rsplit("/", 1)[-1]))
        assert fast.matches(tmp_path / relative, is_dir, absolute) == expected, (patterns, relative, is_dir)


def test_the_default_excludes_need_no_regex(tmp_path):
    assert PathPatterns(tmp_path, list(Config().exclude)).spec is None
