"""Training loops: the hot paths of hand-written training code.

A loop whose body runs a backward pass (`loss.backward()`, `scaler.scale(loss)
.backward()`, `accelerator.backward(loss)`, `torch.autograd.grad(...)`) or an optimizer
step (`opt.step()`, `scaler.step(opt)`; a scheduler's `step()` does not count) runs once
per training step. So does a *step function*: one that runs a backward pass or a step
outside any loop of its own (`train_step(batch)`), and a loop that calls one. A loop
whose only training call sits in a branch beside a nested training loop is an epoch loop
(`if not did_step: optimizer.step()` after the batches); a loop over the optimizers
(`for optimizer in optimizers: optimizer.step()`) is none of its own: the loop around it
trains. A loop over data whose items each
get repeated updates in a counting loop (`for minibatch in batch.split(n): for _ in
range(critic_iters): opt.step()`) runs per step too; an epoch loop, `for epoch in ...` or a
count, does not, nor does one around a loop that counts a length (`range(len(x))`). A loop
that only calls a function holding its own training loop (`for epoch in ...:
train_one_epoch(...)`) runs once per epoch: it is not hot. What a hot loop or a step
function calls on every iteration (`self._log(...)`, `log_metrics(loss)`, in this file
or another linted one; `self.head.loss_fn(...)` where the class's `__init__` builds
`self.head = Head(...)`, read from the class graph) is hot too, a few calls deep, with the
route kept for the message.

Loops under `torch.no_grad()` / `torch.inference_mode()` (a `with` or a decorator) that
run no training call are evaluation loops: hot only when asked.

An instance a hot loop or a step function calls as its *criterion* (`loss =
criterion(model(x), y)`, then `loss.backward()`) runs loss code: `loop_graph.LoopGraph.criteria`
names what such instances are built by, for `torchlint.analysis.loss_paths`.

The facts come from the stdlib ast of each file (`loop_facts`, typed in
`torchlint.analysis.loop_facts`: per owner, i.e. function, method or the module's own
code, by qualified name); `torchlint.analysis.loop_graph.LoopGraph` decides over the
facts of one file or of the whole tree. The LibCST form (`cst_owners`) lets a rule find
the same owners, in the same order.

A hook called by its name (`self.call_hook("after_train_step")`, mmcv's dispatch, which
runs that method of every registered hook) calls every method of that name in the tree:
the hook that runs the backward pass and the optimizer step makes the loop a training loop.

Cost: one walk of each owner's own code (nested defs are walked as their own owners; a
def kept from the text's previous version is not walked again, `SourceView.memo`);
each call's callee is added to its owner's sets and to each loop around it (O(calls ×
loop nesting), the size of the facts); callee sets are ordered sets (dicts), not lists
scanned per call.
"""

from __future__ import annotations

import ast
import re
from itertools import repeat
from typing import Any, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from torchlint.analysis.classes import ast_class_methods, ast_self_name
from torchlint.analysis.criterion_calls import BACKWARD_FUNCTIONS, BACKWARD_METHODS, CriterionCalls
from torchlint.analysis.loss_paths import is_training_loss_name
from torchlint.analysis.loop_facts import (
    DISPATCHED, MODULE_OWNER, NO_TRAINING, TRAINING, TRAINING_IN_BRANCH, Loop, LoopFacts, OwnerLoops,
)
from torchlint.core.lazy import cst
from torchlint.analysis.names import ast_dotted_name, ast_last_name, cst_last_name, resolve
from torchlint.analysis.module_names import absolute_import, is_package, module_name
from torchlint.analysis.periodic_calls import ast_defaulting_to_one
from torchlint.analysis.scopes import own_nodes
from torchlint.core.walk import ast_children, blocks

NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"})
# text without which a file holds no training call (the cheap test before any walk)
TRAINING_TEXT = ("backward", ".step(", "autograd.grad")
HOST_READS = frozenset({"item", "tolist", "numpy", "synchronize", "cpu"})
HOST_READ_TEXT = (".item(", ".tolist(", ".numpy(", "synchronize", ".cpu(")
# a loss function's definition (`def dice_loss(`): its code runs on every step wherever
# it is called, so its implicit reads (`float(t)`, `if t.any():`) are worth the walk too
_LOSS_DEFINITION = re.compile(r"def\s+\w*loss", re.IGNORECASE)
_OUTSIDE_TREE = ("torch", "builtins", "numpy", "math", "os", "sys", "time", "logging", "json")


def may_run_per_step(method_name: str) -> bool:
    """Special methods (`__init__`, `__repr__`, ...) are no hot path and no hot path
    calls them on `self`; `__call__` may be both."""
    return method_name == "__call__" or not (method_name.startswith("__") and method_name.endswith("__"))


def optimizer_like(name: Optional[str]) -> bool:
    """Whether a receiver of `.step()` reads as an optimizer or a grad scaler
    (`optimizer`, `opt_g`, `self.d_optim`, `scaler`), not a scheduler or an environment."""
    if not name:
        return False
    lower = name.lower()
    if "sched" in lower:
        return False
    return lower.startswith("opt") or "optim" in lower or lower.endswith(("_opt", "_opts")) or scaler_like(name)


def scaler_like(name: str) -> bool:
    """Whether a name reads as a grad scaler (`scaler`, `self.grad_scaler`), whose `step(opt)` steps `opt`."""
    return name.lower().endswith("scaler")


def training_call(attr: Optional[str], receiver: Optional[str], qualified: Optional[str]) -> bool:
    """The shared decision, from a call's method name, its receiver's last name and the
    callee's qualified name."""
    if qualified in BACKWARD_FUNCTIONS or attr in BACKWARD_METHODS:
        return True
    return optimizer_step(attr, receiver)


def optimizer_step(attr: Optional[str], receiver: Optional[str]) -> bool:
    """`<optimizer>.step()` or `scaler.step(optimizer)`, from the method name and the receiver's last name."""
    return attr == "step" and optimizer_like(receiver)


# ---- stdlib ast ------------------------------------------------------------------------


def ast_training_call(call: ast.Call, table: Mapping[str, str]) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute):
        return training_call(func.attr, ast_last_name(func.value), resolve(ast_dotted_name(func), table))
    return training_call(None, None, resolve(ast_dotted_name(func), table))


def _ast_no_grad(expression, table: Mapping[str, str]) -> bool:
    if isinstance(expression, ast.Call):
        expression = expression.func
    return resolve(ast_dotted_name(expression), table) in NO_GRAD


_AST_LOOPS = frozenset({ast.For, ast.AsyncFor, ast.While})
_AST_SCOPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda})
_AST_ASSIGNS = frozenset({ast.Assign, ast.AugAssign, ast.AnnAssign})
_AST_WITHS = frozenset({ast.With, ast.AsyncWith})
_AST_BRANCHES = frozenset({ast.If, ast.Try, ast.ExceptHandler, ast.Match})
# nodes with nothing below them that the walk asks about: `Load`, `Add`, `Not`, `And`, `Eq`...
_AST_LEAVES = frozenset(
    kind for base in (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop) for kind in base.__subclasses__()
)


def loop_facts(view, criteria: bool = False) -> Optional[LoopFacts]:
    """The file's training-loop facts (None without owners worth keeping); with
    `criteria`, each owner's criteria too (see `CriterionCalls.criteria`), resolved once
    per file through its instance flow."""
    analysis = view.analysis
    return analysis.loop_facts_with_criteria if criteria else analysis.loop_facts


def build_loop_facts(view) -> Tuple[Optional[LoopFacts], Sequence[CriterionCalls]]:
    """`loop_facts` without `criteria`, and the criterion calls that give them (kept by
    `FileAnalysis` until a reader resolves them)."""
    tree = view.tree
    if tree is None:
        return None, ()
    text = view.text
    if (
        not any(needle in text for needle in TRAINING_TEXT)
        and not any(needle in text for needle in HOST_READ_TEXT)
        and "call_hook" not in text  # a loop may train in the hooks it calls by name (`_HOOK_DISPATCHERS`)
        and not _LOSS_DEFINITION.search(text)
    ):
        return None, ()  # no training call and nothing to report: such a file only passes calls on
    builder = _Facts(view)
    builder.owner(MODULE_OWNER, tree.body, None, False)
    return (LoopFacts(builder.owners) if builder.owners else None), builder.criteria


class _OpenLoop:
    """A loop while its owner is walked (`Loop` once it is); `repeats`: it counts
    (`for _ in range(k)`, not over a length), `data`: it walks data (`for batch in loader`),
    neither counting nor an epoch loop; `target`: the name it binds (`optimizer`), if one;
    `branch`: it lies in a branch of the loop around it (or of its owner)."""

    __slots__ = ("training", "near", "calls", "no_grad", "parent", "repeats", "data", "target", "branch")

    def __init__(self, no_grad: bool, parent: int, node=None, branch: bool = False) -> None:
        self.training = NO_TRAINING
        self.near: Dict[str, None] = {}  # ordered sets
        self.calls: Dict[str, None] = {}
        self.no_grad = no_grad
        self.parent = parent
        self.branch = branch
        target = getattr(node, "target", None)
        self.target = target.id if isinstance(target, ast.Name) else None
        counted = node is not None and type(node) is not ast.While and _ast_counting(node.iter)
        self.repeats = counted and not _ast_calls_len(node.iter)
        self.data = node is not None and type(node) is not ast.While and not counted and not _ast_names_epoch(node.target)

    def close(self) -> Loop:
        return Loop(self.training, tuple(self.near), tuple(self.calls), self.no_grad and not self.training, self.parent)


_COUNTERS = frozenset({"range", "trange", "count", "itertools.count", "tqdm.trange", "tqdm.auto.trange"})
# wrappers whose loop counts when what they wrap does (`tqdm(range(n))`, `enumerate(range(n))`)
_WRAPPERS = frozenset({"enumerate", "tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "reversed"})


def _ast_counting(iterable) -> bool:
    """`range(...)` (or trange, itertools.count), also inside `tqdm(...)` / `enumerate(...)`."""
    while isinstance(iterable, ast.Call):
        name = ast_dotted_name(iterable.func)
        if name in _COUNTERS:
            return True
        if name not in _WRAPPERS or not iterable.args:
            return False
        iterable = iterable.args[0]
    return False


def _ast_calls_len(iterable) -> bool:
    """A count taken from a length (`range(len(loader))`): such a loop walks data by index."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"
               for node in ast.walk(iterable))


def _ast_names_epoch(target) -> bool:
    return any(isinstance(node, ast.Name) and "epoch" in node.id.lower() for node in ast.walk(target))


class _OpenOwner:
    """An owner while it is walked (`OwnerLoops` once it is)."""

    __slots__ = ("step", "calls", "flat", "loops", "steady", "periodic_sites")

    def __init__(self, periodic_sites: FrozenSet[int]) -> None:
        self.step = False
        self.calls: Dict[str, None] = {}  # ordered sets
        self.flat: Dict[str, None] = {}
        self.loops: List[_OpenLoop] = []
        self.steady: Set[str] = set()  # the callees called somewhere outside a periodic branch
        self.periodic_sites = periodic_sites  # the ids of its calls in periodic branches (`periodic_call_ids`)

    def close(self) -> OwnerLoops:
        loops = tuple(loop.close() for loop in self.loops)
        periodic = tuple(callee for callee in self.calls if callee not in self.steady)
        return OwnerLoops(self.step, tuple(self.calls), tuple(self.flat), loops, periodic=periodic)


class _Facts:
    def __init__(self, view) -> None:
        self.table = view.imports
        self.module = module_name(view.path)
        self.package = is_package(view.path)
        self.top = {n.name for n in view.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.owners: Dict[str, OwnerLoops] = {}
        self.criteria: List[CriterionCalls] = []
        self.memo = view.memo
        # what a definition's facts read besides its own code
        self.context = (self.module, self.package, frozenset(self.top), tuple(self.table.items()))
        self.held = view.analysis.class_graph.held  # class -> attribute -> the classes `__init__` builds there
        self.analysis = view.analysis

    def trains(self, call: ast.Call) -> bool:
        return ast_training_call(call, self.table)

    def qualify(self, local: str) -> str:
        return _qualify(self.module, local)

    def owner(
        self, local: str, body: Sequence[ast.stmt], cls: Optional[Tuple[str, str]], no_grad: bool, node_of_owner=None,
        class_node=None,
    ) -> None:
        """`cls`: (class qualified name, instance name) for a method; `node_of_owner`: the def
        (None: the module's own code), `class_node`: the class of a method."""
        if node_of_owner is None:
            self._walk_owner(local, body, cls, no_grad, node_of_owner, class_node)
            return
        held = self.held.get(self.qualify(cls[0])) if cls is not None else None
        owners, criteria = self.memo.result(
            node_of_owner, "loop_facts", (local, cls, no_grad, held, self.context),
            lambda: self._definition_facts(local, body, cls, no_grad, node_of_owner, class_node),
        )
        self.owners.update(owners)
        for found in criteria:  # a method kept from an earlier version: its class is this version's
            self.criteria.append(found.in_class(class_node) if found.function is node_of_owner else found)

    def _definition_facts(self, *owner) -> Tuple[Dict[str, OwnerLoops], List[CriterionCalls]]:
        """The owners and criterion calls of one definition (the def and what it nests)."""
        outer = self.owners, self.criteria
        self.owners, self.criteria = {}, []
        try:
            self._walk_owner(*owner)
            return self.owners, self.criteria
        finally:
            self.owners, self.criteria = outer

    def _walk_owner(
        self, local: str, body: Sequence[ast.stmt], cls: Optional[Tuple[str, str]], no_grad: bool, node_of_owner,
        class_node,
    ) -> None:
        nested = {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        unit_divisors = ast_defaulting_to_one(node_of_owner)
        facts = _OpenOwner(self.analysis.periodic_sites(node_of_owner, body, self.trains, unit_divisors))
        reads = False  # a host read (`.item()`, ...) that a caller's loop may make hot
        name = self.qualify(local)
        criterion_calls = CriterionCalls(name, node_of_owner, class_node)
        known = nested | self.top  # the functions a bare callee may be, for the criterion calls
        inner: List[Tuple[str, ast.AST, Optional[Tuple[str, str]], bool]] = []
        # (node, open loops: indexes into facts.loops, under no_grad, in a branch of the innermost loop)
        stack: List[Tuple[ast.AST, Tuple[int, ...], bool, bool]] = [(n, (), no_grad, False) for n in reversed(body)]
        # exact types (the parser's concrete classes), each node's looked up once
        while stack:
            node, loops, quiet, branch = stack.pop()
            kind = type(node)
            if kind in _AST_LEAVES:
                continue
            if kind in _AST_SCOPES:
                if kind is not ast.Lambda:
                    inner.append((local, node, cls, quiet))
                continue
            if kind is ast.Call:
                self.call(node, facts, loops, local, nested, cls, branch)
                reads = reads or (isinstance(node.func, ast.Attribute) and node.func.attr in HOST_READS)
                criterion_calls.call(node, self.table, loops[-1] if loops else -1, quiet, known, cls)
            elif kind in _AST_ASSIGNS:
                criterion_calls.assign(node)
            elif kind in _AST_WITHS and any(_ast_no_grad(item.context_expr, self.table) for item in node.items):
                quiet = True
            if kind in _AST_LOOPS:
                facts.loops.append(_OpenLoop(quiet, loops[-1] if loops else -1, node, branch))
                inside = (*loops, len(facts.loops) - 1)
                head = [node.test] if kind is ast.While else [node.target, node.iter]
                children = [(n, loops, quiet, branch) for n in head]
                children += [(n, inside, quiet, False) for n in node.body]
                children += [(n, loops, quiet, branch) for n in node.orelse]
                stack.extend(reversed(children))
                continue
            held = ast_children(node)
            if held:
                held.reverse()
                stack.extend(zip(held, repeat(loops), repeat(quiet), repeat(branch or kind in _AST_BRANCHES)))
        if criterion_calls.calls and criterion_calls.differentiated:
            self.criteria.append(criterion_calls)
        # a loss function is kept for its implicit reads too (TL005's `float(t)`), which `reads` leaves out
        loss = node_of_owner is not None and is_training_loss_name(node_of_owner.name)
        if facts.step or facts.calls or facts.loops or reads or loss:
            self.owners[name] = facts.close()
        for parent, node, owner_cls, quiet in inner:
            prefix = "" if parent == MODULE_OWNER else parent + "."
            if isinstance(node, ast.ClassDef):
                self.klass(prefix + node.name, node, quiet)
            else:
                quiet = quiet or any(_ast_no_grad(d, self.table) for d in node.decorator_list)
                self.owner(prefix + node.name, node.body, owner_cls if parent != MODULE_OWNER and owner_cls else None, quiet, node)

    def klass(self, local: str, node: ast.ClassDef, quiet: bool) -> None:
        for function in ast_class_methods(node):
            no_grad = quiet or any(_ast_no_grad(d, self.table) for d in function.decorator_list)
            instance = ast_self_name(function)
            self.owner(f"{local}.{function.name}", function.body, (local, instance) if instance else None, no_grad, function, node)
        for statement in node.body:
            if isinstance(statement, ast.ClassDef):
                self.klass(f"{local}.{statement.name}", statement, quiet)

    def call(
        self, node: ast.Call, facts: _OpenOwner, loops: Tuple[int, ...], local: str, nested: Set[str], cls, branch: bool
    ) -> None:
        if ast_training_call(node, self.table):
            stepped = _ast_stepped(node)
            while loops and stepped is not None and facts.loops[loops[-1]].target == stepped:
                # `for optimizer in optimizers: optimizer.step()` steps each once: the loop around it trains
                branch = branch or facts.loops[loops[-1]].branch
                loops = loops[:-1]
            if loops:
                loop = facts.loops[loops[-1]]
                loop.training = max(loop.training, TRAINING_IN_BRANCH if branch else TRAINING)
                if len(loops) > 1 and loop.repeats and facts.loops[loops[-2]].data:
                    # updates repeated on each item of data (`for _ in range(critic_iters): opt.step()`
                    # inside `for minibatch in batch.split(n)`): the loop over the data runs per step too
                    facts.loops[loops[-2]].training = TRAINING
            else:
                facts.step = True
            return
        steady = id(node) not in facts.periodic_sites
        for callee in self.callees(node.func, local, nested, cls) + _dispatched(node):
            _add(facts.calls, callee)
            if steady:
                facts.steady.add(callee)
            if not loops:
                _add(facts.flat, callee)
                continue
            _add(facts.loops[loops[-1]].near, callee)
            for index in loops:
                _add(facts.loops[index].calls, callee)

    def callees(self, func, local: str, nested: Set[str], cls) -> List[str]:
        """What a call runs, by qualified name: one owner (`_callee`), or for
        `self.head.loss_fn(...)` the method of each class the class's `__init__` builds there."""
        dotted = ast_dotted_name(func)
        if not dotted:
            return []
        head, _, rest = dotted.partition(".")
        if cls is not None and head == cls[1]:
            attribute, _, method = rest.partition(".")
            if not method:
                return [self.qualify(f"{cls[0]}.{rest}")] if rest else []
            if "." in method:
                return []
            built = self.held.get(self.qualify(cls[0]), {}).get(attribute, ())
            return [f"{name}.{method}" for name in built if name.split(".", 1)[0] not in _OUTSIDE_TREE]
        callee = self._callee(dotted, head, rest, local, nested)
        return [] if callee is None else [callee]

    def _callee(self, dotted: str, head: str, rest: str, local: str, nested: Set[str]) -> Optional[str]:
        """The owner a call of `dotted` (not on the instance) runs: a nested or top-level
        function of the file, or what the imports resolve it to inside the tree."""
        if not rest and head in nested and local != MODULE_OWNER:
            return self.qualify(f"{local}.{head}")
        if not rest and head in self.top:
            return self.qualify(head)
        resolved = resolve(dotted, self.table)
        if resolved is None:
            return None
        if resolved.startswith("."):
            resolved = absolute_import(self.module, self.package, resolved)
        if not resolved or resolved.split(".", 1)[0] in _OUTSIDE_TREE:
            return None
        return resolved


def _ast_stepped(call: ast.Call) -> Optional[str]:
    """The name of the optimizer a training call steps: `opt` of `opt.step()` and of
    `scaler.step(opt)`; None for anything else (a backward pass)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr != "step":
        return None
    receiver = ast_last_name(func.value)
    stepped = call.args[0] if call.args and receiver is not None and scaler_like(receiver) else func.value
    return stepped.id if isinstance(stepped, ast.Name) else None


# the methods that call each registered hook's method of the name they are given (mmcv, mmengine)
_HOOK_DISPATCHERS = frozenset({"call_hook", "call_hooks", "_call_hook"})


def _dispatched(call: ast.Call) -> List[str]:
    """For `self.call_hook("after_train_step", ...)`: the callee standing for every method of that name."""
    if ast_last_name(call.func) not in _HOOK_DISPATCHERS or not call.args:
        return []
    first = call.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.isidentifier():
        return [DISPATCHED + first.value]
    return []


def _add(items: Dict[str, None], item: str) -> None:
    """Add `item` to an ordered set. Cost: O(1)."""
    items.setdefault(item, None)


# ---- LibCST: the same owners, for a rule's traversal ----------------------------------


def cst_owners(module, module_qualname: str) -> Iterator[Tuple[str, Any, Optional[Any]]]:
    """(qualified name, node, enclosing class node) of the module's own code (node: the
    module) and of every function and method, named as `loop_facts` names them."""
    yield _qualify(module_qualname, MODULE_OWNER), module, None
    stack: List[Tuple[str, Any, Optional[Any]]] = [("", statement, None) for statement in reversed(module.body)]
    while stack:
        prefix, node, cls = stack.pop()
        if isinstance(node, cst.ClassDef):
            stack.extend((f"{prefix}{node.name.value}.", s, node) for s in reversed(_cst_body(node)))
        elif isinstance(node, cst.FunctionDef):
            local = prefix + node.name.value
            yield _qualify(module_qualname, local), node, cls
            stack.extend((f"{local}.", s, None) for s in reversed(_cst_walk_defs(node)))
        elif isinstance(node, cst.BaseCompoundStatement):
            for block in reversed(blocks(node)):
                stack.extend((prefix, s, cls) for s in reversed(block))


def cst_optimizer_step(call) -> bool:
    """`optimizer_step` of a LibCST call (`self.opt.step()`, `optimizers["actor"].step()`)."""
    func = call.func
    return isinstance(func, cst.Attribute) and optimizer_step(func.attr.value, cst_last_name(func.value))


def cst_no_grad_decorated(function, imports) -> bool:
    """Whether a LibCST function is decorated with `torch.no_grad()` / `torch.inference_mode()`: no gradient
    flows through it, so no training step runs it (a predictor's `forward`)."""
    for decorator in function.decorators:
        expression = decorator.decorator
        if isinstance(expression, cst.Call):
            expression = expression.func
        if imports.qualified_name(expression) in NO_GRAD:
            return True
    return False


def trains(nodes: Iterable, imports) -> bool:
    """Whether LibCST nodes (a function's own) hold a training call (`training_call`: a backward pass or an
    optimizer step): the function is a training step. Cost: O(the nodes)."""
    return any(type(node) is cst.Call and cst_training_call(node, imports) for node in nodes)


def cst_training_call(call, imports) -> bool:
    """`training_call` of a LibCST call: a backward pass or an optimizer step."""
    func = call.func
    if type(func) is cst.Attribute:
        return training_call(func.attr.value, cst_last_name(func.value), imports.qualified_name(func))
    return training_call(None, None, imports.qualified_name(func))


def _cst_body(node) -> Sequence:
    return node.body.body if isinstance(node.body, cst.IndentedBlock) else ()


def _cst_walk_defs(function) -> List:
    """The defs and classes a function's own code holds (at any block depth), from its
    own nodes (`own_nodes`: walked once per file, which TL003 and TL005 walk anyway)."""
    definitions = (cst.FunctionDef, cst.ClassDef)
    return [node for node in own_nodes(function.body) if type(node) in definitions]


def _qualify(module: str, local: str) -> str:
    return f"{module}.{local}" if module else local
