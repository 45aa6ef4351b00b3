"""walk.blocks: one shape for the blocks of a compound statement, LibCST and stdlib ast alike."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from torchlint.core.walk import blocks

SOURCES = [
    "if a:\n    x = 1\nelif b:\n    y = 2\nelse:\n    z = 3\n",
    "try:\n    a()\nexcept E:\n    b()\nexcept F:\n    c()\nelse:\n    d()\nfinally:\n    e()\n",
    "try:\n    a()\nexcept* E:\n    b()\n",
    "for i in x:\n    a()\nelse:\n    b()\n",
    "while x:\n    a()\n",
    "with a as b:\n    c()\n    d()\n",
    "match x:\n    case 1:\n        a()\n    case _:\n        b()\n",
    "def f():\n    a()\n    b()\n",
    "class C:\n    x = 1\n",
    "x = 1\n",
]


def _cst_kinds(block):
    names = {"SimpleStatementLine": None}
    return [names.get(type(s).__name__, type(s).__name__) for s in block]


def _ast_kinds(block):
    simple = (ast.Expr, ast.Assign, ast.Pass)
    return [None if isinstance(s, simple) else type(s).__name__ for s in block]


@pytest.mark.parametrize("source", SOURCES)
def test_blocks_have_the_same_shape_in_libcst_and_ast(source):
    libcst_blocks = blocks(cst.parse_module(source).body[0])
    ast_blocks = blocks(ast.parse(source).body[0])
    assert [_cst_kinds(b) for b in libcst_blocks] == [_ast_kinds(b) for b in ast_blocks]


def test_an_elif_is_a_block_holding_its_if_and_a_one_line_block_its_suite():
    (body, orelse) = blocks(cst.parse_module("if a: x = 1\nelif b:\n    y = 2\n").body[0])
    assert isinstance(body[0], cst.SimpleStatementSuite)
    assert isinstance(orelse[0], cst.If) and orelse[0].test.value == "b"
