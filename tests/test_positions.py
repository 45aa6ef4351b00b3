"""Positions computed per top-level statement (or per class body statement) equal
LibCST's whole-module PositionProvider."""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import FrozenSet, List, Set, Tuple

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from cli_support import FIXTURES
from torchlint.core.positions import StatementRanges
from torchlint.core.walk import walk

TRICKY = '''#!/usr/bin/env python
# header comment
"""Module docstring."""
import os; import sys
from typing import (
    Any,
)


@decorator(
    arg=1,
)
# between decorator and def
@other
async def f(x, /, y=1, *a, z: "int" = 2, **k) -> Any:
    return [i for i in x if i] if y else {k: v for k, v in a}


class C(Base, metaclass=Meta):
    """Doc."""

    def m(self):
        match self.x:
            case [1, *rest] if rest:
                pass
        return f"{self.x!r:>{10}}"


x = (1 +
     2)  # trailing


@dataclass
class Outer(  # a comment in the header
    Base,
):  # after the colon
    a = 1; b = [
        2,
    ]

    # a comment before a decorated method
    @property
    @cached(
        size=2,
    )
    def p(self):
        text = """a
  multi-line string
"""
        return text

    class Inner:
        """Nested."""

        def deep(self, y):
            if y:
                return (y +
                        1)

    class Short: pass

    def last(self): return {
        "k": 1}
'''


def _same(text: str) -> None:
    module = cst.parse_module(text)
    tree = ast.parse(text)
    full = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    ours = StatementRanges(module, lambda: tree)
    nodes = [node for node in walk(module) if node is not module]
    for node in reversed(nodes):  # any order of requests must work
        a, b = full[node], ours[node]
        assert (a.start.line, a.start.column, a.end.line, a.end.column) == (
            b.start.line, b.start.column, b.end.line, b.end.column
        ), type(node).__name__
    assert ours._fallback is None


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_tricky_module(newline):
    assert len(list(walk(cst.parse_module(TRICKY)))) > 100
    _same(TRICKY.replace("\n", newline))


@functools.lru_cache(maxsize=None)
def _shapes(path: Path) -> FrozenSet[Tuple[str, bool]]:
    """The kinds of node in the file, each with whether it spans lines."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:
        return frozenset()
    return frozenset(
        (type(node).__name__, getattr(node, "end_lineno", None) != getattr(node, "lineno", None)) for node in ast.walk(tree)
    )


def _covering(paths: List[Path], covered: Set[Tuple[str, bool]]) -> List[Path]:
    """Few of `paths` (chosen greedily) that hold every shape the others hold beyond `covered`."""
    shapes = {path: _shapes(path) for path in paths}
    chosen: List[Path] = []
    while True:
        best = max(paths, key=lambda path: (len(shapes[path] - covered), -path.stat().st_size))
        if not shapes[best] - covered:
            return chosen
        chosen.append(best)
        covered = covered | shapes[best]


FIXTURE_SOURCES = sorted(FIXTURES.rglob("*.py"))
# torchlint's own code: the files that add a shape of node the fixtures do not have (the others repeat them)
OWN_CODE = sorted((FIXTURES.parent / "torchlint").rglob("*.py")) + sorted((FIXTURES.parent / "rules").rglob("*.py"))
OWN_SOURCES = _covering(OWN_CODE, set().union(*map(_shapes, FIXTURE_SOURCES)))


@pytest.mark.parametrize("path", FIXTURE_SOURCES + OWN_SOURCES, ids=lambda p: str(p.relative_to(FIXTURES.parent)))
def test_fixture_and_own_source_files(path):
    text = path.read_text(encoding="utf-8")
    try:
        ast.parse(text)
    except SyntaxError:
        pytest.skip("unparsable fixture")
    _same(text)


def test_the_sampled_files_hold_every_shape_of_node_the_code_has():
    sampled = set().union(*map(_shapes, FIXTURE_SOURCES + OWN_SOURCES))
    assert sampled == set().union(*map(_shapes, OWN_CODE + FIXTURE_SOURCES))
    assert ("ClassDef", True) in sampled and len(OWN_SOURCES) < len(OWN_CODE) / 4


def test_falls_back_when_the_ast_is_missing():
    module = cst.parse_module("x = 1\n")
    ranges = StatementRanges(module, lambda: None)
    assert ranges[module.body[0]].start.line == 1 and ranges._fallback is not None
