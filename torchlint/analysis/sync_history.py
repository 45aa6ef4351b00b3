"""Which host syncs in a method read a value the step has already read.

Once the host has waited for a tensor (`loss.item()`, or a test of it: `if
torch.isnan(loss): raise ...`), the tensor is computed and the GPU's queue is empty; reading
the same tensor again (or a copy of it: `gp.clone().detach()`) before anything rebinds or
changes it, and before the step queues more work, waits for nothing new. One pass over the
method, statement by statement, keeps the values read so far: a branch, a loop or a `try`
reads its own copy (it may not run), and whatever a statement rebinds (`loss = ...`,
`self.loss = ...`, `loss += 1`, `loss.add_(1)`, `loss[0] = 0`) is read afresh. A backward
pass or an optimizer step (`training_loops.training_call`) queues the bulk of a step's
kernels: a copy to the host after it waits for them, on the same stream, so every tensor is
read afresh after one.

Cost: one pass over the method with an undo journal (one walk of each small statement
gives both its calls and what it writes); what a compound statement writes is memoized
(`_written`), so nesting does not multiply it; forgetting a written name scans the keys
read under its root; a queued training call forgets every key at once (an epoch, O(1)).
"""

from __future__ import annotations

from typing import Callable, Dict, List, Mapping, Optional, Set, Tuple

from torchlint.core.lazy import cst
from torchlint.analysis.names import cst_dotted_name
from torchlint.analysis.training_loops import cst_training_call
from torchlint.analysis.every_step import target_parts
from torchlint.core.walk import children, pruned_walk

# tensor methods whose result Python has without waiting: shape facts, no values
_HOST_FACTS = frozenset(
    {"dim", "size", "numel", "nelement", "element_size", "is_floating_point", "is_complex", "is_contiguous",
     "get_device", "stride", "storage_offset", "data_ptr", "type", "ndimension"}
)
_CASTS = frozenset({"bool", "float", "int"})
# tensor methods whose result holds the values of their receiver: `gp.clone().detach().item()` reads `gp`
_SAME_VALUES = frozenset({"clone", "contiguous", "detach"})


def repeated_syncs(body, imports, sync_receiver: Callable[[object], Optional[object]]) -> Set:
    """The explicit sync calls in `body` (those for which `sync_receiver(call)` gives the
    tensor read) whose tensor the step has read on the host before, on every path to
    them."""
    history = _History(imports, sync_receiver)
    history.block(body)
    return history.repeated


# what `_written` reports for a call that queues a step's kernels (no dotted name is empty)
QUEUED = ""


class _Read:
    """The tensors read so far (dotted names, kept by their first name so that rebinding
    `out` forgets `out.loss` at once, each with the epoch it was read in: a training call
    starts a new one), with a journal to undo what a branch did."""

    def __init__(self) -> None:
        self.by_root: Dict[str, Dict[str, int]] = {}
        self.epoch = 0
        self.journal: List[Tuple[str, Optional[int]]] = []  # (key or QUEUED, the key's epoch before)

    def __contains__(self, key: str) -> bool:
        return self.by_root.get(key.split(".", 1)[0], {}).get(key) == self.epoch

    def add(self, key: str) -> None:
        keys = self.by_root.setdefault(key.split(".", 1)[0], {})
        before = keys.get(key)
        if before != self.epoch:
            keys[key] = self.epoch
            self.journal.append((key, before))

    def forget(self, written: Set[str]) -> None:
        for name in written:
            if name == QUEUED:
                self.epoch += 1
                self.journal.append((QUEUED, None))
                continue
            keys = self.by_root.get(name.split(".", 1)[0])
            for key in [key for key in keys or () if key == name or key.startswith(name + ".")]:
                self.journal.append((key, keys.pop(key)))

    def mark(self) -> int:
        return len(self.journal)

    def undo(self, mark: int) -> None:
        while len(self.journal) > mark:
            key, before = self.journal.pop()
            if key == QUEUED:
                self.epoch -= 1
                continue
            keys = self.by_root.setdefault(key.split(".", 1)[0], {})
            if before is None:
                del keys[key]
            else:
                keys[key] = before


class _History:
    def __init__(self, imports, sync_receiver) -> None:
        self.imports = imports
        self.sync_receiver = sync_receiver
        self.repeated: Set = set()
        self.read = _Read()
        # `_written` of the compound statements already walked, by id: an elif's is part of
        # its parent's, so a chain of n branches is walked once, not n²/2 times
        self.written: Dict[int, Set[str]] = {}

    def forget_written(self, statement) -> None:
        written = self.written[id(statement)] = _written(statement, self.written, self.imports)
        self.read.forget(written)

    def block(self, block) -> None:
        statements = getattr(block, "body", ())
        if isinstance(block, cst.SimpleStatementSuite):
            self.simple(statements)
            return
        for statement in statements:
            self.statement(statement)

    def on_its_own(self, block) -> None:
        """A block that may not run: what it reads is forgotten after it."""
        mark = self.read.mark()
        self.block(block)
        self.read.undo(mark)

    def statement(self, statement) -> None:
        if isinstance(statement, cst.SimpleStatementLine):
            self.simple(statement.body)
        elif isinstance(statement, cst.If):
            self.test(statement.test)
            self.branches(statement, statement)
        elif isinstance(statement, cst.While):
            self.forget_written(statement)  # a later turn reads what the last one changed
            self.test(statement.test)
            self.branches(statement, statement)
        elif isinstance(statement, cst.For):
            self.expression(statement.iter)
            self.forget_written(statement)
            self.branches(statement, statement)
        elif isinstance(statement, cst.With):
            for item in statement.items:
                self.expression(item.item)
            self.block(statement.body)  # a with block runs whenever the step does
        else:  # try, match, nested definitions: each block on its own
            for part in children(statement):
                if isinstance(part, (cst.IndentedBlock, cst.SimpleStatementSuite)):
                    self.on_its_own(part)
                elif isinstance(part, (cst.ExceptHandler, cst.ExceptStarHandler, cst.Else, cst.Finally)):
                    self.on_its_own(part.body)
            self.forget_written(statement)

    def branches(self, statement, compound) -> None:
        self.on_its_own(compound.body)
        orelse = compound.orelse
        if isinstance(orelse, cst.If):  # elif
            mark = self.read.mark()
            self.statement(orelse)
            self.read.undo(mark)
        elif orelse is not None:
            self.on_its_own(orelse.body)
        self.forget_written(statement)

    def simple(self, smalls) -> None:
        for small in smalls:
            if isinstance(small, cst.Assert):
                self.test(small.test)
                self.forget_written(small)
                continue
            # `expression(small)` then `forget_written(small)`, from one walk: it gives the
            # calls `expression` would meet, in the same order
            calls: List = []
            written = self.written[id(small)] = _written(small, self.written, self.imports, calls)
            for call in calls:
                self.call(call)
            self.read.forget(written)

    def test(self, test) -> None:
        """A condition Python tests: its explicit syncs, then the tensors it reads."""
        self.expression(test)
        for key in self.roots(test):
            self.read.add(key)

    def expression(self, node) -> None:
        for current in pruned_walk(node, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
            if type(current) is cst.Call:  # exact type, as in `_written`
                self.call(current)

    def call(self, call) -> None:
        """An explicit sync reads its tensor (again: `repeated`); a cast (`float(loss)`)
        reads the tensors of its argument."""
        receiver = self.sync_receiver(call)
        while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and not receiver.args:
            if receiver.func.attr.value not in _SAME_VALUES:
                break
            receiver = receiver.func.value
        key = cst_dotted_name(receiver) if receiver is not None else None
        if key is not None:
            if key in self.read:
                self.repeated.add(call)
            self.read.add(key)
        elif isinstance(call.func, cst.Name) and call.func.value in _CASTS and len(call.args) == 1:
            for root in self.roots(call.args[0].value):
                self.read.add(root)

    def roots(self, expression) -> Set[str]:
        """The tensors whose values Python needs to evaluate `expression` as a condition
        or a number: `loss` in `torch.isnan(loss)`, `loss.isnan().any()`, `loss > 0`."""
        found: Set[str] = set()
        stack = [expression]
        while stack:
            node = stack.pop()
            dotted = cst_dotted_name(node)
            if dotted is not None:
                found.add(dotted)
            elif isinstance(node, cst.Call):
                if self.sync_receiver(node) is not None:
                    continue  # an explicit sync reads its tensor itself (`call`), after a cast around it
                func = node.func
                qualified = self.imports.qualified_name(func)
                if qualified and qualified.startswith("torch.") and node.args and node.args[0].keyword is None:
                    stack.append(node.args[0].value)
                elif isinstance(func, cst.Attribute) and func.attr.value not in _HOST_FACTS:
                    stack.append(func.value)
            elif isinstance(node, cst.Comparison):
                operators = [target.operator for target in node.comparisons]
                if not any(isinstance(op, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for op in operators):
                    stack.append(node.left)
                    stack.extend(target.comparator for target in node.comparisons)
            elif isinstance(node, cst.BooleanOperation):
                stack.extend((node.left, node.right))
            elif isinstance(node, cst.BinaryOperation):
                stack.extend((node.left, node.right))
            elif isinstance(node, cst.UnaryOperation):
                stack.append(node.expression)
            elif isinstance(node, cst.Subscript):
                stack.append(node.value)
        return found


def _written(node, known: Mapping[int, Set[str]], imports, calls: Optional[List] = None) -> Set[str]:
    """What a statement rebinds or changes in place (dotted names), and `QUEUED` if it runs a
    backward pass or an optimizer step; `known` holds the answers for statements inside it that
    were walked before. `calls`, if given, gets the calls walked, in source order (none inside
    a lambda, a def or a class)."""
    written: Set[str] = set()
    stack = [node]
    # exact types, not isinstance: these are LibCST's concrete (final) node classes,
    # whose ABC isinstance checks cost more than the rest of this walk
    skipped = (cst.Lambda, cst.ClassDef)
    bound = (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind in skipped:
            continue
        if current is not node and id(current) in known:
            written.update(known[id(current)])
            continue
        target = None
        if kind in bound:
            target = current.target
        elif kind is cst.AsName:
            target = current.name
        elif kind is cst.FunctionDef:
            written.add(current.name.value)
            continue
        elif kind is cst.Call:
            if calls is not None:
                calls.append(current)
            if cst_training_call(current, imports):
                written.add(QUEUED)
            func = current.func
            if type(func) is cst.Attribute:
                method = func.attr.value
                if method.endswith("_") and not method.startswith("__"):
                    target = func.value  # `loss.add_(1)` changes loss
        if target is not None:
            written.update(_target_names(target))
        stack.extend(reversed(children(current)))  # source order, for `calls`
    return written


def _target_names(target) -> Set[str]:
    names = set()
    for part in target_parts(target):
        if isinstance(part, cst.Subscript):
            part = part.value  # `loss[0] = 0` changes loss
        dotted = cst_dotted_name(part)
        if dotted is not None:
            names.add(dotted)
    return names
