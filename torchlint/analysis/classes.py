"""Classes and their methods, from the stdlib ast (the LibCST form: `torchlint.analysis.modules.methods`, `self_name`)."""

from __future__ import annotations

import ast
from typing import List, Optional

from torchlint.analysis.names import ast_dotted_name
from torchlint.core.walk import blocks


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
        if ast_dotted_name(decorator) in ("staticmethod", "classmethod"):
            return None
    arguments = (*function.args.posonlyargs, *function.args.args)
    return arguments[0].arg if arguments else None
