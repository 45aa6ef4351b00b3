"""Criterion calls: the calls of an owner (function, method or the module's own code)
that run an instance as its criterion (`loss = criterion(out, y)`, then
`loss.backward()`), found from the stdlib ast while its training loops are
(`torchlint.analysis.training_loops`) and resolved to what the instance is built by
only when a reader asks (`with_criteria`).

Cost: collecting is O(1) per call and assignment of the owner; `criteria` is linear in
the owner's assignments and calls (a worklist over the assignments by target name: each
assignment's value is followed once, when one of its names is first reached) plus one
`instances` query per criterion call."""

from __future__ import annotations

import ast
import copy
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from torchlint.analysis.loop_facts import Criterion, LoopFacts
from torchlint.analysis.names import ast_dotted_name, resolve

BACKWARD_FUNCTIONS = frozenset({"torch.autograd.grad", "torch.autograd.backward"})
BACKWARD_METHODS = frozenset({"backward", "manual_backward"})


def with_criteria(facts: Optional[LoopFacts], calls: Sequence["CriterionCalls"], instances) -> Optional[LoopFacts]:
    """`facts` with the criteria its owners' criterion `calls` give, `instances(expression,
    function, class_node)` naming what an instance name holds there."""
    if facts is None or not calls:
        return facts
    owners = dict(facts.owners)
    for found in calls:
        criteria = found.criteria(lambda expression: instances(expression, found.function, found.class_node))
        if criteria and found.owner in owners:
            owners[found.owner] = owners[found.owner]._replace(criteria=tuple(criteria))
    return LoopFacts(owners)


class CriterionCalls:
    """The calls of one owner (`owner`: its qualified name; `function`: its def, None for
    the module's own code; `class_node`: the class of a method) that run an instance as
    its *criterion*: `criterion(out, y)`
    or `self.criterion(out, y)` whose result its backward pass differentiates (`loss =
    criterion(out, y)`, `loss += ...`, `loss.backward()`, `scaler.scale(loss).backward()`,
    `accelerator.backward(loss)`), not under `no_grad`, on what another such call made
    (`criterion(model(x), y)`, `out = self.model(x)`): a model that returns its own
    loss (`loss = model(x, y)`) is no criterion. A value reaches the backward
    through assignments, arithmetic, methods on it (`.mean()`) and a few calls that pass
    it on (`sum(...)`, `torch.stack(...)`, `scaler.scale(...)`), not as the argument of
    another call: `model(x)` in `criterion(model(x), y)` is the criterion's input."""

    def __init__(self, owner: str, function: Optional[ast.AST], class_node: Optional[ast.ClassDef]) -> None:
        self.owner = owner
        self.function = function
        self.class_node = class_node
        self.calls: List[Tuple[ast.Call, int, str]] = []  # (call, innermost loop or -1, callee text)
        self.assigns: List[Tuple[Set[str], ast.AST]] = []
        self.differentiated: List[ast.AST] = []

    def in_class(self, class_node: Optional[ast.ClassDef]) -> "CriterionCalls":
        """These calls, of a method kept from an earlier version of its class, in `class_node`."""
        if class_node is self.class_node:
            return self
        moved = copy.copy(self)
        moved.class_node = class_node
        return moved

    def call(self, node: ast.Call, table, loop: int, quiet: bool, functions: Set[str], cls) -> None:
        inputs = _backward_inputs(node, table)
        if inputs is not None:
            self.differentiated.extend(inputs)
            return
        dotted = ast_dotted_name(node.func)
        if quiet or not dotted:
            return
        head, _, rest = dotted.partition(".")
        if (not rest and head not in functions) or (cls is not None and head == cls[1] and rest and "." not in rest):
            self.calls.append((node, loop, dotted))

    def assign(self, node) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = {n.id for target in targets if isinstance(target, (ast.Name, ast.Tuple, ast.List)) for n in ast.walk(target) if isinstance(n, ast.Name)}
        if names and node.value is not None:
            self.assigns.append((names, node.value))

    def criteria(self, instances: Callable[[ast.AST], Set[str]]) -> List[Criterion]:
        """Each criterion call, by the absolute name of what the instance is built by
        (`instances`: of a callee).

        Cost: O(assignments + calls + what they read), each assignment followed once."""
        names: Set[str] = set()
        calls: Set[int] = set()
        # the assignments by the names they bind: each is followed once, when the first
        # of its names is reached (the same closure as following every assignment that
        # binds a reached name until nothing changes)
        by_name: Dict[str, List[int]] = {}
        for index, (targets, _) in enumerate(self.assigns):
            for name in targets:
                by_name.setdefault(name, []).append(index)
        followed = [False] * len(self.assigns)
        queue: List[str] = []

        def follow(expression: ast.AST) -> None:
            found: Set[str] = set()
            _passed_on(expression, found, calls)
            for name in found - names:
                names.add(name)
                queue.append(name)

        for expression in self.differentiated:
            follow(expression)
        while queue:
            for index in by_name.get(queue.pop(), ()):
                if not followed[index]:
                    followed[index] = True
                    follow(self.assigns[index][1])
        instance_calls = {id(call) for call, _, _ in self.calls}
        outputs = {
            name for targets, value in self.assigns if any(id(n) in instance_calls for n in ast.walk(value)) for name in targets
        }
        found: Dict[Criterion, None] = {}  # in order of first finding
        for call, loop, dotted in self.calls:
            inputs = [n for arg in (*call.args, *(k.value for k in call.keywords)) for n in ast.walk(arg)]
            made = any(id(n) in instance_calls or (isinstance(n, ast.Name) and n.id in outputs) for n in inputs)
            if id(call) in calls and made:
                for source in sorted(instances(call.func)):
                    found.setdefault(Criterion(source, loop, dotted), None)
        return list(found)


# calls whose arguments a differentiated value passes through (`sum(losses)`, `scaler.scale(loss)`)
_PASS_ON = frozenset({"sum", "mean", "stack", "cat", "scale", "add", "mul", "div"})


def _passed_on(expression: ast.AST, names: Set[str], calls: Set[int]) -> None:
    """The names and calls whose value `expression`'s value is made of (not the inputs of
    the calls it makes)."""
    stack = [expression]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Call):
            calls.add(id(node))
            func = node.func
            if isinstance(func, ast.Attribute):
                stack.append(func.value)  # a method of the value (`.mean()`)
            last = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if last in _PASS_ON:
                stack.extend(node.args)
        elif isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Subscript, ast.Tuple, ast.List, ast.Starred, ast.IfExp)):
            stack.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, ast.expr) and n is not getattr(node, "slice", None))
        elif isinstance(node, (ast.GeneratorExp, ast.ListComp)):
            stack.append(node.elt)


def _backward_inputs(call: ast.Call, table: Mapping[str, str]) -> Optional[List[ast.AST]]:
    """What a backward pass differentiates (`loss` of `loss.backward()`, `scaler.scale(loss)`
    of `scaler.scale(loss).backward()`, the argument of `accelerator.backward(loss)`,
    `self.manual_backward(loss)`, `torch.autograd.grad(loss, ...)`), None for another call."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in BACKWARD_METHODS:
        return [func.value, *call.args[:1]]  # the tensor's own method, or a trainer's (`accelerator.backward(loss)`)
    if resolve(ast_dotted_name(func), table) in BACKWARD_FUNCTIONS:
        return list(call.args[:1]) + [k.value for k in call.keywords if k.arg in ("outputs", "tensors")]
    return None
