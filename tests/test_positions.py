"""Positions computed per top-level statement (or per statement of a nested block) equal
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

# statements nested in every kind of block, at indents that differ from the module's
NESTED = '''def outer(x):
    if x:
        pass
    elif x > 1:
      y = [1,
           2]  # a block indented by two
    elif x > 2: z = 1; w = 2
    else:
        if x:
            del x
    for i in x:
        continue
    else:
        while x:
            break
        else:
            x = 1 + \\
                2
    try:
        import os
    except (ValueError,
            TypeError) as error:
        raise
    except Exception:
        # a comment in a handler
        pass
    else:
        global g
    finally:
        def inner():
            nonlocal x
            @decorator
            class K:
                async def run(self):
                    async with a as b, c:
                        async for j in b:
                            yield j
                    return [k async for k in b]
    try:
        pass
    except* OSError:
        assert x, "message"
    match x:
        case {"k": v}:
            match v:
              case _:
                  w: int = v
        case _ if x:
            x += 1
    with open(x) as f: f.read()
    return lambda: x
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
@pytest.mark.parametrize("text", [TRICKY, NESTED], ids=["tricky", "nested"])
def test_tricky_module(text, newline):
    assert len(list(walk(cst.parse_module(text)))) > 100
    _same(text.replace("\n", newline))


@pytest.mark.parametrize("unit, page_break", [("\t", ""), ("  ", ""), ("    ", "\x0c")])
def test_other_indents(unit, page_break):
    """Tabs, two spaces, a form feed before the indent: the lines keep their indentation."""
    lines = []
    for line in NESTED.splitlines(keepends=True):
        depth = -(-(len(line) - len(line.lstrip(" "))) // 4)  # an odd indent becomes one more unit
        lines.append((page_break if depth else "") + unit * depth + line.lstrip(" "))
    _same("".join(lines))


def test_a_statement_deep_in_a_long_method_is_resolved_alone():
    """A node of one statement of a long `elif` chain costs that statement, not the method."""
    branches = "".join(f"        elif x == {i}:\n            print(x.item())\n" for i in range(1, 200))
    text = f"class C:\n    def f(self, x):\n        if x == 0:\n            pass\n{branches}"
    module, tree = cst.parse_module(text), ast.parse(text)
    ranges = StatementRanges(module, lambda: tree)
    full = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    statement = next(node for node in walk(module) if isinstance(node, cst.If) and "== 150" in module.code_for_node(node.test))
    call = statement.body.body[0].body[0].value
    assert (ranges[call].start.line, ranges[call].start.column) == (full[call].start.line, full[call].start.column)
    assert len(ranges._ranges) == len(list(walk(statement.body.body[0]))) < 20


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


@pytest.mark.slow
def test_every_own_source_file_the_sample_leaves_out():
    """Positions also go wrong on what node kinds do not tell (comments, continuations,
    indentation): the rest of torchlint's own code, outside the quick loop."""
    for path in sorted(set(OWN_CODE) - set(OWN_SOURCES)):
        _same(path.read_text(encoding="utf-8"))


def test_the_sampled_files_hold_every_shape_of_node_the_code_has():
    sampled = set().union(*map(_shapes, FIXTURE_SOURCES + OWN_SOURCES))
    assert sampled == set().union(*map(_shapes, OWN_CODE + FIXTURE_SOURCES))
    assert ("ClassDef", True) in sampled and len(OWN_SOURCES) < len(OWN_CODE) / 4


def test_falls_back_when_the_ast_is_missing():
    module = cst.parse_module("x = 1\n")
    ranges = StatementRanges(module, lambda: None)
    assert ranges[module.body[0]].start.line == 1 and ranges._fallback is not None
