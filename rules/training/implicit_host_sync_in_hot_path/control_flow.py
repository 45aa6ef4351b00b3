"""Where a tested value sits in a method's control flow: the statement holding it, the operands Python
tests, a loop it steers or ends, and a check that only raises or tells."""

from __future__ import annotations

from typing import Dict, Iterator

from torchlint.analysis.scopes import own_nodes
from torchlint.core.lazy import cst

# calls that only tell (a check's warning branch is as deliberate as its raise)
_TELLERS = frozenset({"warn", "warning", "warn_once", "warning_once", "error", "info", "debug", "print", "log"})


def statement_of(node, parents: Dict):
    while node is not None and not isinstance(node, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
        node = parents.get(node)
    return node


def truth_operands(test) -> Iterator:
    """The expressions whose truth Python takes: `a`, `b` in `not a or b`."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        yield from truth_operands(test.expression)
    elif isinstance(test, cst.BooleanOperation):
        yield from truth_operands(test.left)
        yield from truth_operands(test.right)
    else:
        yield test


def single_bindings(body) -> Dict[str, object]:
    """Names bound exactly once in a function body (`n = expr`), with their value."""
    values: Dict[str, object] = {}
    counts: Dict[str, int] = {}
    for node in own_nodes(body):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    name = target.target.value
                    counts[name] = counts.get(name, 0) + 1
                    values[name] = node.value
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For)) and isinstance(node.target, cst.Name):
            counts[node.target.value] = counts.get(node.target.value, 0) + 2
    return {name: value for name, value in values.items() if counts[name] == 1}


def feeds_control_flow(call, parents: Dict, bindings: Dict, sizes: bool) -> bool:
    """Whether a value goes straight to a `for`, an `if`/`while` test or (with `sizes`)
    `len()`, itself or through a name bound once to it (`idx = torch.nonzero(m)` ...
    `for i in idx`)."""
    if _steers(call, parents, sizes):
        return True
    parent = parents.get(call)
    if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1):
        return False
    if not isinstance(parent.targets[0].target, cst.Name):
        return False
    name = parent.targets[0].target.value
    if bindings.get(name) is not call:
        return False
    return any(
        isinstance(node, cst.Name) and node.value == name and _steers(node, parents, sizes)
        for node in parents
    )


def _steers(node, parents: Dict, sizes: bool) -> bool:
    parent = parents.get(node)
    if isinstance(parent, (cst.For, cst.CompFor)):
        return parent.iter is node
    if isinstance(parent, (cst.If, cst.While)):
        return parent.test is node
    if isinstance(parent, cst.Arg) and sizes:
        outer = parents.get(parent)
        return isinstance(outer, cst.Call) and isinstance(outer.func, cst.Name) and outer.func.value == "len"
    return False


def tests_a_check(node, parents: Dict) -> bool:
    """Whether `node` is in the test of an `if` whose body only raises or tells (`if
    torch.isnan(x).any(): if strict: raise ... else: warnings.warn(...)`): a deliberate
    check, like one that raises."""
    owner = _test_owner(node, parents)
    return isinstance(owner, cst.If) and _only_tells(owner.body)


def _test_owner(node, parents: Dict):
    """The `if` or `while` whose test holds `node`, else None."""
    child, parent = node, parents.get(node)
    while parent is not None and not isinstance(parent, (cst.If, cst.While, cst.BaseSmallStatement, cst.FunctionDef)):
        child, parent = parent, parents.get(parent)
    return parent if isinstance(parent, (cst.If, cst.While)) and child is parent.test else None


def ends_a_loop(node, parents: Dict) -> bool:
    """Whether `node` is in a test that ends a loop: a `while` condition, or an `if`
    whose body ends in `break` (all sequences finished, a solver converged)."""
    owner = _test_owner(node, parents)
    if isinstance(owner, cst.While):
        return True
    if not isinstance(owner, cst.If) or not owner.body.body:
        return False
    last = owner.body.body[-1]  # a statement, or in `if c: break` a small statement
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1]
    return isinstance(last, cst.Break)


def _only_tells(block) -> bool:
    """A block of raises, warnings, log or print calls (nested under `if`/`else` too)."""
    statements = block.body if isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ()
    return bool(statements) and all(_tells_only(statement) for statement in statements)


def _tells_only(statement) -> bool:
    if isinstance(statement, cst.If):
        orelse = statement.orelse
        if isinstance(orelse, cst.If):  # elif
            return _only_tells(statement.body) and _tells_only(orelse)
        return _only_tells(statement.body) and (orelse is None or _only_tells(orelse.body))
    one_line = isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite))
    smalls = statement.body if one_line else [statement]
    return all(
        isinstance(small, cst.Raise)
        or (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and _tells(small.value.func))
        for small in smalls
    )


def _tells(func) -> bool:
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return name in _TELLERS
