"""Classes: their methods, the name a method calls its instance, `self.<name>` and what
each is assigned; in both forms where both are needed (LibCST for rules, the stdlib ast
for gates and facts).

The two forms of `methods` differ in two ways that rules rely on: the LibCST one reads
the blocks of the class body breadth-first and only `if`/`try`/`with` blocks, the
stdlib-ast one in source order and `try*` blocks too. They agree on which methods a
class has wherever a class has no `try*` block in its body.

Cost: each function is linear in the class body it reads (`methods` a queue over the
body's blocks; `method` one `methods` per lookup: its caller, TL002, asks once per class;
`attribute_values` one pass over each method's statements).
"""

from __future__ import annotations

import ast
from collections import deque
from typing import Any, Dict, List, Optional

from torchlint.analysis.names import ast_dotted_name, cst_dotted_name
from torchlint.core.lazy import cst
from torchlint.core.walk import blocks, statements

_STATIC = ("staticmethod", "classmethod")

# ---- LibCST -------------------------------------------------------------------------


def methods(class_node) -> List:
    """The FunctionDefs of a class body (also those under `if`/`try` in the body).
    Cost: O(class body), breadth-first over its blocks."""
    found = []
    stack = deque(blocks(class_node)[0])  # breadth-first: a queue
    while stack:
        statement = stack.popleft()
        if isinstance(statement, cst.FunctionDef):
            found.append(statement)
        elif isinstance(statement, (cst.If, cst.Try, cst.With)):
            for block in blocks(statement):
                stack.extend(block)
    return found


def method(class_node, name: str):
    """The method `name` of a class (the last definition wins, as at run time), or None."""
    found = None
    for function in methods(class_node):
        if function.name.value == name:
            found = function
    return found


def self_name(function) -> Optional[str]:
    """The name a method calls its instance (`self`), or None for a static method."""
    for decorator in function.decorators:
        if cst_dotted_name(decorator.decorator) in _STATIC:
            return None
    params = function.params
    first = (*params.posonly_params, *params.params)[:1]
    return first[0].name.value if first else None


def self_attribute(expression, instance: Optional[str]) -> Optional[str]:
    """`x` for `self.x` (where `self` is `instance`), else None."""
    if (
        instance is not None
        and isinstance(expression, cst.Attribute)
        and isinstance(expression.value, cst.Name)
        and expression.value.value == instance
    ):
        return expression.attr.value
    return None


def attribute_values(class_node) -> Dict[str, List]:
    """What each `self.<name>` is assigned to, in any method of the class, in source
    order: `self.a = v`, `self.a: T = v`, `self.a = self.b = v`, `self.a, self.b = v, w`."""
    values: Dict[str, List] = {}
    for function in methods(class_node):
        instance = self_name(function)
        if instance is None:
            continue
        for node in statements(function.body):
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    _bind(values, target.target, node.value, instance)
            elif isinstance(node, cst.AnnAssign) and node.value is not None:
                _bind(values, node.target, node.value, instance)
    return values


def _bind(values: Dict[str, List], target, value, instance: str) -> None:
    name = self_attribute(target, instance)
    if name is not None:
        values.setdefault(name, []).append(value)
    elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        if len(target.elements) == len(value.elements):
            for left, right in zip(target.elements, value.elements):
                if not isinstance(left, cst.StarredElement) and not isinstance(right, cst.StarredElement):
                    _bind(values, left.value, right.value, instance)


def class_functions(class_node) -> Dict[str, Any]:
    """A class's methods as factories for `constructed_layer`: `self._branch` and
    `Head._branch` both name `def _branch` of class `Head`."""
    found = {}
    for function in methods(class_node):
        found[f"self.{function.name.value}"] = function
        found[f"{class_node.name.value}.{function.name.value}"] = function
    return found


# ---- stdlib ast ---------------------------------------------------------------------


def ast_class_methods(node: ast.ClassDef) -> List[ast.AST]:
    """The `def`/`async def` of a class body, also under `if`/`try`/`with` in the body."""
    found: List[ast.AST] = []
    stack = list(reversed(node.body))
    while stack:
        statement = stack.pop()
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append(statement)
        elif isinstance(statement, (ast.If, ast.Try, ast.With, ast.AsyncWith)) or type(statement).__name__ == "TryStar":
            for block in reversed(blocks(statement)):
                stack.extend(reversed(block))
    return found


def ast_self_name(function) -> Optional[str]:
    """The name a method calls its instance, or None for a static or class method."""
    for decorator in function.decorator_list:
        if ast_dotted_name(decorator) in _STATIC:
            return None
    arguments = (*function.args.posonlyargs, *function.args.args)
    return arguments[0].arg if arguments else None


def ast_self_attribute(node: ast.AST, instance: str) -> Optional[str]:
    """`x` for `self.x` (where `self` is `instance`), else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == instance:
        return node.attr
    return None
