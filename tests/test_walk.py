"""The shared walk: source order, whitespace skipped, statements without expressions."""

from __future__ import annotations

import sys

import libcst as cst

from torchlint.core.walk import statements, visit_batched, walk

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
