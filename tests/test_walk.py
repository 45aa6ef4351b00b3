"""The shared walk: source order, whitespace skipped, statements without expressions."""

from __future__ import annotations

import sys

import libcst as cst

import torchlint.core.walk as walk_module
from cli_support import run_torchlint
from torchlint.analysis.scopes import own_nodes
from torchlint.core.walk import forget_trees, statements, visit_batched, walk

SOURCE = '''
@deco
def f(self, a=g(1)):
    self.a = 1; self.b: int = 2
    if x:
        self.c = 3
    elif y:
        self.d = 4
    else:
        self.e = 5
    for i in r:
        self.f = 6
    try:
        self.h = 8
    except E:
        self.i = 9
    finally:
        self.j = 10
    with w: self.k = 11
    y = self.m if c else n
    def inner():
        self.no = 1
'''


def _assigned(function):
    return [
        node.targets[0].target.attr.value
        for node in statements(function.body)
        if isinstance(node, cst.Assign) and isinstance(node.targets[0].target, cst.Attribute)
    ]


def test_statements_reach_every_nested_block_but_not_nested_functions():
    function = cst.parse_module(SOURCE).body[0]
    assert _assigned(function) == ["a", "c", "d", "e", "f", "h", "i", "j", "k"]


def test_walk_is_in_source_order():
    module = cst.parse_module(SOURCE)
    names = [node.value for node in walk(module) if isinstance(node, cst.Name)]
    assert names[:6] == ["deco", "f", "self", "a", "g", "self"]
    ifexp = next(node for node in walk(module) if isinstance(node, cst.IfExp))
    assert [n.value for n in walk(ifexp) if isinstance(n, cst.Name)] == ["self", "m", "c", "n"]


def test_visit_batched_calls_visit_and_leave_in_order():
    events = []
    visit_batched(
        cst.parse_module("def f():\n    g(h())\n"),
        [
            ("visit_Call", lambda node: events.append(("visit", cst.Module([]).code_for_node(node.func)))),
            ("leave_Call", lambda node: events.append(("leave", cst.Module([]).code_for_node(node.func)))),
            ("visit_FunctionDef", lambda node: events.append(("visit", "def"))),
        ],
    )
    assert events == [("visit", "def"), ("visit", "g"), ("visit", "h"), ("leave", "h"), ("leave", "g")]


def test_deep_nesting_does_not_exhaust_the_stack():
    depth = 1500  # deeper than a recursive walk could go
    assert depth > sys.getrecursionlimit()
    module = cst.parse_module("x = " + " + ".join(["a"] * depth) + "\n")
    assert sum(isinstance(node, cst.Name) for node in walk(module)) == depth + 1


def test_children_and_own_nodes_asked_again_give_what_a_fresh_walk_gives():
    module = cst.parse_module(SOURCE)
    function = module.body[0]
    first = [type(node).__name__ for node in walk(function)]
    own = own_nodes(function.body)
    assert own is own_nodes(function.body)  # kept, not walked again
    forget_trees()
    assert [type(node).__name__ for node in walk(function)] == first
    assert list(own_nodes(function.body)) == list(own)
    assert "no" not in {node.attr.value for node in own if isinstance(node, cst.Attribute)}


def test_the_engine_lets_go_of_the_trees_it_walked(tmp_path):
    (tmp_path / "train.py").write_text(
        "import torch\n\n\ndef train(model, loader, optimizer):\n    for batch in loader:\n"
        "        loss = model(batch)\n        loss.backward()\n        optimizer.step()\n        print(loss.item())\n",
        encoding="utf-8",
    )
    result = run_torchlint("check", "--no-cache", "-j", "1", "--select", "ALL", "--output-format", "concise", ".", cwd=tmp_path)
    assert b"TL003" in result.stdout, result.stdout + result.stderr
    assert not walk_module._KNOWN and not walk_module._WALKED
