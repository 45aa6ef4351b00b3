"""What a statement or expression binds and reads (LibCST): a function's parameter names,
the names an assignment target binds, whether an expression reads a name, whether a
statement is a docstring.

Cost: each function is one walk of what it is given (linear in it).
"""

from __future__ import annotations

from typing import List, Set

from torchlint.core.lazy import cst
from torchlint.core.walk import children


def parameter_names(function) -> List[str]:
    """The names of a function's parameters, in order (positional-only, regular,
    *args, keyword-only, **kwargs)."""
    params = function.params
    names = [p.name.value for p in (*params.posonly_params, *params.params)]
    if isinstance(params.star_arg, cst.Param):
        names.append(params.star_arg.name.value)
    names.extend(p.name.value for p in params.kwonly_params)
    if params.star_kwarg is not None:
        names.append(params.star_kwarg.name.value)
    return names


def is_docstring(statement) -> bool:
    """Whether a statement is a bare string (a docstring when it comes first)."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def assigned_names(target) -> List[str]:
    """The plain names an assignment target binds: `a`, `a, (b, *c)` -> a, b, c."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in assigned_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return assigned_names(target.value)
    return []


def read_names(expression) -> Set[str]:
    """Every name read as a variable in the expression: `x` in `x.shape[1] == 3`, not in
    `self.x` or `f(x=1)`. Cost: one walk of the expression."""
    found: Set[str] = set()
    stack = [expression]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            found.add(node.value)
        elif isinstance(node, (cst.Attribute, cst.Arg)):
            stack.append(node.value)
        else:
            stack.extend(children(node))
    return found
