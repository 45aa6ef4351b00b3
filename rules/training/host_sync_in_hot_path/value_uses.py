"""Where a synced value goes in a method: only recorded or reported, only an operand of arithmetic,
or needed on the host as a Python number.

Cost: `name_uses` is one pass over a method's nodes. `recorded` and `arithmetic_only` look at
the uses of the name a synced value is bound to: with one `UseMemo` per method, each name's
uses are looked at once however many synced values are bound to it, so a method costs
O(its nodes + the expressions climbed), climbs memoized.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from torchlint.analysis.accumulation import climb, repeats_a_sequence
from torchlint.analysis.value_kinds import Kind
from torchlint.core.lazy import cst

# builtins whose argument must be a Python number (a size, a count, a bound); with the ones that format
# or convert a number, those whose argument is read on the host
_HOST_NUMBER_CALLS = frozenset({"range", "int", "bool", "min", "max", "len", "round", "divmod"})
_HOST_BUILTINS = _HOST_NUMBER_CALLS | frozenset({"float", "str", "print", "format", "abs"})
ARITHMETIC = ("Add", "Subtract", "Multiply", "Divide", "FloorDivide", "Power", "Modulo")
# tensor methods and torch functions whose arguments are sizes, counts or indices
_SIZE_ARGUMENTS = frozenset(
    {
        "topk", "kthvalue", "view", "reshape", "expand", "repeat", "narrow", "split", "chunk", "zeros", "ones",
        "empty", "full", "rand", "randn", "randint", "arange", "randperm", "multinomial", "new_zeros", "new_ones",
        "new_full", "new_empty", "unflatten", "tensor_split", "roll",
    }
)
# calls that record or report a value (logging, progress bars, stats dicts, lists of losses,
# recorders: Stable-Baselines3's `logger.record`, skrl's `track_data`)
SINK_METHODS = frozenset(
    {
        "log", "log_dict", "log_metrics", "info", "debug", "warning", "add_scalar", "add_scalars", "set_postfix",
        "update", "append", "extend", "set_description", "set_postfix_str", "record", "record_mean", "track_data",
        "print",  # `accelerator.print(...)`, a trainer's own `self.print(...)`, rich's `console.print(...)`
    }
)
SELF_RECEIVERS = ("self", "cls")
SINK_FUNCTIONS = frozenset({"print", "logger"})  # `logger(epoch=epoch, loss=loss.item())`: a logging routine
# a stats record a step function builds for the trainer to log (tianshou's `DQNTrainingStats(loss=loss.item())`),
# by the naming convention of such classes
_STATS_RECORD = re.compile(r"[A-Z]\w{0,80}(?:Stats|Statistics|Metrics)")
# a project's own logging routine, named for what it logs (garage's `self._log_performance(itr, ..., loss.item())`);
# not the math named `log_...` (`log_prob`, `log_softmax`, `log_likelihood`)
_LOG_ROUTINE = re.compile(
    r"_?log_(?:\w{1,40}_)?(?:performance|stats|statistics|metrics?|info|results?|loss(?:es)?|scalars?|values?"
    r"|progress|diagnostics|summary|training|train|epoch|step|iteration)"
)


def sink_function(name: str) -> bool:
    """Whether `name(...)` records or reports its arguments: `print`, a stats record's constructor, or a logging
    routine named for what it logs (`log_metrics`)."""
    return name in SINK_FUNCTIONS or any(pattern.fullmatch(name) for pattern in (_STATS_RECORD, _LOG_ROUTINE))


def reports_named(
    function: Optional[str], method: Optional[str], receiver: Optional[str], routines: FrozenSet[str] = frozenset()
) -> bool:
    """Whether a call records or reports its arguments, from its names (`function(...)`, or
    `receiver.method(...)` with `receiver` the last name of what it is called on): a logging call or `print`,
    or one of the file's `routines` that only report (`reporting_routines`), called by name or on `self` /
    `cls`. Shared by the LibCST (`_is_sink`) and stdlib-ast (`reporting_routines.reports`) forms."""
    if function is not None:
        return sink_function(function) or function in routines
    if method is None:
        return False
    return sink_method(method, receiver) or (receiver in SELF_RECEIVERS and method in routines)


def sink_method(method: str, receiver: Optional[str]) -> bool:
    """Whether `receiver.method(...)` records or reports its arguments: a logging or stats method
    (`SINK_METHODS`, or a logging routine named for what it logs: `self._log_performance(...)`), a
    logger's `store` (Spinning Up's and OmniSafe's `logger.store(LossPi=...)`; a replay buffer's `store`
    keeps data), or an event handed to callbacks (`callbacks.on_batch(batch_loss=loss)`,
    `self.callback.on_step_end(...)`): they observe the step. `receiver`: its last name."""
    if method in SINK_METHODS or _LOG_ROUTINE.fullmatch(method) is not None:
        return True
    owner = (receiver or "").lower()
    return (method == "store" and "logger" in owner) or (method.startswith("on_") and "callback" in owner)


@dataclass
class UseMemo:
    """What `recorded` and `arithmetic_only` found of each name of one method (their
    answers depend on the name alone), and `climb`'s memo. One per method (per `uses`)."""

    recorded: Dict[str, bool] = field(default_factory=dict)
    arithmetic: Dict[str, Tuple[bool, int, int]] = field(default_factory=dict)
    climbed: Dict[object, Tuple[object, object]] = field(default_factory=dict)  # also `_through_choices`' answers
    rewrites: Dict = field(default_factory=dict)  # `loss_paths.host_value_rewrite`'s memo
    tensor_operand: Dict[int, bool] = field(default_factory=dict)  # `meets_tensor`'s memo
    # (receiver, attribute) pairs the method reads as a host number (`if self.tokens < n:`), found once
    host_attributes: Optional[Set[Tuple[str, str]]] = None
    # a name bound several times, each binding a plain `name = ...` of one block: `_Rebindings`, else None
    rebindings: Dict[str, Optional["_Rebindings"]] = field(default_factory=dict)
    recorded_binding: Dict[int, bool] = field(default_factory=dict)  # id(binding) -> `recorded`'s answer
    routines: FrozenSet[str] = frozenset()  # the file's own routines that only report (`reporting_routines`)
    # the names the method declares `nonlocal` or `global`: a value bound to one is kept for the code around it
    # (an optimizer's closure: `nonlocal batch_loss; batch_loss = loss.item()`), as one stored on `self` is
    outer_names: FrozenSet[str] = frozenset()


@dataclass(frozen=True)
class _Rebindings:
    """The uses of a name rebound in straight-line code (`loss = model(x); loss.backward(); loss =
    loss.item()`), in the order of the code: where each use is, and where the bindings are."""

    names: Sequence
    at: Dict[int, int]  # id(use) -> its position in `names`
    bindings: List[int]  # the positions of the bindings, in order


def recorded(call, parents: Dict, uses: Dict[str, List], memo: Optional[UseMemo] = None,
             returned: bool = False) -> bool:
    """Whether a synced value only goes where values are recorded or reported: a logging
    call, `print`, a stats dict given to one (`self.log_dict({"loss": v.item()})`) or
    filled in place (`stats["loss"] = ...`, `stats.update(loss=...)`), a list of losses,
    an attribute of `self` or a `nonlocal` name, a running total (`acc_sum += acc`), itself or through a name
    bound once whose every use is such, or rebound in straight-line code whose every read of this
    value is such (`_rebindings`);
    `returned`: also a `return` (the function's callers only record, sum or drop it, see
    `returned_values`). Other values (a size, an index, a loop, a branch, a dict handed to
    any other function) are needed on the host: reported only with `check-host-values`.
    Cost: O(the expression around the call); for a name bound, O(its uses) the first
    time with a `memo`, O(1) after."""
    climbed = memo.climbed if memo is not None else None
    routines = memo.routines if memo is not None else frozenset()
    node, parent = climb(call, parents, climbed)
    if (
        isinstance(node, cst.BinaryOperation)
        and call.func.attr.value == "item"
        and not _needs_host_value(node, parents)
    ):
        return True  # arithmetic with a number (`x / x.sum().item()`) works as well on the tensor
    node, parent = _through_choices(node, parent, parents, climbed)
    if isinstance(parent, cst.AugAssign) and isinstance(parent.operator, (cst.AddAssign, cst.SubtractAssign)):
        # a sum kept on `self` or in a stats dict (`self.total += loss.item()`), unless the method compares or
        # branches on it (`if self.tokens < n:`); a name's sum is `accumulator`'s
        target = parent.target
        kept = isinstance(target, cst.Subscript) or (
            _kept(target) and _attribute_key(target) not in _host_attributes(parents, memo)
        )
        return kept and not (node is not call and repeats_a_sequence(node))
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        target = parent.targets[0].target
        if _kept(target) or (isinstance(target, cst.Name) and memo is not None and target.value in memo.outer_names):
            return True
        if isinstance(target, cst.Name):
            rebound = _rebindings(target.value, parents, uses, memo)
            if rebound is not None:  # the reads of this binding's value alone
                return _recorded_binding(target, parent, rebound, parents, memo, returned)
            # the answer is the name's (`target`, a binding, is no read): kept per name
            known = memo.recorded.get(target.value) if memo is not None else None
            if known is None:
                reads = [name for name in uses.get(target.value, ()) if name is not target and not binds(name, parents)]
                known = bool(reads) and all(_recorded_use(name, parents, climbed, returned, routines) for name in reads)
                if memo is not None:
                    memo.recorded[target.value] = known
            return known
    return _recorded_use(node, parents, climbed, returned, routines)


def _rebindings(name: str, parents: Dict, uses: Dict[str, List], memo: Optional[UseMemo]) -> Optional[_Rebindings]:
    """`_Rebindings` of a name bound more than once where every binding is a plain `name = ...`
    statement of one block (so each value is read from its binding to the next, in the order of the
    code); None otherwise (a name bound once, or in branches, loops' targets or `+=`). Cost: O(the
    name's uses), once per name with a `memo`."""
    if memo is not None and name in memo.rebindings:
        return memo.rebindings[name]
    names = uses.get(name, ())
    bindings = [position for position, use in enumerate(names) if binds(use, parents)]
    found = None
    if len(bindings) > 1:
        blocks = set()
        for position in bindings:
            holder = parents.get(names[position])
            assign = parents.get(holder) if type(holder) is cst.AssignTarget else None
            line = parents.get(assign) if type(assign) is cst.Assign and len(assign.targets) == 1 else None
            if type(line) is not cst.SimpleStatementLine:
                blocks.add(None)
                break
            blocks.add(id(parents.get(line)))
        if len(blocks) == 1 and None not in blocks:
            found = _Rebindings(names, {id(use): position for position, use in enumerate(names)}, bindings)
    if memo is not None:
        memo.rebindings[name] = found
    return found


def _recorded_binding(target, assign, rebound: _Rebindings, parents: Dict, memo: Optional[UseMemo],
                      returned: bool) -> bool:
    """`recorded` for the value one binding of a rebound name holds: its reads up to the next binding and,
    for the last binding (in a loop its value reaches the next turn), the reads before the first one.
    Cost: O(those reads)."""
    known = memo.recorded_binding.get(id(target)) if memo is not None else None
    if known is not None:
        return known
    names, positions = rebound.names, rebound.bindings
    at = rebound.at[id(target)]
    following = bisect.bisect_right(positions, at)
    end = positions[following] if following < len(positions) else len(names)
    reads = [use for use in names[at + 1:end] if not _within(use, assign.value, parents)]
    if following == len(positions):
        reads += names[:positions[0]]
    climbed = memo.climbed if memo is not None else None
    routines = memo.routines if memo is not None else frozenset()
    known = bool(reads) and all(_recorded_use(use, parents, climbed, returned, routines) for use in reads)
    if memo is not None:
        memo.recorded_binding[id(target)] = known
    return known


def recorded_then_returned(
    call, parents: Dict, uses: Dict[str, List], routines: FrozenSet[str] = frozenset()
) -> bool:
    """Whether a synced value is bound to a name that, until the name is bound again, is recorded here (a
    logging call, a stats dict, a running total) and returned, and read nowhere else: a metric handed back
    to the caller as well (`loss = loss.item(); self.metrics.log("loss", loss); return loss`). Cost: O(the
    name's uses)."""
    return _returned_reads(call, parents, uses, routines) == (True, True)


def handed_back(call, parents: Dict, uses: Dict[str, List], routines: FrozenSet[str] = frozenset()) -> bool:
    """Whether a synced value goes back to the caller and nowhere else: returned as it is (`return
    loss.item()`, `return -a.item(), b.item()`), or bound to a name that, until bound again, is returned
    and otherwise only recorded (`value = loss.item(); if eval: return value; ...; return value`).
    Cost: O(the name's uses)."""
    node, _ = climb(call, parents)
    if _returned(node, parents):
        return True
    found = _returned_reads(call, parents, uses, routines)
    return found is not None and found[0]


def _returned_reads(
    call, parents: Dict, uses: Dict[str, List], routines: FrozenSet[str] = frozenset()
) -> Optional[Tuple[bool, bool]]:
    """For a synced value bound to a name: whether the name's reads, until it is bound again, return it
    and whether they record it; None if the value is not bound to a name or is read otherwise."""
    node, parent = climb(call, parents)
    if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1):
        return None
    target = parent.targets[0].target
    if not isinstance(target, cst.Name):
        return None
    names = uses.get(target.value, ())
    at = next((index for index, name in enumerate(names) if name is target), None)
    if at is None:
        return None
    reads = []
    for name in names[at + 1:]:  # in the order of the code, the value's own reads (`loss = loss.item()`) aside
        if binds(name, parents):
            break
        if not _within(name, parent.value, parents):
            reads.append(name)
    returned = recorded_here = False
    for name in reads:
        if _returned(name, parents):
            returned = True
        elif _recorded_use(name, parents, routines=routines):
            recorded_here = True
        else:
            return None
    return returned, recorded_here


def _returned(name, parents: Dict) -> bool:
    """Whether a read is what a `return` gives back, alone or as an item of a tuple (`return a, b`)."""
    holder = parents.get(name)
    if isinstance(holder, cst.Element) and isinstance(parents.get(holder), cst.Tuple):
        holder = parents.get(parents.get(holder))
    return isinstance(holder, cst.Return)


def _within(node, ancestor, parents: Dict) -> bool:
    while node is not None and node is not ancestor:
        node = parents.get(node)
    return node is ancestor


def _kept(target) -> bool:
    """A value stored where it is kept for a record: an attribute of `self` (of a name) or an item of a dict."""
    return isinstance(target, cst.Subscript) or (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name))


def _attribute_key(attribute) -> Tuple[str, str]:
    return attribute.value.value, attribute.attr.value


def _host_attributes(parents: Dict, memo: Optional[UseMemo]) -> Set[Tuple[str, str]]:
    """The (receiver, attribute) pairs the method reads as a host number: one pass over its nodes, then kept."""
    host = memo.host_attributes if memo is not None else None
    if host is None:
        host = {
            _attribute_key(node)
            for node in parents
            if type(node) is cst.Attribute and type(node.value) is cst.Name and _read_as_host_number(node, parents)
        }
        if memo is not None:
            memo.host_attributes = host
    return host


def _read_as_host_number(node, parents: Dict) -> bool:
    """Whether a read, through arithmetic, is compared, branched or looped on, or used as a size or an index
    (what `_needs_host_value` says of a result, less the places a number is only formatted or bound)."""
    node, parent = _above_arithmetic(node, parents)
    if isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.Index, cst.Slice)):
        return True
    if isinstance(parent, (cst.If, cst.While, cst.IfExp)):
        return parent.test is node
    if isinstance(parent, cst.Arg):
        call = parents.get(parent)
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in _HOST_NUMBER_CALLS
    return False


def _through_choices(node, parent, parents: Dict, climbed: Optional[Dict] = None):
    """From `climb`'s answer (`node`, `parent`), on through the conditional expressions `node` is an
    arm of (`x.item() if x is not None else 0`): what the value becomes either way. Cost: O(the
    conditionals climbed); with `climbed` (`climb`'s memo, which keeps these answers too, by
    ("choice", id(conditional))), each conditional once."""
    passed = []
    while isinstance(parent, cst.IfExp) and node is not parent.test:
        known = climbed.get(("choice", id(parent))) if climbed is not None else None
        if known is not None:
            node, parent = known
            break
        passed.append(parent)
        node, parent = climb(parent, parents, climbed)
    if climbed is not None:
        for choice in passed:
            climbed[("choice", id(choice))] = (node, parent)
    return node, parent


def _recorded_use(
    node, parents: Dict, climbed: Optional[Dict] = None, returned: bool = False, routines: FrozenSet[str] = frozenset()
) -> bool:
    node, parent = _through_choices(*climb(node, parents, climbed), parents, climbed)
    if isinstance(parent, cst.Return):
        return returned
    if (
        isinstance(parent, cst.AugAssign) and node is parent.value and type(parent.target) in (cst.Name, cst.Subscript)
        and isinstance(parent.operator, (cst.AddAssign, cst.SubtractAssign))
    ):
        # summed into a running total (`acc_sum += acc`, `epoch_losses[epoch] += loss`), as `total += x.item()` is
        return True
    if isinstance(parent, cst.Element):  # `metrics.update([loss.item(), accuracy])`: the list goes to the sink
        sequence = parents.get(parent)
        holder = parents.get(sequence) if isinstance(sequence, (cst.List, cst.Tuple)) else None
        if isinstance(holder, cst.Return):  # `return loss, acc`: its callers unpack it
            return returned
        return isinstance(holder, cst.Arg) and _is_sink(parents.get(holder), routines)
    if isinstance(parent, cst.Arg):
        call = parents.get(parent)
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "dict":
            return _stats_dict(call, parents, routines)
        if _string_format(call):  # `print("loss {:.3f}".format(loss.item()))`: the text goes where the number would
            return _recorded_use(call, parents, climbed, returned, routines)
        return _is_sink(call, routines)
    if isinstance(parent, cst.DictElement):
        return _stats_dict(parents.get(parent), parents, routines)
    if isinstance(parent, cst.DictComp) and node is parent.value:  # `{name: fn(out).item() for ...}`
        return _stats_dict(parent, parents, routines)
    return isinstance(parent, cst.FormattedStringExpression) and _is_sink_string(parent, parents, routines)


def _string_format(call) -> bool:
    """`text.format(...)` of a string literal or a name (a format string kept in a variable), as
    `returned_values` reads it on the stdlib ast."""
    func = call.func if isinstance(call, cst.Call) else None
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value == "format"
        and isinstance(func.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Name))
    )


def _stats_dict(mapping, parents: Dict, routines: FrozenSet[str] = frozenset()) -> bool:
    """Whether a dict literal, comprehension or `dict(...)` holds stats: kept (`stats = {...}`),
    returned or handed to a logging call; a dict handed to any other function
    (`to_record({...})`, `session.run(None, {...})`) is that function's input."""
    holder = parents.get(mapping)
    return not isinstance(holder, cst.Arg) or _is_sink(parents.get(holder), routines)


def name_uses(nodes: Sequence, parents: Dict) -> Dict[str, List]:
    """Every `Name` node of a method (`nodes`: its own, nested functions excluded) by its
    name, reads and bindings alike, but not attribute names (`x.n`) or keywords (`f(n=1)`)."""
    uses: Dict[str, List] = {}
    for node in nodes:
        if type(node) is cst.Name:
            holder = parents.get(node)
            if isinstance(holder, cst.Attribute) and holder.attr is node:
                continue
            if isinstance(holder, cst.Arg) and holder.keyword is node:
                continue
            uses.setdefault(node.value, []).append(node)
    return uses


def binds(name, parents: Dict) -> bool:
    holder = parents.get(name)
    if isinstance(holder, (cst.AssignTarget, cst.AsName, cst.NamedExpr)):
        return True
    return isinstance(holder, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)) and holder.target is name


def arithmetic_only(call, parents: Dict, uses: Dict[str, List], kinds, memo: Optional[UseMemo] = None) -> Optional[object]:
    """For `n = x.item()` / `n = int(x.item())` with `n` bound once and read only as an
    operand of arithmetic with a tensor (`kinds`, the method's `NameKinds`), whose result
    is therefore a tensor already: the expression to replace (the call, or the `int(...)`).
    Arithmetic with numbers only (`x.shape[0] - n`) may become a size, a slice or a NumPy
    argument, where a tensor will not do.
    Cost: O(1) around the call; O(the name's uses and the arithmetic above them) the first
    time with a `memo`, O(1) after."""
    whole = call
    parent = parents.get(call)
    if isinstance(parent, cst.Arg):
        outer = parents.get(parent)
        if not (
            isinstance(outer, cst.Call)
            and isinstance(outer.func, cst.Name)
            and outer.func.value == "int"
            and len(outer.args) == 1
            and outer.args[0].keyword is None
            and not outer.args[0].star
        ):
            return None
        whole, parent = outer, parents.get(outer)
    if not isinstance(parent, cst.Assign) or len(parent.targets) != 1:
        return None
    if not isinstance(parent.targets[0].target, cst.Name):
        return None
    name = parent.targets[0].target.value
    found = memo.arithmetic.get(name) if memo is not None else None
    if found is None:
        found = _arithmetic_reads(uses.get(name, ()), parents, kinds, memo.tensor_operand if memo is not None else {})
        if memo is not None:
            memo.arithmetic[name] = found
    only_arithmetic, bindings, reads = found
    return whole if only_arithmetic and bindings == 1 and reads else None


def _arithmetic_reads(nodes, parents: Dict, kinds, tensor_operand: Dict[int, bool]) -> Tuple[bool, int, int]:
    """Whether every read among `nodes` (the uses of one name) is an operand of arithmetic
    with a tensor that needs no Python number, with how many bindings and reads they are
    (counted up to the first other read)."""
    bindings = reads = 0
    for node in nodes:
        if binds(node, parents):
            bindings += 1
            continue
        holder = parents.get(node)
        if not (
            isinstance(holder, cst.BinaryOperation)
            and type(holder.operator).__name__ in ARITHMETIC
            and not _needs_host_value(holder, parents)
            and meets_tensor(node, parents, kinds, tensor_operand)
        ):
            return False, bindings, reads
        reads += 1
    return True, bindings, reads


def meets_tensor(node, parents: Dict, kinds, memo: Dict[int, bool]) -> bool:
    """Whether `node`, climbed through arithmetic, meets an operand that is a tensor: then
    the result was a tensor already, whatever `node` is.
    Cost: O(the operations climbed); with `memo`, each operation is climbed once."""
    passed = []
    answer = False
    while True:
        if id(node) in memo:
            answer = memo[id(node)]
            break
        parent = parents.get(node)
        if isinstance(parent, cst.UnaryOperation):
            other = None
        elif isinstance(parent, cst.BinaryOperation) and type(parent.operator).__name__ in ARITHMETIC:
            other = parent.right if parent.left is node else parent.left
        else:
            break
        passed.append((node, other))
        node = parent
    for passed_node, other in reversed(passed):
        answer = answer or (other is not None and kinds.kind(other) is Kind.TENSOR)
        memo[id(passed_node)] = answer
    return answer


def _is_sink(call, routines: FrozenSet[str] = frozenset()) -> bool:
    """`reports_named` of a LibCST call."""
    func = call.func if isinstance(call, cst.Call) else None
    if isinstance(func, cst.Name):
        return reports_named(func.value, None, None, routines)
    if not isinstance(func, cst.Attribute):
        return False
    held = func.value
    receiver = held.value if isinstance(held, cst.Name) else held.attr.value if isinstance(held, cst.Attribute) else None
    return reports_named(None, func.attr.value, receiver, routines)


def _is_sink_string(part, parents: Dict, routines: FrozenSet[str] = frozenset()) -> bool:
    """Whether an f-string part ends up in a logging call, also through implicit
    concatenation (`f"a {x}" f"b {y}"`) and `%` or `+` formatting, or in a stats dict
    (`bar.set_postfix({"loss": f"{loss.item():.3f}"})`)."""
    holder = parents.get(parents.get(part))
    while isinstance(holder, cst.ConcatenatedString) or (
        isinstance(holder, cst.BinaryOperation) and isinstance(holder.operator, (cst.Modulo, cst.Add))
    ):
        holder = parents.get(holder)
    if isinstance(holder, cst.DictElement):
        return _stats_dict(parents.get(holder), parents, routines)
    return isinstance(holder, cst.Arg) and _is_sink(parents.get(holder), routines)


def _above_arithmetic(node, parents: Dict):
    """The outermost arithmetic (unary or binary) around `node`, and its parent."""
    parent = parents.get(node)
    while isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)):
        node, parent = parent, parents.get(parent)
    return node, parent


def _needs_host_value(expression, parents: Dict) -> bool:
    """Whether the value of an arithmetic expression ends up where only a Python number
    will do: `int(...)`, `range(...)`, `min(...)`, a comparison, a branch, an index."""
    node, parent = _above_arithmetic(expression, parents)
    if isinstance(parent, cst.Arg):
        call = parents.get(parent)
        if not isinstance(call, cst.Call):
            return False
        if isinstance(call.func, cst.Attribute):
            return call.func.attr.value in _SIZE_ARGUMENTS
        return isinstance(call.func, cst.Name) and call.func.value in _HOST_BUILTINS
    if isinstance(parent, (cst.If, cst.While, cst.IfExp)):
        return parent.test is node
    # a result bound to another name is not followed: it may become a size or an index
    return isinstance(
        parent,
        (
            cst.Comparison, cst.ComparisonTarget, cst.Index, cst.Slice, cst.FormattedStringExpression,
            cst.Assert, cst.Assign, cst.AugAssign, cst.AnnAssign, cst.NamedExpr,
        ),
    )
