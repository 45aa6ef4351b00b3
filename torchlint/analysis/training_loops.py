"""Training loops: the hot paths of hand-written training code.

A loop whose body runs a backward pass (`loss.backward()`, `scaler.scale(loss)
.backward()`, `accelerator.backward(loss)`, `torch.autograd.grad(...)`) or an optimizer
step (`opt.step()`, `scaler.step(opt)`; a scheduler's `step()` does not count) runs once
per training step. So does a *step function*: one that runs a backward pass or a step
outside any loop of its own (`train_step(batch)`), and a loop that calls one. A loop
whose only training call sits in a branch beside a nested training loop is an epoch loop
(`if not did_step: optimizer.step()` after the batches). A loop
that only calls a function holding its own training loop (`for epoch in ...:
train_one_epoch(...)`) runs once per epoch: it is not hot. What a hot loop or a step
function calls on every iteration (`self._log(...)`, `log_metrics(loss)`, in this file
or another linted one) is hot too, a few calls deep, with the route kept for the message.

Loops under `torch.no_grad()` / `torch.inference_mode()` (a `with` or a decorator) that
run no training call are evaluation loops: hot only when asked.

An instance a hot loop or a step function calls as its *criterion* (`loss =
criterion(model(x), y)`, then `loss.backward()`) runs loss code: `LoopGraph.criteria`
names what such instances are built by, for `torchlint.analysis.loss_paths`.

The facts come from the stdlib ast of each file (`loop_facts`, JSON-able: per owner,
i.e. function, method or the module's own code, by qualified name); `LoopGraph` decides
over the facts of one file or of the whole tree. The LibCST form (`cst_owners`)
lets a rule find the same owners, in the same order.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from torchlint.analysis.classes import ast_class_methods, ast_self_name
from torchlint.core.lazy import cst
from torchlint.analysis.names import ast_dotted_name, resolve
from torchlint.index.module_names import absolute_import, is_package, module_name, suffix_matches
from torchlint.core.walk import blocks, pruned_walk

MODULE_OWNER = "<module>"
MAX_DEPTH = 3  # calls followed from a hot loop or a step function
BACKWARD_FUNCTIONS = frozenset({"torch.autograd.grad", "torch.autograd.backward"})
BACKWARD_METHODS = frozenset({"backward", "manual_backward"})
NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"})
# text without which a file holds no training call (the cheap test before any walk)
TRAINING_TEXT = ("backward", ".step(", "autograd.grad")
HOST_READS = frozenset({"item", "tolist", "numpy", "synchronize", "cpu"})
HOST_READ_TEXT = (".item(", ".tolist(", ".numpy(", "synchronize", ".cpu(")
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
    return lower.startswith("opt") or "optim" in lower or lower.endswith(("_opt", "_opts", "scaler"))


def training_call(attr: Optional[str], receiver: Optional[str], qualified: Optional[str]) -> bool:
    """The shared decision, from a call's method name, its receiver's last name and the
    callee's qualified name."""
    if qualified in BACKWARD_FUNCTIONS or attr in BACKWARD_METHODS:
        return True
    return attr == "step" and optimizer_like(receiver)


# ---- stdlib ast ------------------------------------------------------------------------


def ast_training_call(call: ast.Call, table: Mapping[str, str]) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute):
        return training_call(func.attr, _ast_last_name(func.value), resolve(ast_dotted_name(func), table))
    return training_call(None, None, resolve(ast_dotted_name(func), table))


def _ast_last_name(node) -> Optional[str]:
    while isinstance(node, (ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _ast_no_grad(expression, table: Mapping[str, str]) -> bool:
    if isinstance(expression, ast.Call):
        expression = expression.func
    return resolve(ast_dotted_name(expression), table) in NO_GRAD


_AST_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_AST_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def loop_facts(view, instances: Optional[Callable[..., Set[str]]] = None) -> Optional[Dict[str, Any]]:
    """Per owner (qualified name -> facts): `step` (a training call outside its loops),
    `calls` (callees anywhere), `flat` (callees outside loops) and `loops`, each
    `[training call not in a nested loop (0 none, 1 only in a branch, 2 unconditional),
    callees not in a nested loop, callees anywhere in it, an evaluation loop, the index
    of the loop around it or -1]`, in source order; with `instances`, also `criteria`
    (see `_Criteria.criteria`). None without owners worth keeping.

    `instances(view, expression, function, class_node)`: the names of what an instance
    name holds there (`torchlint.analysis.instance_flow.bound_instance_sources`, TL004's instance flow,
    passed in by the reader: reach reads these facts)."""
    analysis = view.analysis
    cached = analysis.loop_facts
    pending = () if instances is None else analysis.pending_criteria
    if pending:
        analysis.pending_criteria = ()
    for facts, flow, function, class_node in pending:
        criteria = flow.criteria(lambda expression: instances(view, expression, function, class_node))
        if criteria:
            facts["criteria"] = criteria
    return cached


def build_loop_facts(view) -> Tuple[Optional[Dict[str, Any]], Sequence]:
    """`loop_facts` without `criteria`, and the criterion calls that give them (kept by
    `FileAnalysis` until a reader resolves them)."""
    tree = view.tree
    if tree is None:
        return None, ()
    text = view.text
    if not any(needle in text for needle in TRAINING_TEXT) and not any(needle in text for needle in HOST_READ_TEXT):
        return None, ()  # no training call and nothing to report: such a file only passes calls on
    builder = _Facts(view)
    builder.owner(MODULE_OWNER, tree.body, None, False)
    return ({"owners": builder.owners} if builder.owners else None), builder.criteria


class _Facts:
    def __init__(self, view) -> None:
        self.table = view.imports
        self.module = module_name(view.path)
        self.package = is_package(view.path)
        self.top = {n.name for n in view.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.owners: Dict[str, Dict[str, Any]] = {}
        self.criteria: List[tuple] = []  # (owner facts, _Criteria, def or None, class or None)

    def qualify(self, local: str) -> str:
        return f"{self.module}.{local}" if self.module else local

    def owner(
        self, local: str, body: Sequence[ast.stmt], cls: Optional[Tuple[str, str]], no_grad: bool, node_of_owner=None,
        class_node=None,
    ) -> None:
        """`cls`: (class qualified name, instance name) for a method; `node_of_owner`: the def
        (None: the module's own code), `class_node`: the class of a method."""
        nested = {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        facts = {"step": False, "calls": [], "flat": [], "loops": []}
        reads = False  # a host read (`.item()`, ...) that a caller's loop may make hot
        flow = _Criteria()
        inner: List[Tuple[str, ast.AST, Optional[Tuple[str, str]], bool]] = []
        # (node, open loops: indexes into facts["loops"], under no_grad, in a branch of the innermost loop)
        stack: List[Tuple[ast.AST, Tuple[int, ...], bool, bool]] = [(n, (), no_grad, False) for n in reversed(body)]
        while stack:
            node, loops, quiet, branch = stack.pop()
            if isinstance(node, _AST_SCOPES):
                if not isinstance(node, ast.Lambda):
                    inner.append((local, node, cls, quiet))
                continue
            if isinstance(node, ast.Call):
                self.call(node, facts, loops, local, nested, cls, branch)
                reads = reads or (isinstance(node.func, ast.Attribute) and node.func.attr in HOST_READS)
                flow.call(node, self.table, loops[-1] if loops else -1, quiet, nested | self.top, cls)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                flow.assign(node)
            elif isinstance(node, (ast.With, ast.AsyncWith)) and any(
                _ast_no_grad(item.context_expr, self.table) for item in node.items
            ):
                quiet = True
            if isinstance(node, _AST_LOOPS):
                facts["loops"].append([0, [], [], quiet, loops[-1] if loops else -1])
                inside = (*loops, len(facts["loops"]) - 1)
                head = [node.test] if isinstance(node, ast.While) else [node.target, node.iter]
                children = [(n, loops, quiet, branch) for n in head]
                children += [(n, inside, quiet, False) for n in node.body]
                children += [(n, loops, quiet, branch) for n in node.orelse]
                stack.extend(reversed(children))
                continue
            inner_branch = branch or isinstance(node, (ast.If, ast.Try, ast.ExceptHandler, ast.Match))
            stack.extend((child, loops, quiet, inner_branch) for child in reversed(list(ast.iter_child_nodes(node))))
        for loop in facts["loops"]:
            loop[3] = loop[3] and not loop[0]
        if flow.calls and flow.differentiated:
            self.criteria.append((facts, flow, node_of_owner, class_node))
        if facts["step"] or facts["calls"] or facts["loops"] or reads:
            self.owners[self.qualify(local) if local != MODULE_OWNER else self.qualify(MODULE_OWNER)] = facts
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

    def call(self, node: ast.Call, facts, loops: Tuple[int, ...], local: str, nested: Set[str], cls, branch: bool) -> None:
        if ast_training_call(node, self.table):
            if loops:
                loop = facts["loops"][loops[-1]]
                loop[0] = max(loop[0], 1 if branch else 2)
            else:
                facts["step"] = True
            return
        callee = self.callee(node.func, local, nested, cls)
        if callee is None:
            return
        _add(facts["calls"], callee)
        if not loops:
            _add(facts["flat"], callee)
            return
        _add(facts["loops"][loops[-1]][1], callee)
        for index in loops:
            _add(facts["loops"][index][2], callee)

    def callee(self, func, local: str, nested: Set[str], cls) -> Optional[str]:
        dotted = ast_dotted_name(func)
        if not dotted:
            return None
        head, _, rest = dotted.partition(".")
        if cls is not None and head == cls[1]:
            return self.qualify(f"{cls[0]}.{rest}") if rest and "." not in rest else None
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


class _Criteria:
    """The calls of one owner that run an instance as its *criterion*: `criterion(out, y)`
    or `self.criterion(out, y)` whose result its backward pass differentiates (`loss =
    criterion(out, y)`, `loss += ...`, `loss.backward()`, `scaler.scale(loss).backward()`,
    `accelerator.backward(loss)`), not under `no_grad`, on what another such call made
    (`criterion(model(x), y)`, `out = self.model(x)`): a model that returns its own
    loss (`loss = model(x, y)`) is no criterion. A value reaches the backward
    through assignments, arithmetic, methods on it (`.mean()`) and a few calls that pass
    it on (`sum(...)`, `torch.stack(...)`, `scaler.scale(...)`), not as the argument of
    another call: `model(x)` in `criterion(model(x), y)` is the criterion's input."""

    def __init__(self) -> None:
        self.calls: List[Tuple[ast.Call, int, str]] = []  # (call, innermost loop or -1, callee text)
        self.assigns: List[Tuple[Set[str], ast.AST]] = []
        self.differentiated: List[ast.AST] = []

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

    def criteria(self, instances: Callable[[ast.AST], Set[str]]) -> List[list]:
        """`[source, loop index or -1, callee text]` for each criterion call, `source` the
        absolute name of what the instance is built by (`instances`: of a callee)."""
        names: Set[str] = set()
        calls: Set[int] = set()
        pending = list(self.assigns)
        for expression in self.differentiated:
            _passed_on(expression, names, calls)
        changed = True
        while changed:
            changed = False
            for item in list(pending):
                if item[0] & names:
                    pending.remove(item)
                    _passed_on(item[1], names, calls)
                    changed = True
        instance_calls = {id(call) for call, _, _ in self.calls}
        outputs = {
            name for targets, value in self.assigns if any(id(n) in instance_calls for n in ast.walk(value)) for name in targets
        }
        found: List[list] = []
        for call, loop, dotted in self.calls:
            inputs = [n for arg in (*call.args, *(k.value for k in call.keywords)) for n in ast.walk(arg)]
            made = any(id(n) in instance_calls or (isinstance(n, ast.Name) and n.id in outputs) for n in inputs)
            if id(call) in calls and made:
                for source in sorted(instances(call.func)):
                    _add(found, [source, loop, dotted])
        return found


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


def _add(items: List, item) -> None:
    if item not in items:
        items.append(item)


# ---- deciding: which owners and loops are hot ----------------------------------------


@dataclass(frozen=True)
class LoopRoute:
    """How a training loop (`loop`: its owner, `None` for a step function itself) or a
    step function reaches an owner: `origin` the owner holding the loop or the step
    function, `via` the calls on the way (the reached owner last)."""

    origin: str
    loop: bool
    via: Tuple[str, ...]

    def describe(self, origin_file: Optional[str] = None) -> str:
        """"" for a step function itself, else ", reached from the training loop in
        `Trainer.fit` via ..." (naming the origin's file when it is another one)."""
        if not self.via:
            return ""
        steps = " -> ".join(f"`{short_name(name)}`" for name in self.via)
        return f" (reached from {self.describe_origin(origin_file)} via {steps})"

    def describe_origin(self, origin_file: Optional[str] = None) -> str:
        """"the training loop in `Trainer.fit`" or "the step function `train_step`",
        with " of `train.py`" when the origin is in another file."""
        where = f"the training loop in {describe_owner(self.origin)}" if self.loop else f"the step function `{short_name(self.origin)}`"
        return where + (f" of `{origin_file}`" if origin_file else "")


@dataclass(frozen=True)
class CriterionUse:
    """A hot loop or step function (`route.origin`) that calls an instance as its
    criterion (`call`: `criterion`, `self.criterion`): what the instance runs is loss code."""

    call: str
    route: LoopRoute

    def describe(self, origin_file: Optional[str] = None) -> str:
        return f" (called as `{self.call}` by {self.route.describe_origin(origin_file)}, whose backward pass it feeds)"


def short_name(qualified: str) -> str:
    """`pkg.train.Trainer.fit` -> `Trainer.fit`, `pkg.train.main` -> `main` (a capitalised
    part before the last is taken as the class)."""
    parts = qualified.split(".")
    if len(parts) >= 2 and parts[-2][:1].isupper():
        return ".".join(parts[-2:])
    return parts[-1]


def describe_owner(qualified: str) -> str:
    if qualified.endswith("." + MODULE_OWNER) or qualified == MODULE_OWNER:
        return "the script"  # a module's own code: a script's or a notebook's
    return f"`{short_name(qualified)}`"


class LoopGraph:
    """Training loops, step functions and what they reach, over some files' `loop_facts`
    (`facts_by_file`: display path -> facts). `evaluation`: evaluation loops count too."""

    def __init__(self, facts_by_file: Mapping[str, Optional[Mapping[str, Any]]], evaluation: bool = False) -> None:
        self.owners: Dict[str, Mapping[str, Any]] = {}
        self.files: Dict[str, str] = {}  # owner -> the display path of its file
        self._by_last: Dict[str, List[str]] = {}
        for display, facts in facts_by_file.items():
            for name, owner in ((facts or {}).get("owners") or {}).items():
                self.owners.setdefault(name, owner)
                self.files.setdefault(name, display)
                self._by_last.setdefault(name.rsplit(".", 1)[-1], []).append(name)
        self.evaluation = evaluation
        self._resolved: Dict[str, Optional[str]] = {}
        self.steps = self._step_owners()
        self.routes = self._routes()
        self._criteria: Optional[Dict[str, CriterionUse]] = None

    def resolve(self, callee: str) -> Optional[str]:
        """The owner a callee name stands for (exactly, or the run's path being longer)."""
        if callee not in self._resolved:
            if callee in self.owners:
                found: Optional[str] = callee
            else:
                matches = [n for n in self._by_last.get(callee.rsplit(".", 1)[-1], ()) if suffix_matches(n, callee)]
                found = min(matches) if matches else None
            self._resolved[callee] = found
        return self._resolved[callee]

    def _step_owners(self) -> Set[str]:
        steps = {name for name, owner in self.owners.items() if owner["step"]}
        changed = True
        while changed:
            changed = False
            for name, owner in self.owners.items():
                if name not in steps and any(self.resolve(c) in steps for c in owner["flat"]):
                    steps.add(name)
                    changed = True
        return steps

    def hot_loop(self, owner: str, index: int) -> bool:
        facts = self.owners.get(owner)
        if facts is None or index >= len(facts["loops"]):
            return False
        direct, near, _, evaluation, _ = facts["loops"][index]
        loops = facts["loops"]
        if direct == 1 and any(loops[i][4] == index and self.hot_loop(owner, i) for i in range(index + 1, len(loops))):
            # an epoch loop: its batches train in a nested loop, and a step in a branch
            # after it finishes a last partial accumulation (`if not did_step: opt.step()`)
            direct = 0
        return bool(direct or (self.evaluation and evaluation) or any(self.resolve(c) in self.steps for c in near))

    def _routes(self) -> Dict[str, LoopRoute]:
        routes: Dict[str, LoopRoute] = {}
        frontier: List[Tuple[str, LoopRoute]] = []
        for name in sorted(self.owners):
            facts = self.owners[name]
            if name in self.steps:
                routes[name] = LoopRoute(name, False, ())
                frontier.extend((c, LoopRoute(name, False, ())) for c in facts["calls"])
            for index, loop in enumerate(facts["loops"]):
                if self.hot_loop(name, index):
                    frontier.extend((c, LoopRoute(name, True, ())) for c in loop[2])
        for _ in range(MAX_DEPTH):
            following = []
            for callee, route in frontier:
                target = self.resolve(callee)
                if target is None or target in routes:
                    continue
                reached = LoopRoute(route.origin, route.loop, route.via + (target,))
                routes[target] = reached
                following.extend((c, reached) for c in self.owners[target]["calls"])
            frontier = following
        return routes

    def route(self, owner: str) -> Optional[LoopRoute]:
        """How a hot loop or step function reaches `owner` (itself, for a step function)."""
        return self.routes.get(owner)

    def criteria(self) -> Dict[str, CriterionUse]:
        """The names of what instances called as the criterion of a hot loop or a step
        function are built by (a class of the tree, if the class graph finds one), each with
        its first use: in a loop that is hot or inside one, or anywhere in a step function."""
        if self._criteria is None:
            self._criteria = {}
            for name in sorted(self.owners):
                for source, index, call in self.owners[name].get("criteria", ()):
                    loop = self._in_hot_loop(name, index)
                    if (loop or name in self.steps) and source not in self._criteria:
                        self._criteria[source] = CriterionUse(call, LoopRoute(name, loop, ()))
        return self._criteria

    def _in_hot_loop(self, owner: str, index: int) -> bool:
        loops = self.owners[owner]["loops"]
        while 0 <= index < len(loops):
            if self.hot_loop(owner, index):
                return True
            index = loops[index][4]
        return False


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
            nested = [s for s in _cst_walk_defs(node)]
            stack.extend((f"{local}.", s, None) for s in reversed(nested))
        elif isinstance(node, cst.BaseCompoundStatement):
            for block in reversed(blocks(node)):
                stack.extend((prefix, s, cls) for s in reversed(block))


def _cst_body(node) -> Sequence:
    return node.body.body if isinstance(node.body, cst.IndentedBlock) else ()


def _cst_walk_defs(function) -> List:
    """The defs and classes a function's own code holds (at any block depth)."""
    definitions = (cst.FunctionDef, cst.ClassDef)
    return [node for node in pruned_walk(function.body, (*definitions, cst.Lambda)) if type(node) in definitions]


def _qualify(module: str, local: str) -> str:
    return f"{module}.{local}" if module else local

