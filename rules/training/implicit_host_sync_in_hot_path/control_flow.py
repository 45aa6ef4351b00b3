"""Where a tested value sits in a method's control flow: the statement holding it, the operands Python
tests, a loop it steers or ends, and a check that only raises or tells.

Cost: each question climbs from a node to its statement (O(depth)); with a `memo` per
method (`statement_of`, `_test_owner`), every node passed keeps the answer, so the operands
of a long `and`/`or` climb it once in all. `truth_operands` O(test); `single_bindings` one
pass over a method; `feeds_control_flow` O(the uses of one name) with `name_nodes` built
once per method.
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional

from torchlint.analysis.scopes import own_nodes
from torchlint.core.lazy import cst

# calls that only tell (a check's warning branch is as deliberate as its raise)
_TELLERS = frozenset({"warn", "warning", "warn_once", "warning_once", "error", "info", "debug", "print", "log"})


def statement_of(node, parents: Dict, memo: Optional[Dict[int, object]] = None):
    """The small or compound statement holding `node`. Cost: O(depth); with a `memo`
    (one per `parents`), O(1) for a node passed before."""
    passed: List = []
    while node is not None and not isinstance(node, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
        if memo is not None:
            if id(node) in memo:
                node = memo[id(node)]
                break
            passed.append(node)
        node = parents.get(node)
    if memo is not None:
        memo.update((id(passed_node), node) for passed_node in passed)
    return node


def truth_operands(test) -> Iterator:
    """The expressions whose truth Python takes: `a`, `b` in `not a or b`, left to right.
    Cost: O(test), iterative (a long `or` is a deep tree)."""
    stack = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            stack.append(node.expression)
        elif isinstance(node, cst.BooleanOperation):
            stack.append(node.right)
            stack.append(node.left)
        else:
            yield node


def single_bindings(body) -> Dict[str, object]:
    """Names bound exactly once in a function body (`n = expr`), with their value.
    Cost: one pass over the body's own nodes."""
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


def name_nodes(parents: Dict) -> Dict[str, List]:
    """Every `Name` node under a method's body (the nodes `parents` maps, nested functions
    included), by its name. Cost: one pass over `parents`."""
    found: Dict[str, List] = {}
    for node in parents:
        if isinstance(node, cst.Name):
            found.setdefault(node.value, []).append(node)
    return found


def feeds_control_flow(call, parents: Dict, bindings: Dict, sizes: bool, names: Optional[Dict[str, List]] = None) -> bool:
    """Whether a value goes straight to a `for`, an `if`/`while` test or (with `sizes`)
    `len()`, itself or through a name bound once to it (`idx = torch.nonzero(m)` ...
    `for i in idx`). `names`: `name_nodes(parents)`, built once per method.
    Cost: O(1) around the call, then O(the Name nodes of the bound name) with `names`
    (without: O(the method), once per call)."""
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
    if names is None:
        names = name_nodes(parents)
    return any(_steers(node, parents, sizes) for node in names.get(name, ()))


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


def tests_a_check(node, parents: Dict, memo: Optional[Dict[int, object]] = None) -> bool:
    """Whether `node` is in the test of an `if` whose body only raises or tells (`if
    torch.isnan(x).any(): if strict: raise ... else: warnings.warn(...)`): a deliberate
    check, like one that raises. Cost: `_test_owner`'s, then O(the `if`'s body)."""
    owner = _test_owner(node, parents, memo)
    return isinstance(owner, cst.If) and _only_tells(owner.body)


def _test_owner(node, parents: Dict, memo: Optional[Dict[int, object]] = None):
    """The `if` or `while` whose test holds `node`, else None. Cost: O(depth); with a
    `memo` (one per `parents`), every node passed keeps the answer (they all climb to the
    same `if`, `while` or statement), so O(1) for a node passed before."""
    passed: List = []
    child, parent = node, parents.get(node)
    while parent is not None and not isinstance(parent, (cst.If, cst.While, cst.BaseSmallStatement, cst.FunctionDef)):
        if memo is not None:
            if id(child) in memo:
                answer = memo[id(child)]
                memo.update((id(passed_node), answer) for passed_node in passed)
                return answer
            passed.append(child)
        child, parent = parent, parents.get(parent)
    answer = parent if isinstance(parent, (cst.If, cst.While)) and child is parent.test else None
    if memo is not None:
        passed.append(child)
        memo.update((id(passed_node), answer) for passed_node in passed)
    return answer


def ends_a_loop(node, parents: Dict, memo: Optional[Dict[int, object]] = None) -> bool:
    """Whether `node` is in a test that ends a loop: a `while` condition, or an `if`
    whose body ends in `break` (all sequences finished, a solver converged).
    Cost: `_test_owner`'s, then O(1)."""
    owner = _test_owner(node, parents, memo)
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
