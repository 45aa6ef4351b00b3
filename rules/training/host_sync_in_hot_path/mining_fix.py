"""TL003's unsafe fix for the counts a loss reads on the host (hard-negative mining, `max(n, 1)`
divisors, a branch on a count): the same loss computed without the wait.

The forms, in the top-level statements of one loss function:

- a count: `n = int(t.item())` -> `n = t.detach().long()` (`t.item()` -> `t.detach()`); `int(e)` of
  a count or of a tensor -> `e.long()` (both truncate toward zero);
- a bound: `min(a, b)` / `max(a, b)` with a count -> `a.clamp_max(b)` / `a.clamp_min(b)`;
- a branch on a count: `a if c else b`, or `if c:` / `else:` each assigning the name,
  -> `torch.where(c, a, b)`;
- the selection: `v, _ = x.topk(k)` (or `torch.topk(x, k)`, `[0]`, `.values`) with a count in `k`:
  sort once and mask by rank, `x.sort(descending=True).values` then `.where(rank < k, 0)`; `v` read
  only as `v.sum()` (kept) or `v.mean()` (-> `v.sum() / k`); and `s[:k]` of a flat tensor sorted
  largest first (`s = x.view(-1).sort(descending=True)[0]`) masked by rank the same way.

A count may also be read by arithmetic that meets a tensor (its result was a tensor already), itself
or bounded (`loss.sum() / max(n, 1)`). Any other read (a size, an index, a record, a loop) leaves
the function without this fix. The expressions are rewritten by `count_rewrite`.

Cost: one pass over the function's top-level statements and their nodes; each binding's value is
rewritten once (O(its size)); each read of a count or a selected name is placed once (O(depth) to
its statement), a selected name's reads sorted and each matched to its binding by bisection.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Container, Dict, FrozenSet, List, Optional, Tuple

from torchlint.analysis.scopes import own_nodes
from torchlint.analysis.value_kinds import Kind
from torchlint.core.lazy import cst
from torchlint.rules.training.host_sync_in_hot_path.count_rewrite import CountRewriter, NoRewrite, atomic
from torchlint.rules.training.host_sync_in_hot_path.value_uses import ARITHMETIC, binds, meets_tensor

_REDUCTIONS = ("sum", "mean")
_PURE_METHODS = frozenset({"view", "reshape", "flatten", "contiguous", "float"})


@dataclass(frozen=True)
class MiningPlan:
    """The `.item()` calls the rewrite removes (by id), the one that carries the fix (the first:
    one fix for all, or n findings would each carry all n edits) and its edits (node, new text)."""

    first: int
    syncs: FrozenSet[int]
    edits: Tuple[Tuple[object, str], ...]


def _pure(node) -> bool:
    """Whether an expression may be written three times: names, attributes, constant indices and
    `view`/`reshape`/`flatten` with constant arguments (`loss.view(-1)`, `scores[:, 0]`)."""
    while True:
        if isinstance(node, cst.Name):
            return True
        if isinstance(node, cst.Attribute):
            node = node.value
        elif isinstance(node, cst.Subscript):
            if any(type(inner) is cst.Call for element in node.slice for inner in own_nodes(element)):
                return False
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _PURE_METHODS:
            if any(not isinstance(arg.value, (cst.Integer, cst.UnaryOperation)) for arg in node.args):
                return False
            node = node.func.value
        else:
            return False


class _SelectedKinds:
    """The function's value kinds, knowing that a `topk` result's `.sum()` was a tensor."""

    def __init__(self, kinds, selected: Container[str]) -> None:
        self._kinds = kinds
        self._selected = selected

    def kind(self, node) -> Kind:
        if type(node) is cst.BinaryOperation:
            sides = (self.kind(node.left), self.kind(node.right))
            return Kind.TENSOR if Kind.TENSOR in sides else self._kinds.kind(node)
        if (
            type(node) is cst.Call
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in _REDUCTIONS
            and isinstance(node.func.value, cst.Name)
            and node.func.value.value in self._selected
        ):
            return Kind.TENSOR
        return self._kinds.kind(node)


def mining_plan(function, parents: Dict, uses: Dict[str, List], kinds, imports, module) -> Optional[MiningPlan]:
    """The rewrite of a loss function's counts and selections, or None where a count has a use it
    cannot rewrite. Cost: see the module."""
    block = function.body
    if not isinstance(block, cst.IndentedBlock):
        return None
    torch_name = next((local for local, target in imports.table.items() if target == "torch"), None)
    rewriter = CountRewriter(module, kinds, imports, torch_name)
    edits: List[Tuple[object, str]] = []
    selected: Dict[str, Dict[int, str]] = {}  # a selection's name -> its positions -> the count's text
    positions = {id(statement): index for index, statement in enumerate(block.body)}
    adapter = _SelectedKinds(kinds, selected)
    bindings: Dict[str, int] = {}  # how often a name is bound, counted once per name
    flat_sorted: set = set()  # names bound once to a flat tensor sorted in descending order
    try:
        for index, statement in enumerate(block.body):
            ranked = _flat_sort_binding(statement, imports)
            if ranked is not None and _bindings(ranked, uses, parents, bindings) == 1:
                flat_sorted.add(ranked)
                continue
            binding = _count_binding(statement, uses, parents, bindings)
            if binding is not None and adapter.kind(binding[2]) is Kind.TENSOR:
                binding = None  # a tensor already (`avg = hard.mean() / max(k, 1)`): its counts are reads
            if binding is not None:
                mark = rewriter.mark()
                try:
                    name, replaced, text = _rewrite_binding(binding, rewriter)
                except NoRewrite:  # no count (`hard = ranked[:k]`): its count reads are checked below
                    rewriter.undo(mark)
                    text = None
                if text is not None:
                    rewriter.counts.add(name)
                    edits.append((replaced, text))
                    continue
            if not rewriter.counts:
                continue
            for node in own_nodes(statement):
                selection = None
                if type(node) is cst.Call and _topk_parts(node, imports) is not None:
                    selection = _selection(node, statement, rewriter, imports, parents)
                elif type(node) is cst.Subscript and _first_slice(node, flat_sorted) is not None:
                    selection = _slice_selection(node, statement, rewriter, parents)
                if selection is not None:
                        edit, name, count = selection
                        edits.append(edit)
                        if name is not None:
                            selected.setdefault(name, {})[index] = count
    except NoRewrite:
        return None
    if not rewriter.syncs:
        return None
    for name, counts in selected.items():
        found = _reduced_reads(name, counts, uses, parents, positions)
        if found is None:
            return None
        edits += found
    memo: Dict[int, bool] = {}
    for name in sorted(rewriter.counts):
        for node in uses.get(name, ()):
            if _binds(node, parents) or id(node) in rewriter.reads:
                continue
            bound = _bound_call(node, parents, imports)
            if bound is not None:  # `loss / max(n, 1)`: the bound is the operand
                try:
                    edits.append((bound, rewriter.rewrite(bound).text))
                except NoRewrite:
                    return None
                node = bound
            holder = parents.get(node)
            arithmetic = isinstance(holder, cst.BinaryOperation) and type(holder.operator).__name__ in ARITHMETIC
            if not (arithmetic and meets_tensor(node, parents, adapter, memo)):
                return None
    if _nested(edits, parents) or any("#" in module.code_for_node(node) for node, _ in edits):
        return None  # overlapping edits, or a comment inside what a one-line rewrite replaces
    return MiningPlan(id(rewriter.syncs[0]), frozenset(id(call) for call in rewriter.syncs), tuple(edits))


def _nested(edits: List[Tuple[object, str]], parents: Dict) -> bool:
    """Whether one edit's node lies inside another's (the edits of one fix must not overlap).
    Cost: O(edits × depth)."""
    replaced = {id(node) for node, _ in edits}
    for node, _ in edits:
        parent = parents.get(node)
        while parent is not None:
            if id(parent) in replaced:
                return True
            parent = parents.get(parent)
    return False


def _bound_call(node, parents: Dict, imports):
    """The builtin `min(...)` / `max(...)` of two arguments whose argument holds `node`
    (directly or through arithmetic), else None. Cost: O(the arithmetic climbed)."""
    holder = parents.get(node)
    while isinstance(holder, (cst.BinaryOperation, cst.UnaryOperation)):
        holder = parents.get(holder)
    call = parents.get(holder) if isinstance(holder, cst.Arg) else None
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and len(call.args) == 2):
        return None
    if call.func.value not in ("min", "max") or imports.qualified_name(call.func) is not None:
        return None
    return call


def _count_binding(statement, uses: Dict[str, List], parents: Dict, bindings: Dict[str, int]):
    """`n = value` (one small statement, `n` bound once) or `if c: n = a` / `else: n = b` (`n`
    bound there only): (name, the node to replace, value or (test, a, b))."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        assign = statement.body[0]
        name = _single_target(assign)
        if name is not None and _bindings(name, uses, parents, bindings) == 1:
            return name, assign.value, assign.value
        return None
    if not isinstance(statement, cst.If) or not isinstance(statement.orelse, cst.Else):
        return None
    first, second = _only_assign(statement.body), _only_assign(statement.orelse.body)
    if first is None or second is None:
        return None
    name = _single_target(first)
    if name is None or name != _single_target(second) or _bindings(name, uses, parents, bindings) != 2:
        return None
    return name, statement, (statement.test, first.value, second.value)


def _rewrite_binding(binding, rewriter: CountRewriter) -> Tuple[str, object, Optional[str]]:
    name, replaced, value = binding
    if isinstance(value, tuple):
        try:
            return name, replaced, f"{name} = {rewriter.branch_text(*value)}"
        except NoRewrite:
            return name, replaced, None
    if not rewriter.mentions(value):
        return name, replaced, None
    code = rewriter.rewrite(value)
    return name, replaced, code.text if code.tensor else None


def _single_target(assign) -> Optional[str]:
    if isinstance(assign, cst.Assign) and len(assign.targets) == 1 and type(assign.targets[0].target) is cst.Name:
        return assign.targets[0].target.value
    return None


def _only_assign(block):
    statements = block.body if isinstance(block, cst.IndentedBlock) else ()
    if len(statements) == 1 and isinstance(statements[0], cst.SimpleStatementLine) and len(statements[0].body) == 1:
        return statements[0].body[0]
    return None


def _bindings(name: str, uses: Dict[str, List], parents: Dict, memo: Dict[str, int]) -> int:
    if name not in memo:
        memo[name] = sum(1 for node in uses.get(name, ()) if _binds(node, parents))
    return memo[name]


def _topk_parts(call, imports):
    """(x, k) of `torch.topk(x, k)` or `x.topk(k)` with positional arguments only, else None."""
    if any(arg.keyword is not None or arg.star for arg in call.args):
        return None
    func = call.func
    if imports.qualified_name(func) == "torch.topk" and len(call.args) == 2:
        return call.args[0].value, call.args[1].value
    if isinstance(func, cst.Attribute) and func.attr.value == "topk" and len(call.args) == 1:
        if imports.qualified_name(func) is None:
            return func.value, call.args[0].value
    return None


def _selection(call, statement, rewriter: CountRewriter, imports, parents: Dict):
    """The edit for one `topk` of a count: (edit, the name bound to the values or None, the
    count's text); None for a `topk` of no count; `NoRewrite` for one read in another way."""
    values, k = _topk_parts(call, imports)
    count = rewriter.rewrite(k)
    if not count.tensor:
        return None
    if rewriter.torch is None or rewriter.mentions(values):
        raise NoRewrite
    torch_name, count_text = rewriter.torch, rewriter.atom(k, count)
    source = rewriter.module.code_for_node(values)
    holder = parents.get(call)
    tuple_target = isinstance(holder, cst.Assign) and holder.value is call
    selected = call
    if not tuple_target:
        selected = holder
        if not (_first_of(selected, call) or _values_of(selected, call)):
            raise NoRewrite
        holder = parents.get(selected)
    if isinstance(holder, cst.Assign) and holder.value is selected:
        name = _selected_name(holder, tuple_target)
        if name is None or parents.get(holder) is not statement or len(statement.body) != 1:
            raise NoRewrite
        lines = (
            f"{name} = {_atomic_text(values, source)}.sort(descending=True).values",
            f"{name} = {name}.where({torch_name}.arange({name}.shape[-1], device={name}.device) < {count_text}, 0)",
        )
        return (holder, lines), name, count_text
    if not _pure(values):
        raise NoRewrite
    length, device = _length_and_device(values, source, rewriter.module)
    masked = (
        f"{_atomic_text(values, source)}.sort(descending=True).values"
        f".where({torch_name}.arange({length}, device={device}) < {count_text}, 0)"
    )
    return _inline_edit(selected, masked, count_text, parents)


def _flat_sort_binding(statement, imports) -> Optional[str]:
    """The name in `s = x.view(-1).sort(descending=True)[0]` (`.values`, `s, _ = ...`,
    `torch.sort(x.flatten(), descending=True)`): a flat tensor, largest first; else None."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    assign = statement.body[0]
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return None
    value, tuple_target = assign.value, isinstance(assign.targets[0].target, (cst.Tuple, cst.List))
    if not tuple_target:
        if isinstance(value, cst.Subscript) and _first_of(value, value.value):
            value = value.value
        elif isinstance(value, cst.Attribute) and _values_of(value, value.value):
            value = value.value
        else:
            return None
    if not isinstance(value, cst.Call) or not value.args:
        return None
    function = imports.qualified_name(value.func) == "torch.sort"
    if len(value.args) != (2 if function else 1):
        return None
    descending = value.args[-1]
    if not (descending.keyword is not None and descending.keyword.value == "descending"
            and isinstance(descending.value, cst.Name) and descending.value.value == "True"):
        return None
    if function:
        flat = value.args[0].value if value.args[0].keyword is None else None
    elif isinstance(value.func, cst.Attribute) and value.func.attr.value == "sort" and imports.qualified_name(value.func) is None:
        flat = value.func.value
    else:
        return None
    if flat is None or not _flat(flat):
        return None
    return _selected_name(assign, tuple_target)


def _flat(node) -> bool:
    """`x.view(-1)`, `x.reshape(-1)`, `x.flatten()`: one dimension."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        return False
    name, args = node.func.attr.value, node.args
    if name == "flatten":
        return not args
    return name in ("view", "reshape") and len(args) == 1 and isinstance(args[0].value, cst.UnaryOperation) and (
        isinstance(args[0].value.operator, cst.Minus) and getattr(args[0].value.expression, "value", None) == "1"
    )


def _first_slice(node, flat_sorted: set):
    """`k` of `s[:k]` for a name of `flat_sorted`, else None."""
    if not (isinstance(node.value, cst.Name) and node.value.value in flat_sorted and len(node.slice) == 1):
        return None
    part = node.slice[0].slice
    if not isinstance(part, cst.Slice) or part.lower is not None or part.step is not None:
        return None
    return part.upper


def _slice_selection(node, statement, rewriter: CountRewriter, parents: Dict):
    """The edit for `s[:k]` of a count, `s` sorted largest first: mask by rank (`s.where(rank < k, 0)`),
    as `_selection` does for `topk`."""
    k = _first_slice(node, set([node.value.value]))
    count = rewriter.rewrite(k)
    if not count.tensor:
        return None
    if rewriter.torch is None:
        raise NoRewrite
    name, count_text = node.value.value, rewriter.atom(k, count)
    masked = f"{name}.where({rewriter.torch}.arange({name}.numel(), device={name}.device) < {count_text}, 0)"
    count_text = f"{count_text}.clamp_max({name}.numel())"  # a slice past the end keeps what there is
    holder = parents.get(node)
    if isinstance(holder, cst.Assign) and holder.value is node:
        target = _selected_name(holder, False)
        if target is None or parents.get(holder) is not statement or len(statement.body) != 1:
            raise NoRewrite
        return (node, masked), target, count_text
    return _inline_edit(node, masked, count_text, parents)


def _inline_edit(node, masked: str, count_text: str, parents: Dict):
    """The edit for a selection read where it is made: `.sum()` of it kept, `.mean()` -> the sum
    over the count; another read: `NoRewrite`."""
    reduction = _reduction_call(node, parents)
    if reduction is None:
        raise NoRewrite
    call_node, which = reduction
    if which == "sum":
        return (node, masked), None, count_text
    return (call_node, _quotient(call_node, f"{masked}.sum() / {count_text}", parents)), None, count_text


def _length_and_device(values, source: str, module) -> Tuple[str, str]:
    """How to write the length of the sorted dimension and the device: of `x` itself for
    `x.view(-1)`, `x.reshape(-1)`, `x.flatten()` (a name or attribute)."""
    func = values.func if isinstance(values, cst.Call) else None
    if isinstance(func, cst.Attribute) and isinstance(func.value, (cst.Name, cst.Attribute)):
        flat = func.attr.value == "flatten" and not values.args
        flat = flat or (func.attr.value in ("view", "reshape") and len(values.args) == 1
                        and module.code_for_node(values.args[0].value).strip() == "-1")
        if flat:
            base = module.code_for_node(func.value)
            return f"{base}.numel()", f"{base}.device"
    return f"{source}.shape[-1]", f"{source}.device"


def _quotient(call, text: str, parents: Dict) -> str:
    """`text` (a division) in brackets, unless it replaces the whole value of a statement."""
    statement = parents.get(call)
    whole = isinstance(statement, (cst.Return, cst.Assign, cst.AnnAssign, cst.Expr)) and statement.value is call
    return text if whole else f"({text})"


def _atomic_text(node, text: str) -> str:
    return text if atomic(node) else f"({text})"


def _first_of(node, call) -> bool:
    """`call[0]`."""
    if not (isinstance(node, cst.Subscript) and node.value is call and len(node.slice) == 1):
        return False
    index = node.slice[0].slice
    return isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) and index.value.value == "0"


def _values_of(node, call) -> bool:
    return isinstance(node, cst.Attribute) and node.value is call and node.attr.value == "values"


def _selected_name(assign, tuple_target: bool) -> Optional[str]:
    if len(assign.targets) != 1:
        return None
    target = assign.targets[0].target
    if not tuple_target:
        return target.value if type(target) is cst.Name else None
    if not (isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2):
        return None
    first, second = (element.value for element in target.elements)
    if type(first) is cst.Name and type(second) is cst.Name and second.value == "_":
        return first.value
    return None


def _reduction_call(node, parents: Dict):
    """(the call, "sum" or "mean") for `node.sum()` / `node.mean()` without arguments, else None."""
    attribute = parents.get(node)
    if not (isinstance(attribute, cst.Attribute) and attribute.value is node and attribute.attr.value in _REDUCTIONS):
        return None
    call = parents.get(attribute)
    if not (isinstance(call, cst.Call) and call.func is attribute and not call.args):
        return None
    return call, attribute.attr.value


def _reduced_reads(name: str, counts: Dict[int, str], uses: Dict[str, List], parents: Dict, positions: Dict[int, int]):
    """The edits for the reads of a selected name (`counts`: the position of each selection of it
    -> its count's text) that see a selection: `v.sum()` kept, `v.mean()` -> `(v.sum() / k)`;
    None if one is read in another way or rebound under a condition.
    Cost: O(its uses × depth) to place them, then a bisection per read."""
    placed = sorted(((_position(node, parents, positions), index, node) for index, node in enumerate(uses.get(name, ()))),
                    key=lambda item: item[:2])
    first = min(counts)
    bindings = set(counts)
    for where, _, node in placed:
        if _binds(node, parents) and where not in counts:
            if where > first and not _top_level_assign(node, parents, positions):
                return None  # a conditional rebinding: later reads may see either value
            bindings.add(where)
    bindings = sorted(bindings)
    edits = []
    for where, _, node in placed:
        if _binds(node, parents):
            continue
        seen = bisect.bisect_left(bindings, where) - 1  # the binding a read sees: the last one before it
        if seen < 0 or bindings[seen] not in counts:
            continue
        reduction = _reduction_call(node, parents)
        if reduction is None:
            return None
        call, which = reduction
        if which == "mean":
            edits.append((call, _quotient(call, f"{name}.sum() / {counts[bindings[seen]]}", parents)))
    return edits


def _position(node, parents: Dict, positions: Dict[int, int]) -> int:
    """The position of the top-level statement holding `node` (O(depth))."""
    while node is not None and id(node) not in positions:
        node = parents.get(node)
    return positions.get(id(node), -1) if node is not None else -1


def _top_level_assign(name, parents: Dict, positions: Dict[int, int]) -> bool:
    target = parents.get(name)
    assign = parents.get(target)
    return isinstance(target, cst.AssignTarget) and id(parents.get(assign)) in positions


def _binds(name, parents: Dict) -> bool:
    """Whether a name is bound here, also as an element of a tuple or list target (`v, _ = ...`)."""
    node = name
    while isinstance(parents.get(node), (cst.Element, cst.StarredElement)):
        node = parents.get(parents.get(node))
    return binds(node, parents)
