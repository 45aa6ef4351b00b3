"""The arguments of a LibCST call, as rules read and edit them.

A rule asks whether a keyword is given, which argument a parameter receives, what
literal it holds, and, to fix, inserts a keyword after the last argument (after its
value, so a trailing comma and the closing parenthesis stay where the author put them).

Cost: O(arguments of the call) per question.
"""

from __future__ import annotations

from typing import Optional

from torchlint.core.diagnostics import Edit, Location
from torchlint.core.lazy import cst


def keyword_argument(call, name: str):
    """The `name=...` argument of the call, or None."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def bound_argument(call, keyword: str, index: Optional[int]):
    """The argument bound to a parameter (by keyword, or at a positional index).

    After a `*args` the positions are unknown, so only keywords are looked at; keywords
    may also follow `*args` and `**kwargs`."""
    position: Optional[int] = 0
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == keyword:
                return arg
        elif arg.star:
            if arg.star == "*":
                position = None
        elif position is not None:
            if index is not None and position == index:
                return arg
            position += 1
    return None


def has_double_star(call) -> bool:
    """`f(**kwargs)` may hold any keyword: nothing can be said about what it passes."""
    return any(arg.star == "**" for arg in call.args)


def positional_count(call) -> Optional[int]:
    """How many positional arguments the call passes; None if a `*args` hides the count."""
    count = 0
    for arg in call.args:
        if arg.star == "*":
            return None
        if arg.keyword is None and not arg.star:
            count += 1
    return count


def literal_bool(expression) -> Optional[bool]:
    """True/False for the names `True`/`False` (and the integers 1/0), else None."""
    if isinstance(expression, cst.Name) and expression.value in ("True", "False"):
        return expression.value == "True"
    if isinstance(expression, cst.Integer) and expression.value in ("0", "1"):
        return expression.value == "1"
    return None


def append_keyword(positions, call, text: str, newline: str = "\n") -> Optional[Edit]:
    """An edit adding `text` (`name=value`) as the call's last argument: on a line of its
    own in a call written one argument per line with a trailing comma (as a formatter
    keeps it), else after the last argument; None for a call without arguments (there is
    no argument to anchor the insertion after) or whose one argument is a generator
    without parentheses of its own (`f(x for x in y)` takes no second argument).

    An argument's range runs from its `*` or keyword to the end of its value with the
    value's own parentheses (`(a if b else None)`), not the comma after it; the value's
    range would stop inside those parentheses."""
    if not call.args:
        return None
    last = call.args[-1]
    if isinstance(last.value, cst.GeneratorExp) and not last.value.lpar:
        return None
    end = positions.end(last)
    closing = positions.end(call).row
    if isinstance(last.comma, cst.Comma) and closing > end.row:
        indent = positions.indent_of(last)
        return Edit(Location(closing, 1), Location(closing, 1), f"{indent}{text},{newline}")
    return Edit(end, end, f", {text}")


def replace_argument(positions, arg, text: str) -> Edit:
    """An edit replacing one argument (`name=value` with the value's parentheses, without
    its comma) by `text`."""
    return positions.replace(arg, text)
