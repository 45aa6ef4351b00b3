"""Each analysis concept written for both trees (the stdlib ast for gates and facts,
LibCST for rules and fixes) gives the same answer on the same code, where the two forms
are meant to agree."""

from __future__ import annotations

import ast
import textwrap

import pytest

from torchlint.analysis.classes import (
    ast_class_methods,
    ast_self_attribute,
    ast_self_name,
    methods,
    self_attribute,
    self_name,
)
from torchlint.analysis.names import (
    ImportMap,
    ast_called_import,
    ast_dotted_name,
    ast_import_table,
    ast_is_type_checking,
    called_import,
    cst_dotted_name,
    cst_import_table,
    is_type_checking,
    module_level_ast_statements,
    module_level_cst_statements,
)
from torchlint.analysis.scopes import ast_own_nodes, own_nodes
from torchlint.analysis.torch_calls import (
    ast_is_one,
    ast_method_receiver,
    ast_torch_function,
    has_comment,
    is_one,
    method_receiver,
    torch_function,
)
from torchlint.analysis.training_loops import ast_training_call
from torchlint.analysis.value_kinds import ast_fresh_cpu_tensor, fresh_cpu_tensor
from torchlint.core.lazy import cst


def both(source: str):
    source = textwrap.dedent(source)
    return ast.parse(source), cst.parse_module(source)


MODULES = [
    "import torch\nimport torch.nn as nn\nfrom torch import optim as o\n",
    "try:\n    import numpy as np\nexcept ImportError:\n    np = None\nfrom . import sibling\nfrom ..pkg.mod import f\n",
    "if True:\n    import a.b.c\nelse:\n    from x import *\nwith ctx():\n    import w\nfor i in []:\n    import loop\n"
    "while False:\n    import spin\n",
    "def f():\n    import hidden\nclass C:\n    import inside\nfrom typing import TYPE_CHECKING\n"
    "if TYPE_CHECKING:\n    import typed\n",
    "try:\n    import g\nexcept* ValueError:\n    import h\nfinally:\n    import k\n",
]


def _imported(statements, import_types) -> list:
    return [type(node).__name__ for node in statements if isinstance(node, import_types)]


@pytest.mark.parametrize("source", MODULES)
def test_import_time_statements_and_import_tables_agree(source):
    tree, module = both(source)
    assert _imported(module_level_ast_statements(tree), (ast.Import, ast.ImportFrom)) == _imported(
        module_level_cst_statements(module), (cst.Import, cst.ImportFrom)
    )
    assert ast_import_table(tree) == cst_import_table(module) == ImportMap(module).table


@pytest.mark.parametrize(
    "test, expected",
    [
        ("TYPE_CHECKING", True),
        ("typing.TYPE_CHECKING", True),
        ("t.typing.TYPE_CHECKING", True),
        ("not TYPE_CHECKING", False),
        ("DEBUG", False),
        ("TYPE_CHECKING()", False),
    ],
)
def test_type_checking_tests_agree(test, expected):
    tree, module = both(f"if {test}:\n    pass\n")
    assert ast_is_type_checking(tree.body[0].test) is is_type_checking(module.body[0].test) is expected


def test_import_time_statements_can_leave_out_type_checking_blocks():
    tree, _ = both("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import typed\nelse:\n    import real\n")
    everything = [n.names[0].name for n in module_level_ast_statements(tree) if isinstance(n, ast.Import)]
    at_run_time = [
        n.names[0].name for n in module_level_ast_statements(tree, type_checking=False) if isinstance(n, ast.Import)
    ]
    assert sorted(everything) == ["real", "typed"]
    assert at_run_time == ["real"]


@pytest.mark.parametrize(
    "statement, expected",
    [
        ('mlflow, _ = optional_import("mlflow")', "mlflow"),
        ('m = importlib.import_module("wandb")', "wandb"),
        ('__import__("tensorboard")', "tensorboard"),
        ("m: object = import_module('x.y')", "x.y"),
        ("m = import_module(name)", None),
        ('m = load("wandb")', None),
        ("m = import_module()", None),
    ],
)
def test_called_imports_agree(statement, expected):
    tree, module = both(statement + "\n")
    assert ast_called_import(tree.body[0]) == called_import(module.body[0].body[0]) == expected


@pytest.mark.parametrize("expression", ["a", "a.b.c", "self.layer.weight", "f().x", "a[0].b", "1"])
def test_dotted_names_agree(expression):
    tree, module = both(f"{expression}\n")
    assert ast_dotted_name(tree.body[0].value) == cst_dotted_name(module.body[0].body[0].value)


CLASSES = [
    """
    class M(nn.Module):
        def __init__(self, c):
            self.conv = nn.Conv2d(c, c, 3)

        def forward(me, x):
            return me.conv(x)

        @staticmethod
        def helper(x):
            return x

        @classmethod
        def build(cls):
            return cls(3)
    """,
    """
    class N:
        if FLAG:
            def forward(self, x):
                return self.a(x)
        else:
            async def forward(this, x):
                return this.b(x)
        try:
            def extra(self):
                pass
        except ImportError:
            pass
        with ctx():
            def more(self, *args):
                return self.c
        def _private(*args):
            pass
    """,
]


def _class(source: str):
    tree, module = both(source)
    return tree.body[0], module.body[0]


@pytest.mark.parametrize("source", CLASSES)
def test_methods_of_a_class_agree(source):
    ast_node, cst_node = _class(source)
    assert sorted(f.name for f in ast_class_methods(ast_node)) == sorted(f.name.value for f in methods(cst_node))


@pytest.mark.parametrize("source", CLASSES)
def test_self_names_and_attributes_agree(source):
    ast_node, cst_node = _class(source)
    found_ast = {}
    for function in ast_class_methods(ast_node):
        instance = ast_self_name(function)
        attributes = {ast_self_attribute(n, instance) for n in ast_own_nodes(function) if instance is not None}
        found_ast.setdefault(function.name, []).append((instance, sorted(filter(None, attributes))))
    found_cst = {}
    for function in methods(cst_node):
        instance = self_name(function)
        attributes = {self_attribute(n, instance) for n in own_nodes(function.body)}
        found_cst.setdefault(function.name.value, []).append((instance, sorted(filter(None, attributes))))
    assert {name: sorted(found) for name, found in found_ast.items()} == {
        name: sorted(found) for name, found in found_cst.items()
    }


FUNCTIONS = [
    """
    def f(self, x):
        y = self.a(x)
        if y:
            z = g(y)
        for i in h():
            k(i)
        return z
    """,
    """
    def f(x):
        def inner(y):
            return hidden(y)

        class Local:
            def method(self):
                return hidden_too()

        return outer(inner(x))
    """,
]


def _called(nodes, call_type, dotted) -> list:
    return sorted(dotted(node.func) for node in nodes if isinstance(node, call_type))


@pytest.mark.parametrize("source", FUNCTIONS)
def test_own_nodes_of_a_function_agree(source):
    tree, module = both(source)
    found_ast = _called(ast_own_nodes(tree.body[0]), ast.Call, ast_dotted_name)
    found_cst = _called(own_nodes(module.body[0].body), cst.Call, cst_dotted_name)
    assert found_ast == found_cst
    assert "hidden" not in found_ast and "hidden_too" not in found_ast


@pytest.mark.parametrize(
    "expression, fresh",
    [
        ("torch.rand(3)", True),
        ("torch.zeros(3).uniform_(0, 1)", True),
        ("torch.empty(2)[0]", True),
        ("torch.exp(torch.rand(1))", True),  # a torch op's result is on its input's device
        ("torch.exp(x)", False),
        ("torch.rand(3, device=d)", False),
        ("torch.rand(3).to(d)", False),
        ("torch.rand(3).cuda()", False),
        ("x.sum()", False),
        ("loss", False),
    ],
)
def test_fresh_cpu_tensors_agree(expression, fresh):
    source = f"import torch\nimport torch as t\nvalue = {expression}\n"
    tree, module = both(source)
    ast_value = tree.body[-1].value
    cst_value = module.body[-1].body[0].value
    assert ast_fresh_cpu_tensor(ast_value, ast_import_table(tree)) is fresh_cpu_tensor(cst_value, ImportMap(module)) is fresh


@pytest.mark.parametrize("expression", ["torch.rand(3, **options)", "torch.exp(torch.rand(3, **options))"])
def test_the_stdlib_ast_form_of_fresh_cpu_tensors_stays_a_necessary_condition(expression):
    """Past `**options`, the LibCST form sees a fresh tensor that the gate's form does not:
    the gate may say "not fresh" (and go on checking) where the rule says fresh, never the
    other way round."""
    tree, module = both(f"import torch\nvalue = {expression}\n")
    assert not ast_fresh_cpu_tensor(tree.body[-1].value, ast_import_table(tree))
    assert fresh_cpu_tensor(module.body[-1].body[0].value, ImportMap(module))


@pytest.mark.parametrize(
    "call, training",
    [
        ("loss.backward()", True),
        ("self.manual_backward(loss)", True),
        ("torch.autograd.grad(loss, params)", True),
        ("optimizer.step()", True),
        ("self.optimizers()[0].step()", True),
        ("scaler.step(opt)", True),
        ("scheduler.step()", False),
        ("env.step(action)", False),
        ("model(x)", False),
    ],
)
def test_training_calls(call, training):
    """Only the stdlib-ast form exists: training calls are facts, read in the project pass."""
    tree = ast.parse(f"import torch\n{call}\n")
    assert ast_training_call(tree.body[-1].value, ast_import_table(tree)) is training


@pytest.mark.parametrize(
    "call",
    ["torch.log(x)", "t.exp(x)", "exp(x)", "torch.nn.functional.relu(x)", "x.log()", "np.log(x)", "torch.log1p(x - 1)"],
)
def test_torch_functions_and_method_receivers_agree(call):
    tree, module = both(f"import torch\nimport torch as t\nfrom torch import exp\nimport numpy as np\n{call}\n")
    ast_call = tree.body[-1].value
    cst_call = module.body[-1].body[0].value
    assert ast_torch_function(ast_call, ast_import_table(tree)) == torch_function(cst_call, ImportMap(module))
    for method in ("log", "exp"):
        ast_receiver = ast_method_receiver(ast_call, method)
        cst_receiver = method_receiver(cst_call, method)
        assert (ast_receiver is None) is (cst_receiver is None)
        assert ast_receiver is None or ast_dotted_name(ast_receiver) == cst_dotted_name(cst_receiver)


@pytest.mark.parametrize("literal", ["1", "1.0", "0", "2", "True", "'1'", "-1", "x"])
def test_literal_ones_agree(literal):
    tree, module = both(f"{literal}\n")
    assert ast_is_one(tree.body[0].value) is is_one(module.body[0].body[0].value)


@pytest.mark.parametrize(
    "expression, held",
    [
        ("(torch.exp(x)  # the scale\n - 1)", True),
        ("f(a,\n  # why\n  b)", True),
        ("torch.exp(x) - 1", False),
        ("f('#', \"# not a comment\")", False),
    ],
)
def test_has_comment_finds_a_comment_inside_an_expression_and_none_in_a_string(expression, held):
    assert has_comment(cst.parse_expression(expression)) is held
