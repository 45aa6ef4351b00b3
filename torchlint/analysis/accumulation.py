"""Per-step accumulation of a host value: `running += loss.item()` in a training loop.

Summing Python numbers read from the GPU waits for the GPU on every step. Summing the
tensors instead (`running += loss.detach()`, `correct += (pred == y).sum()`) keeps the
step asynchronous; the host read then happens once, after the loop. `accumulator`
finds the statement that accumulates a synced value; `accumulation_plan` says whether
and how the read can move after the loop.

Cost: `climb`, `accumulator` O(the expression or statement around a call); with one
`OwnerNames` per owner, `accumulation_plan` is O(nesting depth) per call after one pass
over the owner's nodes and, per name asked, one climb from each of its Name nodes: linear
in the owner (times its nesting depth), however many accumulators it holds.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Tuple

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
# what reads a host copy (`.numpy()`, `.cpu()`) as a number or a list, so that the copy's use is theirs
_HOST_READS_OF_A_COPY = frozenset({"item", "tolist"})


def climb(node, parents: Mapping, memo: Optional[Dict[int, Tuple[object, object]]] = None):
    """Up through what keeps a value a number (`float(...)`, `round(...)`, arithmetic, a sign: `-x`,
    `.item()` of a copy): the outermost such expression and its parent. With a `memo` (one per `parents`), every
    node passed keeps the answer, so that the leaves of a long sum climb it once in all.
    Cost: O(the expressions climbed); with a memo, O(1) for a node climbed before."""
    passed = []
    while True:
        known = memo.get(id(node)) if memo is not None else None
        if known is not None:
            answer = known
            break
        if memo is not None:
            passed.append(node)
        step = _climb_step(node, parents)
        if step is None:
            answer = (node, parents.get(node))
            break
        node = step
    if memo is not None:
        for passed_node in passed:
            memo[id(passed_node)] = answer
    return answer


def _climb_step(node, parents: Mapping):
    """The next node `climb` moves to from `node`, or None where it stops."""
    parent = parents.get(node)
    if isinstance(parent, cst.BinaryOperation) and type(parent.operator).__name__ in ARITHMETIC:
        return parent
    if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, (cst.Minus, cst.Plus)):
        return parent  # `-loss.item()`
    if isinstance(parent, cst.Arg) and parent.keyword is None:
        call = parents.get(parent)
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in NUMBER_WRAPPERS:
            return call
    if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in _HOST_READS_OF_A_COPY:
        call = parents.get(parent)  # `x.numpy().item()`: the copy is read as a number (or a list) in turn
        if isinstance(call, cst.Call) and call.func is parent and not call.args:
            return call
    return None


def accumulator(call, parents: Mapping):
    """The statement that folds a synced value into a name on every step: `running +=
    loss.item()` (also through arithmetic: `+= loss.item() * n`), a running mean
    `avg = 0.9 * avg + 0.1 * loss.item()`, or a sum started on the first step (`total = x.item() if total
    is None else total + x.item()`); None otherwise."""
    node, parent = climb(call, parents)
    if node is not call and repeats_a_sequence(node):
        return None  # `lengths += n.item() * [seq]`: a count, needed on the host
    while isinstance(parent, cst.IfExp) and node is not parent.test:
        # `total = x.item() if total is None else total + x.item()`: the first step starts the sum
        node, parent = parent, parents.get(parent)
    if isinstance(parent, cst.AugAssign) and type(parent.target) is cst.Name:
        return parent if type(parent.operator).__name__ in _ACCUMULATING else None
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and type(parent.targets[0].target) is cst.Name:
        name = parent.targets[0].target.value
        inside = set(map(id, walk(call)))  # `x = x.clamp(...).item()` rebinds, it does not accumulate
        if any(type(n) is cst.Name and n.value == name and id(n) not in inside for n in walk(parent.value)):
            return parent
    return None


def summed_into(call, parents: Mapping):
    """The `running += ...` statement of `accumulator`'s forms (`+= x.sum() * n`), else None: not a
    name bound to an expression that reads it (`n = int(x.max()) + 1 if n is None else n`)."""
    statement = accumulator(call, parents)
    return statement if isinstance(statement, cst.AugAssign) else None


def repeats_a_sequence(expression) -> bool:
    """`n * [x]`, `(x,) * n` or `'-' * n`: arithmetic that builds a sequence, whose count is needed on the host."""
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
    convert(name)` follows the loop. `safe`: every later read is a number context, and the
    tensor sums exactly as Python did (a count started at an int)."""

    name: str
    loop: object
    convert: str
    detach: bool
    safe: bool


@dataclass
class _NameFacts:
    """Where one name is written in an owner's code, for `accumulation_plan`: by id of
    each loop, how many of its Name nodes the loop holds (`under`) and how many of its reads
    outside a number context (`bad_under`, out of `bad`); by id of each block, the
    statements of that block that hold it, in source order."""

    under: Dict[int, int] = field(default_factory=dict)
    bad: int = 0
    bad_under: Dict[int, int] = field(default_factory=dict)
    # id(block) -> the indices in the block and the statements (while collecting: pairs)
    statements: Dict[int, object] = field(default_factory=dict)


class OwnerNames:
    """The Name nodes of one owner's code (a function body or a module), by name, with what
    `accumulation_plan` asks of them, computed once per name.

    Cost: the first question indexes every Name under `body` (one pass over `parents`);
    each name asked costs one climb to `body` from each of its Name nodes (O(uses ×
    nesting depth)) and `_number_context` of its reads (climbs memoized); each block asked
    about is indexed once. Every answer after that is O(1) or a bisection."""

    def __init__(self, body, parents: Mapping) -> None:
        self.body = body
        self.parents = parents
        self._names: Optional[Dict[str, List]] = None
        self._facts: Dict[str, _NameFacts] = {}
        self._positions: Dict[int, Dict[int, int]] = {}  # id(block) -> id(statement) -> index
        self._climbed: Dict[int, Tuple[object, object]] = {}  # the memo of `climb`

    def facts(self, name: str) -> _NameFacts:
        found = self._facts.get(name)
        if found is None:
            found = self._facts[name] = self._collect(name)
        return found

    def position(self, block, statement) -> Optional[int]:
        """The index of `statement` in `block.body`, None if it is not there."""
        positions = self._positions.get(id(block))
        if positions is None:
            body = getattr(block, "body", ())
            positions = self._positions[id(block)] = {id(item): index for index, item in enumerate(body)} if isinstance(body, (list, tuple)) else {}
        return positions.get(id(statement))

    def _collect(self, name: str) -> _NameFacts:
        if self._names is None:
            self._names = {}
            for node in self.parents:
                if type(node) is cst.Name:
                    self._names.setdefault(node.value, []).append(node)
        facts = _NameFacts()
        parents = self.parents
        for node in self._names.get(name, ()):
            loops: List[int] = []
            nested = False
            child, parent = node, parents.get(node)
            while parent is not None:
                if isinstance(parent, (cst.For, cst.While)):
                    loops.append(id(parent))
                elif isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                    nested = True
                elif isinstance(parent, (cst.IndentedBlock, cst.Module)):
                    index = self.position(parent, child)
                    if index is not None:
                        held = facts.statements.setdefault(id(parent), [])
                        if not held or held[-1][1] is not child:
                            held.append((index, child))
                child, parent = parent, parents.get(parent)
            for loop in loops:
                facts.under[loop] = facts.under.get(loop, 0) + 1
            if nested or _binds(node, parents) or _number_context(node, parents, self._climbed):
                continue
            facts.bad += 1
            for loop in loops:
                facts.bad_under[loop] = facts.bad_under.get(loop, 0) + 1
        for block, held in facts.statements.items():
            held.sort(key=lambda pair: pair[0])
            unique = [pair for i, pair in enumerate(held) if i == 0 or held[i - 1][1] is not pair[1]]
            facts.statements[block] = ([index for index, _ in unique], [statement for _, statement in unique])
        return facts


def accumulation_plan(call, statement, parents: Mapping, owner_body, names: Optional[OwnerNames] = None) -> Optional[AccumulationPlan]:
    """How to fix `statement` (from `accumulator`), or None when the read cannot move:
    the value goes through a wrapper (`float(...)`), the name is not set to a number just
    before the loop, or the loop itself reads it (it would sync there anyway). `names`:
    the owner's `OwnerNames` (one per owner keeps every call's plan linear in the owner).
    Cost: O(nesting depth + the receiver) per call with `names` shared, after the costs of
    `OwnerNames`."""
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
    if names is None:
        names = OwnerNames(owner_body, parents)
    facts = names.facts(name)
    init = _initial_value(loop, name, parents, names, facts)
    if init is None:
        return None
    if facts.under.get(id(loop), 0) > 1:
        return None  # a Name of the loop other than the statement's target reads or binds it
    count = _is_count(call.func.value)
    whole = isinstance(init, cst.Integer)
    convert = "int" if count and whole else "float"
    # the reads after the loop (or before it), the owner's own: all in a number context? Only a
    # count started at an int sums exactly as Python did: a float total adds in the tensor's dtype
    # (float32, where Python added float64), and an int start meets a dtype the code does not say.
    safe = facts.bad_under.get(id(loop), 0) == facts.bad and count and whole
    return AccumulationPlan(name, loop, convert, not count, safe)


def _loop_of(statement, parents: Mapping):
    node = parents.get(statement)
    while node is not None and not isinstance(node, (cst.FunctionDef, cst.Lambda)):
        if isinstance(node, (cst.For, cst.While)):
            return node
        node = parents.get(node)
    return None


def _initial_value(loop, name: str, parents: Mapping, names: OwnerNames, facts: _NameFacts):
    """The number `name` is set to by the last statement before `loop` in its block that
    binds it (`running = 0.0`), or None. Only statements that hold a Name `name` can
    decide (a compound one that holds it stops the search): they come from `facts`.
    Cost: O(the statements of the block that hold `name` before the loop) (a bisection)."""
    block = parents.get(loop)
    index = names.position(block, loop)
    if index is None:
        return None
    positions, held = facts.statements.get(id(block), ((), ()))
    for statement in reversed(held[: bisect_left(positions, index)]):
        if not isinstance(statement, cst.SimpleStatementLine):
            return None  # it holds the name (walked into, as the statement is)
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


def _number_context(name, parents: Mapping, memo: Optional[Dict] = None) -> bool:
    """Whether a read only shows, compares or combines a number: arithmetic, a
    comparison, an f-string, `print`/`round`/`float`, a logging or progress-bar call, a
    name bound to such an expression (`avg = running / n`). Cost: `climb`'s, O(1) else."""
    node, parent = climb(name, parents, memo)
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
