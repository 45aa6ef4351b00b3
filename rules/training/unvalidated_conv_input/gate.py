"""TL002's stdlib-ast side: the classes whose `forward` may hold a finding (the gate) and
the submodule uses recorded as project facts.

Cost: `ast_may_fire` one walk of a class and its `forward`; factories memoized by name (each
function of the file walked once, depth ≤ 4); `submodule_uses` one pass over the file.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set

from torchlint.analysis.layers import PARAMETRIZATIONS
from torchlint.analysis.source_view import SourceView
from torchlint.core.walk import ast_nodes
from torchlint.rules.training.unvalidated_conv_input.values import (
    CONCAT_LAST_NAMES,
    CONCATS,
    CONV_FUNCTIONS,
    CONV_LAYERS,
    MODEL_INPUTS,
    PARAMETERS,
)

TEXT_MARKERS = ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose", "conv1d", "conv2d", "conv3d", "conv_transpose")
_AST_LAYER_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in CONV_LAYERS) | {"Sequential"}
_AST_FUNCTION_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in CONV_FUNCTIONS)
_AST_PARAMETRIZATIONS = frozenset(name.rsplit(".", 1)[-1] for name in PARAMETRIZATIONS)


def _ast_called(func: ast.AST, imports) -> Optional[str]:
    """The last part of the name a call uses, through the file's imports (`C` for
    `from torch.nn import Conv2d as C` is `Conv2d`); None if not a name or attribute."""
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return imports.get(func.id, func.id).rsplit(".", 1)[-1]
    return None


class AstFactories:
    """Which calls may build a conv, as far as the stdlib ast can tell: a conv class,
    `Sequential` whose first layer may be one, or a function or method of this file that
    returns such a call. A superset of what the rule resolves, so the gate stays a
    necessary condition."""

    def __init__(self, functions, imports) -> None:
        self._functions: Dict[str, List[ast.AST]] = {}
        for function in functions:
            self._functions.setdefault(function.name, []).append(function)
        self._imports = imports
        self._known: Dict[str, bool] = {}

    def builds_conv(self, call: ast.Call, depth: int = 0) -> bool:
        called = _ast_called(call.func, self._imports)
        if depth > 4 or called is None:
            return False
        if called == "Sequential" or called in _AST_PARAMETRIZATIONS:
            first = call.args[0] if call.args else None
            return isinstance(first, ast.Call) and self.builds_conv(first, depth + 1)
        return called in _AST_LAYER_NAMES or self._is_factory(called, depth)

    def _is_factory(self, name: str, depth: int) -> bool:
        if name in self._known:
            return self._known[name]
        self._known[name] = False  # a recursive factory does not make itself one
        found = any(
            isinstance(node, ast.Return)
            and isinstance(node.value, ast.Call)
            and self.builds_conv(node.value, depth + 1)
            for function in self._functions.get(name, ())
            for node in ast_nodes(function)
        )
        self._known[name] = found
        return found


def _ast_layer_attributes(class_node: ast.ClassDef, factories: AstFactories) -> set:
    """Attributes the class assigns from a call that may build a conv."""
    found = set()
    for node in ast_nodes(class_node):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
            if factories.builds_conv(node.value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found.update(t.attr for t in targets if isinstance(t, ast.Attribute))
    return found


def ast_may_fire(class_node: ast.ClassDef, forward: ast.AST, settings, factories, imports) -> bool:
    """A call in forward of a possible conv whose input is a concatenation (or, with
    the options that report them, a parameter): necessary for a finding."""
    layers = None
    positional = (*forward.args.posonlyargs, *forward.args.args)
    instance = positional[0].arg if positional else None
    args = forward.args
    candidates = set()
    if settings[PARAMETERS] or settings[MODEL_INPUTS]:  # a conv fed by a parameter may fire
        candidates = {a.arg for a in (*args.posonlyargs, *args.args)[1:]} | {a.arg for a in args.kwonlyargs}
    concatenations = settings[CONCATS]

    def is_concat(node) -> bool:
        return isinstance(node, ast.Call) and _ast_called(node.func, imports) in CONCAT_LAST_NAMES

    nodes = ast_nodes(forward)  # walked once, read twice
    if concatenations:
        for node in nodes:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and is_concat(node.value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                candidates.update(t.id for t in targets if isinstance(t, ast.Name))
    for node in nodes:
        if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Attribute, ast.Name)):
            continue
        first = node.args[0] if node.args else None
        if first is None:
            first = next((k.value for k in node.keywords if k.arg == "input"), None)
        if not (isinstance(first, ast.Name) and first.id in candidates) and not (concatenations and is_concat(first)):
            continue
        func = node.func
        name = _ast_called(func, imports)
        if name in _AST_FUNCTION_NAMES:  # F.conv2d, torch.conv2d, conv2d
            return True
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == instance):
            continue
        if layers is None:
            layers = _ast_layer_attributes(class_node, factories)
        if func.attr in layers:
            return True
    return False


def submodule_uses(view: SourceView) -> List[str]:
    """The capitalised names (as classes are named; `_Private` too) a file mentions in a
    way that may make a module part of another: anything inside a class body but the
    class's own name (a base, `self.block = Block(...)`, `nn.ModuleList(Block() ...)`,
    `isinstance(m, Block)`), and outside classes anything but the constructor a statement
    returns (`return ResNet(...)`, `return Net().cuda()`: a factory builds the model, it
    does not embed it; `_resnet(BasicBlock, ...)` passes a part along, and
    `head = Head(); Model(head=head)` builds one)."""
    if view.tree is None:
        return []
    owner: Dict[int, str] = {}  # line -> the innermost class whose body holds it
    for node in sorted(view.nodes_of(ast.ClassDef), key=lambda node: node.lineno):
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
            owner[line] = node.name
    built: Set[int] = set()
    for statement in view.nodes_of(ast.Return):
        func = statement.value
        if not isinstance(func, ast.Call) or statement.lineno in owner:
            continue
        while isinstance(func, (ast.Attribute, ast.Call)):
            built.add(id(func))
            func = func.value if isinstance(func, ast.Attribute) else func.func
        built.add(id(func))
    found = set()
    for node in view.nodes_of(ast.Name, ast.Attribute):
        name = node.id if isinstance(node, ast.Name) else node.attr
        if name.lstrip("_")[:1].isupper() and id(node) not in built and owner.get(node.lineno) != name:
            found.add(name)
    return sorted(found)
