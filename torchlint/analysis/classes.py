"""Classes and their methods, in both forms: the LibCST form for rules, the stdlib-ast form
for gates and facts.

The two forms of `methods` differ in two ways that rules rely on: the LibCST one reads
the blocks of the class body breadth-first and only `if`/`try`/`with` blocks, the
stdlib-ast one in source order and `try*` blocks too. They agree on which methods a
class has wherever a class has no `try*` block in its body.
"""

from __future__ import annotations

import ast
from typing import List, Optional

from torchlint.analysis.names import ast_dotted_name, cst_dotted_name
from torchlint.core.lazy import cst
from torchlint.core.walk import blocks

_STATIC = ("staticmethod", "classmethod")

# ---- LibCST -------------------------------------------------------------------------


def methods(class_node) -> List:
    """The FunctionDefs of a class body (also those under `if`/`try` in the body)."""
    found = []
    stack = list(blocks(class_node)[0])
    while stack:
        statement = stack.pop(0)
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
