"""Per-step accumulation of a host value: `running += loss.item()` in a training loop.

Summing Python numbers read from the GPU waits for the GPU on every step. Summing the
tensors instead (`running += loss.detach()`, `correct += (pred == y).sum()`) keeps the
step asynchronous; the host read then happens once, after the loop. `accumulator`
finds the statement that accumulates a synced value; `accumulation_plan` says whether
and how the read can move after the loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Mapping, Optional

from torchlint.core.lazy import cst
from torchlint.core.walk import walk

ARITHMETIC = ("Add", "Subtract", "Multiply", "Divide", "FloorDivide", "Power", "Modulo")
# calls that keep a number a number (`float(x.item())`)
NUMBER_WRAPPERS = frozenset({"float", "int", "round"})
# where a Python number is only shown, compared or combined
_DISPLAY_CALLS = frozenset({"print", "float", "int", "round", "str", "format", "repr"})
_DISPLAY_METHODS = frozenset(
    {"log", "log_dict", "log_metrics", "info", "debug", "warning", "add_scalar", "add_scalars", "set_postfix",
     "set_description", "set_postfix_str", "write", "append", "format"}
)
_ACCUMULATING = ("AddAssign", "SubtractAssign")


def climb(node, parents: Mapping):
    """Up through what keeps a value a number (`float(...)`, `round(...)`, arithmetic):
    the outermost such expression and its parent."""
    parent = parents.get(node)
    while True:
        if isinstance(parent, cst.BinaryOperation) and type(parent.operator).__name__ in ARITHMETIC:
            node, parent = parent, parents.get(parent)
        elif isinstance(parent, cst.Arg) and parent.keyword is None:
            call = parents.get(parent)
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in NUMBER_WRAPPERS:
                node, parent = call, parents.get(call)
            else:
                return node, parent
        else:
            return node, parent


def accumulator(call, parents: Mapping):
    """The statement that folds a synced value into a name on every step: `running +=
    loss.item()` (also through arithmetic: `+= loss.item() * n`), or a running mean
    `avg = 0.9 * avg + 0.1 * loss.item()`; None otherwise."""
    node, parent = climb(call, parents)
    if node is not call and _repeats_a_sequence(node):
        return None  # `lengths += n.item() * [seq]`: a count, needed on the host
    if isinstance(parent, cst.AugAssign) and type(parent.target) is cst.Name:
        return parent if type(parent.operator).__name__ in _ACCUMULATING else None
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and type(parent.targets[0].target) is cst.Name:
        name = parent.targets[0].target.value
        inside = set(map(id, walk(call)))  # `x = x.clamp(...).item()` rebinds, it does not accumulate
        if any(type(n) is cst.Name and n.value == name and id(n) not in inside for n in walk(parent.value)):
            return parent
    return None


def _repeats_a_sequence(expression) -> bool:
    return any(
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, cst.Multiply)
        and any(isinstance(side, (cst.List, cst.Tuple, cst.ListComp, cst.SimpleString)) for side in (node.left, node.right))
        for node in walk(expression)
    )


@dataclass(frozen=True)
class AccumulationPlan:
    """Move the host read of `name` after `loop`: the synced call becomes its tensor
    (`detach` for a value with a graph, none for a count), and `name =
    convert(name)` follows the loop. `safe`: every later read is a number context."""

    name: str
    loop: object
    convert: str
    detach: bool
    safe: bool


def accumulation_plan(call, statement, parents: Mapping, owner_body) -> Optional[AccumulationPlan]:
    """How to fix `statement` (from `accumulator`), or None when the read cannot move:
    the value goes through a wrapper (`float(...)`), the name is not set to a number just
    before the loop, or the loop itself reads it (it would sync there anyway)."""
    if not isinstance(statement, cst.AugAssign):
        return None
    node = call
    while node is not statement.value:
        node = parents.get(node)
        if not isinstance(node, cst.BinaryOperation):
            return None
    name = statement.target.value
    loop = _loop_of(statement, parents)
    if loop is None or loop.orelse is not None:
        return None
    init = _initial_value(loop, name, parents)
    if init is None:
        return None
    for inner in walk(loop):
        if type(inner) is cst.Name and inner.value == name and inner is not statement.target:
            return None
    count = _is_count(call.func.value)
    convert = "int" if count and isinstance(init, cst.Integer) else "float"
    inside = set(map(id, walk(loop)))
    reads = [
        n for n in walk(owner_body, into_functions=False)
        if type(n) is cst.Name and n.value == name and id(n) not in inside and not _binds(n, parents)
    ]
    return AccumulationPlan(name, loop, convert, not count, all(_number_context(n, parents) for n in reads))


def _loop_of(statement, parents: Mapping):
    node = parents.get(statement)
    while node is not None and not isinstance(node, (cst.FunctionDef, cst.Lambda)):
        if isinstance(node, (cst.For, cst.While)):
            return node
        node = parents.get(node)
    return None


def _initial_value(loop, name: str, parents: Mapping):
    """The number `name` is set to by the last statement before `loop` in its block that
    binds it (`running = 0.0`), or None."""
    block = parents.get(loop)
    body: List = list(getattr(block, "body", ()))
    if loop not in body:
        return None
    for statement in reversed(body[: body.index(loop)]):
        if not isinstance(statement, cst.SimpleStatementLine):
            if any(type(n) is cst.Name and n.value == name for n in walk(statement)):
                return None
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and any(
                type(t.target) is cst.Name and t.target.value == name for t in small.targets
            ):
                value = small.value
                if isinstance(value, cst.UnaryOperation):
                    value = value.expression
                return value if isinstance(value, (cst.Integer, cst.Float)) else None
            if isinstance(small, (cst.AugAssign, cst.AnnAssign)) and type(small.target) is cst.Name and small.target.value == name:
                return None
    return None


def _is_count(receiver) -> bool:
    """A count of matches (`(pred == y).sum()`, `pred.eq(y).sum()`): an integer with no graph."""
    for node in walk(receiver):
        if isinstance(node, cst.Comparison):
            return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("eq", "ne"):
            return True
    return False


def _binds(name, parents: Mapping) -> bool:
    holder = parents.get(name)
    if isinstance(holder, (cst.AssignTarget, cst.AsName)):
        return True
    return isinstance(holder, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)) and holder.target is name


def _number_context(name, parents: Mapping) -> bool:
    """Whether a read only shows, compares or combines a number: arithmetic, a
    comparison, an f-string, `print`/`round`/`float`, a logging or progress-bar call, a
    name bound to such an expression (`avg = running / n`)."""
    node, parent = climb(name, parents)
    if isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.FormattedStringExpression)):
        return True
    if isinstance(parent, cst.Arg):
        call = parents.get(parent)
        func = getattr(call, "func", None)
        if isinstance(func, cst.Name):
            return func.value in _DISPLAY_CALLS
        return isinstance(func, cst.Attribute) and func.attr.value in _DISPLAY_METHODS
    if isinstance(parent, cst.DictElement):
        holder = parents.get(parents.get(parent))
        func = getattr(parents.get(holder), "func", None) if isinstance(holder, cst.Arg) else None
        return isinstance(func, cst.Attribute) and func.attr.value in _DISPLAY_METHODS
    return isinstance(parent, cst.Assign) and node is not name and type(parent.targets[0].target) is cst.Name
