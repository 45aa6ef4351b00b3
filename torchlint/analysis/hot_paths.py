"""Reach: what a hot path runs, across the classes of the whole linted tree.

One module answers, for the rules that look past one function (DESIGN.md, "Reach"):
which classes are modules (with `torchlint.analysis.modules.ClassIndex`), which methods a hot
path reaches (`forward` of a module, the `*_step` hooks of a LightningModule,
`forward`/`backward` of an `autograd.Function`, and the `self.method(...)` calls they
make, a few calls deep, through the class and its bases in any file), and which module
instances flow into which function parameters (TL004's section, below).

The class facts come from the stdlib ast of every file (`class_graph`), gated or not,
so a base defined in a file no rule parses with LibCST still resolves; they are the
`classes` of each file's record (`torchlint.index.record`), and the project pass builds
one `Reach` from all of them (`torchlint.index.project.ProjectIndex.reach`).
"""

from __future__ import annotations

import ast
import sys
import dataclasses
from dataclasses import dataclass, replace
from typing import AbstractSet, Any, Dict, FrozenSet, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from torchlint.analysis.classes import ast_class_methods, ast_self_name
from torchlint.analysis.loss_paths import CRITERION_METHODS
from torchlint.analysis.training_loops import CriterionUse, LoopGraph, loop_facts, may_run_per_step
from torchlint.analysis.value_kinds import Kind as ValueKind, cst_kind
from torchlint.analysis.owners import owned_nodes
from torchlint.analysis.loop_reach import LoopPass, loop_candidate_nodes, loop_findings
from torchlint.core.config import Config
from torchlint.core.partial_parse import definitions_around
from torchlint.core.diagnostics import Diagnostic
from torchlint.core.lazy import cst
from torchlint.analysis.modules import LIGHTNING_STEPS, ClassFacts, ClassIndex, methods, ast_bases, root_kind, Kind
from torchlint.analysis.modules import assigned_names, parameter_names, self_name
from torchlint.analysis.names import ast_dotted_name, cst_dotted_name, module_level_ast_statements, resolve
from torchlint.index.module_names import absolute_import, is_package, module_name, suffix_matches
from torchlint.core.walk import blocks
from torchlint.core.rule import Report, Rule, SourceView
from torchlint.index.pending import HotPathReaches, Pending
from torchlint.index.record import FileRecord
from torchlint.analysis.every_step import (  # noqa: F401  (own_nodes, parents_of: used by the rules through this module)
    ClassSettings, StepScope, class_settings, in_error_path, in_periodic_branch, own_nodes, parents_of, step_scope,
)

MAX_DEPTH = 3  # self-calls followed from a hot path
# a Hugging Face `Trainer` subclass runs these on every training step
HF_TRAINERS = frozenset({"transformers.Trainer", "transformers.trainer.Trainer"})
HF_TRAINER_STEPS = ("training_step", "compute_loss")
AUTOGRAD_FUNCTIONS = frozenset(
    {"torch.autograd.Function", "torch.autograd.function.Function", "torch.autograd.function.InplaceFunction"}
)
# calls on `self` that only a LightningModule has (a LightningDataModule has `self.trainer` too)
_LIGHTNING_SELF_CALLS = frozenset({"log", "log_dict", "manual_backward", "optimizers", "lr_schedulers", "toggle_optimizer"})
# calls on `self` that only an nn.Module has
_MODULE_SELF_CALLS = frozenset({"register_buffer", "register_parameter", "register_module", "add_module"})


# ---- class facts from the stdlib ast (every file, no LibCST) -------------------------


@dataclass(frozen=True)
class ClassGraph:
    """One file's classes (with the evidence of what a class's body shows it to be) and
    `self_calls` (class -> method -> the methods it calls on `self`)."""

    classes: Tuple[ClassFacts, ...]
    self_calls: Mapping[str, Mapping[str, List[str]]]


def class_graph(view: SourceView) -> ClassGraph:
    """The class graph of one file, from its stdlib ast. Computed once per file and
    shared by rules."""
    cached = view.__dict__.get("_torchlint_class_graph")
    if cached is None:
        cached = _ClassGraphBuilder(view).build()
        view.__dict__["_torchlint_class_graph"] = cached
    return cached


class _ClassGraphBuilder:
    def __init__(self, view: SourceView) -> None:
        self.tree = view.tree
        self.table = view.imports
        self.module = module_name(view.path)
        self.package = is_package(view.path)
        self.top_level = {node.name for node in self.tree.body if isinstance(node, ast.ClassDef)}
        self.classes: List[ClassFacts] = []
        self.calls: Dict[str, Dict[str, List[str]]] = {}

    def build(self) -> ClassGraph:
        self._collect(self.tree.body, "")
        return ClassGraph(tuple(self.classes), self.calls)

    def _collect(self, body: Sequence[ast.stmt], prefix: str) -> None:
        # classes in functions and blocks are named as if at this level (as FileClasses does)
        for statement in body:
            if isinstance(statement, ast.ClassDef):
                qualname = prefix + statement.name
                self._add(statement, f"{self.module}.{qualname}" if self.module else qualname)
                self._collect(statement.body, qualname + ".")
                continue
            for block in blocks(statement):
                self._collect(block, prefix)

    def _add(self, node: ast.ClassDef, name: str) -> None:
        bases = ast_bases(node, self.table, self.module, self.package, self.top_level)
        functions = ast_class_methods(node)
        calls: Dict[str, List[str]] = {}
        self_calls: Set[str] = set()
        layers = False
        for function in functions:
            instance = ast_self_name(function)
            if instance is None:
                continue
            called = []
            for inner in ast_own_nodes(function):
                if isinstance(inner, ast.Call):
                    attribute = _ast_self_attribute(inner.func, instance)
                    if attribute is not None:
                        called.append(attribute)
                elif isinstance(inner, ast.Assign) and function.name == "__init__" and not layers:
                    layers = any(_ast_self_attribute(t, instance) for t in inner.targets) and self._builds_layer(
                        inner.value
                    )
            self_calls.update(called)
            if called:
                calls.setdefault(function.name, [])
                calls[function.name].extend(c for c in dict.fromkeys(called) if c not in calls[function.name])
        evidence = []
        if layers or self_calls & _MODULE_SELF_CALLS:
            evidence.append("module")
        if self_calls & _LIGHTNING_SELF_CALLS:
            evidence.append("lightning")
        facts = ClassFacts(name, tuple(bases), tuple(f.name for f in functions), tuple(evidence))
        self.classes.append(facts)
        if calls:
            self.calls[name] = calls

    def _builds_layer(self, value: ast.AST) -> bool:
        """`nn.Linear(...)`, `nn.Parameter(...)`, `nn.ModuleList([...])`: a torch.nn class."""
        if not isinstance(value, ast.Call):
            return False
        qualified = resolve(ast_dotted_name(value.func), self.table)
        if qualified is None:
            return False
        is_parameter = qualified.startswith("torch.nn") and qualified.endswith(".Parameter")
        return is_parameter or root_kind(qualified) is Kind.MODULE


def _ast_self_attribute(node: ast.AST, instance: str) -> Optional[str]:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == instance:
        return node.attr
    return None


_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def ast_own_nodes(function) -> Iterator[ast.AST]:
    """The nodes of a function's body, nested functions, classes and lambdas excluded."""
    stack: List[ast.AST] = list(reversed(function.body))
    node_type = ast.AST
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _NESTED_SCOPES):
            continue
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, node_type):
                stack.append(value)
            elif type(value) is list:
                stack.extend(item for item in reversed(value) if isinstance(item, node_type))


def ast_fresh_cpu_tensor(node: ast.AST, table: Mapping[str, str]) -> bool:
    """The stdlib-ast counterpart of `fresh_cpu_tensor` (a superset of what it says is
    not fresh, so gates built on it stay necessary conditions)."""
    while isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Call):
            func = node.func
            if resolve(ast_dotted_name(func), table) in _CPU_FACTORIES:
                return not any(keyword.arg == "device" or keyword.arg is None for keyword in node.keywords)
            if isinstance(func, ast.Attribute) and func.attr in _MOVES:
                return False
            node = func
        else:
            node = node.value
    return False


# ---- hot paths and what they reach -------------------------------------------------


@dataclass(frozen=True)
class Route:
    """How a hot path reaches a method: the class whose instance runs it (`origin`), the
    hot method (`hot`), the methods called on the way (`via`, the reached one last),
    whether any hot path reaching it is a Lightning step (`lightning`), and the names of
    all the hot methods that reach it (`hooks`)."""

    origin: str
    hot: str
    via: Tuple[str, ...]
    lightning: bool
    hooks: FrozenSet[str] = frozenset()

    def describe(self) -> str:
        """"" for a hot path itself, else ", reached from `Model.training_step` via ..."."""
        if not self.via:
            return ""
        steps = " -> ".join(f"`{name}`" for name in self.via)
        return f" (reached from `{self.origin.rsplit('.', 1)[-1]}.{self.hot}` via {steps})"


class Reach:
    """The methods that hot paths reach, over a set of files' class graphs. With
    `decided_only`, classes whose kind depends on classes not in the set are no origin
    (a single file's view: the rest waits for the project pass)."""

    def __init__(
        self,
        index: ClassIndex,
        calls: Mapping[str, Mapping[str, Sequence[str]]],
        decided_only: bool = False,
        depth: int = MAX_DEPTH,
    ) -> None:
        self.index = index
        self.calls = calls
        self.decided_only = decided_only
        self.depth = depth
        self._lookups: Dict[Tuple[str, str], Optional[str]] = {}
        self._routes: Optional[Dict[Tuple[str, str], Route]] = None

    def route(self, class_name: str, method_name: str) -> Optional[Route]:
        """The shortest route from a hot path to `class_name.method_name`, or None."""
        if self._routes is None:
            self._routes = self._all_routes()
        return self._routes.get((class_name, method_name))

    def hot_methods(self, facts: ClassFacts) -> List[Tuple[str, bool]]:
        """The hot paths an instance of the class runs: (method name, is a Lightning step)."""
        hot: List[Tuple[str, bool]] = []
        if self.decided_only and self.index.kind(facts.name) is Kind.UNKNOWN:
            pass
        else:
            if self.index.is_module(facts):
                hot.append(("forward", False))
            if self.index.is_lightning(facts):
                hot.extend((step, True) for step in LIGHTNING_STEPS)
        if self._inherits(facts, AUTOGRAD_FUNCTIONS, ()):
            hot.extend((("forward", False), ("backward", False)))
        if self._inherits(facts, HF_TRAINERS, ()):
            hot.extend((step, False) for step in HF_TRAINER_STEPS)
        return hot

    def _inherits(self, facts: ClassFacts, targets: frozenset, seen: Tuple[str, ...]) -> bool:
        for base in facts.bases:
            if base is None:
                continue
            if base in targets:
                return True
            found = self.index.find(base)
            if found is not None and found.name not in seen and self._inherits(found, targets, seen + (facts.name,)):
                return True
        return False

    def lookup(self, class_name: str, method_name: str) -> Optional[str]:
        """The class that defines the method an instance of `class_name` runs (its own,
        else its bases', depth first as in single inheritance), or None."""
        key = (class_name, method_name)
        if key not in self._lookups:
            self._lookups[key] = None  # a cycle of bases finds nothing
            self._lookups[key] = self._lookup(class_name, method_name)
        return self._lookups[key]

    def _lookup(self, class_name: str, method_name: str) -> Optional[str]:
        facts = self.index.find(class_name)
        if facts is None:
            return None
        if method_name in facts.methods:
            return facts.name
        for base in facts.bases:
            if base is not None:
                found = self.lookup(base, method_name)
                if found is not None:
                    return found
        return None

    def _all_routes(self) -> Dict[Tuple[str, str], Route]:
        routes: Dict[Tuple[str, str], Route] = {}
        for facts in self.index.classes.values():
            for hot, lightning in self.hot_methods(facts):
                owner = self.lookup(facts.name, hot)
                if owner is not None:
                    self._walk(facts.name, hot, lightning, owner, routes)
        return routes

    def _walk(self, origin: str, hot: str, lightning: bool, owner: str, routes: Dict) -> None:
        """Breadth first from one hot path; which method `self.name()` runs depends on the
        instance's class (`origin`), so each origin walks on its own."""
        seen: Set[Tuple[str, str]] = set()
        frontier: List[Tuple[str, str, Tuple[str, ...]]] = [(owner, hot, ())]
        for level in range(self.depth + 1):
            following = []
            for owner_name, method_name, via in frontier:
                key = (owner_name, method_name)
                if key in seen:
                    continue
                seen.add(key)
                known = routes.get(key)
                hooks = frozenset({hot}) | (known.hooks if known is not None else frozenset())
                if known is None or len(via) < len(known.via):
                    routes[key] = Route(origin, hot, via, lightning or (known is not None and known.lightning), hooks)
                else:
                    routes[key] = replace(known, lightning=known.lightning or lightning, hooks=hooks)
                if level == self.depth:
                    continue
                for callee in self.calls.get(owner_name, {}).get(method_name, ()):
                    defined = self.lookup(origin, callee)
                    if defined is not None:
                        following.append((defined, callee, via + (callee,)))
            frontier = following


# ---- what in a method runs on every step (LibCST) ----------------------------------


# torch factories that build a new tensor on the CPU unless given a `device`
_CPU_FACTORIES = frozenset(
    f"torch.{name}"
    for name in (
        "rand", "randn", "randint", "randperm", "tensor", "as_tensor", "empty", "zeros", "ones", "full",
        "arange", "linspace", "logspace", "normal", "poisson", "bernoulli", "multinomial", "Tensor",
        "FloatTensor", "LongTensor",
    )
)
# methods that keep a tensor where it is (in place, or a new tensor on the same device)
_MOVES = frozenset({"to", "cuda", "type", "as_subclass"})


def fresh_cpu_tensor(expression, imports) -> bool:
    """Whether an expression is a tensor just built on the CPU by a torch factory without
    a `device` (`torch.rand(1)`, `torch.empty(1).uniform_(0, 1)`): reading it syncs nothing."""
    while isinstance(expression, (cst.Call, cst.Attribute, cst.Subscript)):
        if isinstance(expression, cst.Call):
            func = expression.func
            qualified = imports.qualified_name(func)
            if qualified in _CPU_FACTORIES:
                return not any(arg.keyword is not None and arg.keyword.value == "device" for arg in expression.args)
            if qualified and qualified.startswith("torch.") and expression.args and expression.args[0].keyword is None:
                # a torch op gives its result on its input's device: `torch.exp(torch.rand(1))`
                return fresh_cpu_tensor(expression.args[0].value, imports)
            if isinstance(func, cst.Attribute) and func.attr.value in _MOVES:
                return False
            expression = func
        elif isinstance(expression, cst.Attribute):
            expression = expression.value
        else:
            expression = expression.value
    return False


def plainly_host(expression, imports) -> bool:
    """Whether an expression is plainly not a tensor, from the expression alone: a
    number, a literal, or a value rooted in numpy, math and the like (`np.float32(1)`,
    `np.mean(a)`); see torchlint/analysis/value_kinds.py."""
    return cst_kind(expression, imports) is ValueKind.HOST


# ---- rules that report what a hot path reaches (TL003, TL005) ----------------------


def criterion_methods(reach: Reach, loops: LoopGraph) -> Dict[Tuple[str, str], CriterionUse]:
    """(class, method) -> how a hot loop uses it as its criterion: the `forward` or
    `__call__` an instance of a class of the tree runs (its own or a base's)."""
    found: Dict[Tuple[str, str], CriterionUse] = {}
    for source, use in loops.criteria().items():
        facts = reach.index.find(source)
        if facts is None:
            continue  # a function's result, or a class from outside the tree
        for method in CRITERION_METHODS:
            owner = reach.lookup(facts.name, method)
            if owner is not None:
                found.setdefault((owner, method), use)
    return found


def _cpu_state(class_node, module, imports) -> Set[str]:
    values: Dict[str, List] = {}
    if class_node is None:
        return set()
    for function in methods(class_node):
        for node in own_nodes(function.body):
            if isinstance(node, cst.Assign):
                pairs = [(target.target, node.value) for target in node.targets]
            elif isinstance(node, cst.AnnAssign) and node.value is not None:
                pairs = [(node.target, node.value)]
            else:
                continue
            for target, value in pairs:
                if isinstance(target, (cst.Attribute, cst.Subscript)):
                    values.setdefault(module.code_for_node(target), []).append(value)
    return {
        text
        for text, assigned in values.items()
        if text.startswith("self") and all(fresh_cpu_tensor(value, imports) for value in assigned)
    }


class HotPathRule(LoopPass, Rule):
    """A rule that checks every method of every class, and reports what it finds where a
    hot path reaches that method (in the file at once, else in the project pass).
    Subclasses give `ast_candidate` (the gate's necessary condition on one ast node) and
    `method_reports` (the findings of one method, each with whether its fix needs a
    Lightning step)."""

    project_rule = True
    options: Mapping[str, Any] = {"check-error-paths": False, "check-periodic-branches": False}
    # True: training loops and step functions are hot paths too (torchlint/analysis/loop_reach.py)
    training_loops = False

    def __init__(self, context) -> None:
        super().__init__(context)
        self._class_names: List[str] = []
        self._candidates: List[Pending] = []
        self._reach: Optional[Reach] = None
        self._class_node = None
        self._cpu_state: Optional[Set[str]] = None
        self._settings: Optional[ClassSettings] = None
        self._function = None
        self._scope: Optional[StepScope] = None
        self._class_reported: Set[int] = set()
        self._deferred: Dict[int, int] = {}  # id(node) -> index in `_candidates`
        self._method_reports: Dict[int, List[Tuple[Report, bool]]] = {}  # id(method) -> its reports
        # ids of reports that hold only in loss code a criterion use makes (see `criterion_methods`)
        self.criterion_only: Set[int] = set()
        self._criteria: Optional[Dict[Tuple[str, str], CriterionUse]] = None

    @classmethod
    def ast_facts(cls, view: SourceView, config: Config, record: FileRecord) -> None:
        graph = class_graph(view)
        record.classes, record.self_calls = graph.classes, graph.self_calls
        if cls.training_loops:
            record.loops = loop_facts(view, bound_instance_sources)

    @classmethod
    def ast_candidate(cls, node: ast.AST, view: SourceView) -> bool:
        raise NotImplementedError

    @classmethod
    def gate(cls, view: SourceView, config: Config) -> bool:
        if view.tree is None:
            return True
        if next(cls._candidate_classes(view), None) is not None:
            return True
        return cls.training_loops and bool(loop_candidate_nodes(cls, view))

    @classmethod
    def needed_definitions(cls, view: SourceView, config: Config) -> Optional[AbstractSet[int]]:
        if view.tree is None:
            return None
        around = list(cls._candidate_classes(view))
        if cls.training_loops:
            around.extend(loop_candidate_nodes(cls, view))
        return definitions_around(view, around)

    @classmethod
    def _candidate_classes(cls, view: SourceView) -> Iterator[ast.ClassDef]:
        """The classes with a candidate in a method that may run per step."""
        for node in view.nodes_of(ast.ClassDef):
            if any(
                may_run_per_step(function.name) and any(cls.ast_candidate(inner, view) for inner in ast_own_nodes(function))
                for function in ast_class_methods(node)
            ):
                yield node

    def method_reports(self, class_name: str, function) -> Iterator[Tuple[Report, bool]]:
        raise NotImplementedError

    def owner_reports(self, function, class_node, where: str) -> Iterator[Tuple[Report, bool]]:
        """The findings of a function, a method or a module's own code (`function` a
        `cst.Module`), for rules with `training_loops`; `where` names it in messages."""
        raise NotImplementedError

    def quiet_hooks(self, report: Report) -> FrozenSet[str]:
        """Hot methods a report does not hold for: it is dropped when every hot method
        that reaches its method is one of them (none by default)."""
        return frozenset()

    def cpu_state(self, expression) -> bool:
        """Whether `expression` is state of the class (`self.x`, `self._state["offset"]`)
        that every assignment in the class sets to a fresh CPU tensor (`torch.tensor(0)`;
        `+=` keeps it there): reading it syncs nothing."""
        if self._cpu_state is None:
            self._cpu_state = _cpu_state(self._class_node, self.context.module, self.context.imports)
        return bool(self._cpu_state) and self.context.module.code_for_node(expression) in self._cpu_state

    def off_step(self, node, parents: Mapping) -> bool:
        """Whether `node` does not run on every step: an error path, or a block that runs
        now and then (as the rule's `check-error-paths` / `check-periodic-branches` say)."""
        if in_error_path(node, parents, bool(self.settings["check-error-paths"]), self._step_scope()):
            return True
        return not self.settings["check-periodic-branches"] and in_periodic_branch(node, parents, self._step_scope())

    def _step_scope(self) -> StepScope:
        if self._scope is None:
            if self._settings is None:
                self._settings = class_settings(self._class_node)
            self._scope = step_scope(self._function, self._settings)
        return self._scope

    def visit_ClassDef(self, node) -> None:
        self._class_names.append(node.name.value)
        module = module_name(self.context.path)
        dotted = ".".join(self._class_names)
        class_name = f"{module}.{dotted}" if module else dotted
        self._class_node, self._cpu_state, self._settings = node, None, None
        for function in methods(node):
            if not isinstance(function.body, cst.IndentedBlock) or not may_run_per_step(function.name.value):
                continue
            self._function, self._scope = function, None
            reports = list(self.method_reports(node.name.value, function))
            self._method_reports[id(function)] = reports  # the loop pass reads them again
            if reports:
                self._place(class_name, function.name.value, reports)

    def leave_ClassDef(self, node) -> None:
        self._class_names.pop()

    def _place(self, class_name: str, method_name: str, reports: List[Tuple[Report, bool]]) -> None:
        route = self._file_reach().route(class_name, method_name)
        use = self._file_criteria().get((class_name, method_name))
        for report, lightning_fix in reports:
            quiet = self.quiet_hooks(report)
            criterion = id(report) in self.criterion_only
            if use is not None and (criterion or route is None):
                self._class_reported.add(id(report.node))
                report.message += use.describe()
                if lightning_fix:
                    report.fix = None  # no Lightning step runs it: `self.log` may be the class's own
                self.context.reports.append(report)
                continue
            if route is not None and not criterion:
                self._class_reported.add(id(report.node))
                if quiet and route.hooks <= quiet:
                    continue
                report.message += route.describe()
                if lightning_fix and not route.lightning:
                    report.fix = None
                self.context.reports.append(report)
                continue
            diagnostic = self.context.diagnostic(report)
            if diagnostic is not None:
                self._deferred[id(report.node)] = len(self._candidates)
                condition = HotPathReaches(class_name, method_name, lightning_fix, quiet, criterion)
                self._candidates.append(Pending(diagnostic, condition))

    def _file_criteria(self) -> Dict[Tuple[str, str], CriterionUse]:
        if self._criteria is None:
            graph = self._file_loops()
            self._criteria = criterion_methods(self._file_reach(), graph) if graph is not None else {}
        return self._criteria

    def _file_reach(self) -> Reach:
        if self._reach is None:
            graph = class_graph(self.context.view)
            self._reach = Reach(ClassIndex(graph.classes), graph.self_calls, decided_only=True)
        return self._reach

    def leave_Module(self, node) -> None:
        record = self.context.record
        if self.training_loops:
            loop_pending = self._loop_pass(node, record.loops, self._class_reported)
            settled = {self._deferred[id(report.node)] for report in self.context.reports if id(report.node) in self._deferred}
            self._candidates = [c for i, c in enumerate(self._candidates) if i not in settled]
            record.pending.extend(loop_pending)
        record.pending.extend(self._candidates)


def hot_path_findings(project, pending: Sequence[Tuple[str, Pending]], rule: type, config: Config) -> List[Diagnostic]:
    """The findings of a hot-path rule that wait for the tree (`HotPathReaches`,
    `LoopReaches`; `pending`: (display path, pending) pairs) that it reaches."""
    reach = project.reach
    loops = None
    criteria: Dict[Tuple[str, str], CriterionUse] = {}
    if rule.training_loops:
        loops = project.loops(bool(config.options_for(rule.name).get("check-evaluation-loops", False)))
        criteria = criterion_methods(reach, loops)
    found = []
    for display, item in pending:
        candidate, diagnostic = item.condition, item.diagnostic
        if not isinstance(candidate, HotPathReaches):
            continue
        route = reach.route(candidate.class_name, candidate.method)
        use = criteria.get((candidate.class_name, candidate.method))
        if use is not None and (candidate.criterion or route is None):
            origin_file = loops.files.get(use.route.origin)
            message = diagnostic.message + use.describe(origin_file if origin_file != display else None)
            found.append(replace(diagnostic, message=message, fix=None if candidate.lightning_fix else diagnostic.fix))
            continue
        if candidate.criterion or route is None or (candidate.quiet_hooks and route.hooks <= candidate.quiet_hooks):
            continue
        fix = None if candidate.lightning_fix and not route.lightning else diagnostic.fix
        found.append(replace(diagnostic, message=diagnostic.message + route.describe(), fix=fix))
    if loops is not None:
        seen = {(d.filename, d.location, d.cell) for d in found}
        for diagnostic in loop_findings(pending, loops):
            if (diagnostic.filename, diagnostic.location, diagnostic.cell) not in seen:
                found.append(diagnostic)
    return found


# ---- module instances that flow into function parameters (TL004) -------------------
#
# Per file, from the stdlib ast (`instance_flow`): each call of a function of the linted
# tree, with what its arguments carry, and what each module-level function returns. A
# value is a set of sources: the absolute dotted name of a class, function or module-level
# object (`pkg.models.Critic` for `Critic()`, `critic` after `critic = Critic().cuda()`,
# `self.critic` after `self.critic = Critic()`), or `param:NAME`, a parameter of the
# function making the call, which the project pass follows on to that function's callers.
# `instances_into` then answers, for the whole tree, which sources reach a parameter.

PARAM = "param:"
# methods that hand back their receiver (or a copy of the same model)
_SAME_MODEL_METHODS = frozenset(
    {"to", "cuda", "cpu", "train", "eval", "float", "double", "half", "bfloat16", "requires_grad_", "module"}
)
_FLOW_DEPTH = 6
# and the calls that may call the tree
_FLOW_NODES = (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.Return, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)


def instance_flow(view: SourceView) -> Optional[Dict[str, Any]]:
    """JSON-able facts: `calls` ([callee, caller, [[index or keyword, sources]]]),
    `functions` (name -> [parameters, returned sources]) and, for a package
    `__init__`, `exports` (its import table); None if the file has none of them."""
    builder = _FlowBuilder(view)
    calls = [node for node in view.nodes_of(ast.Call) if _may_call_tree(node, view)]
    if calls or is_package(view.path):
        facts = builder.build(calls)
    else:  # no call of anything the tree may define: its functions' parameters suffice
        facts = {"calls": [], "functions": builder.parameters(), "exports": {}}
    return facts if any(facts.values()) else None


def bound_instance_sources(view: SourceView, expression: ast.AST, function, class_node) -> Set[str]:
    """`_FlowBuilder.bound_sources` over one file, the builder kept with the file's view."""
    builder = view.__dict__.get("_torchlint_bound_flow")
    if builder is None:
        builder = view.__dict__["_torchlint_bound_flow"] = _FlowBuilder(view)
        builder.owned = owned_nodes(view, view.nodes_of(*_FLOW_NODES))
    return builder.bound_sources(expression, function, class_node)


def _parameters(function) -> List[str]:
    arguments = function.args
    return [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]


def _may_call_tree(call: ast.Call, view: SourceView) -> bool:
    """Whether a call's function may be one the linted tree defines: imported from a
    module outside torch and the standard library, or a name of the file's top level."""
    func = call.func
    while isinstance(func, ast.Attribute):
        func = func.value
    if not isinstance(func, ast.Name):
        return False
    imported = view.imports.get(func.id)
    return not outside_tree(imported) if imported is not None else func.id in _top_level_names(view)


def _top_level_names(view: SourceView) -> Set[str]:
    cached = view.__dict__.get("_torchlint_top_level_names")
    if cached is None:
        cached = {name for node in view.tree.body for name in _ast_bound_names(node)}
        view.__dict__["_torchlint_top_level_names"] = cached
    return cached


class _FlowBuilder:
    def __init__(self, view: SourceView) -> None:
        self.tree = view.tree
        self.table = view.imports
        self.module = module_name(view.path)
        self.package = is_package(view.path)
        self.top = {
            name
            for node in self.tree.body
            for name in _ast_bound_names(node)
        }
        self.view = view
        self.owned: Dict[Optional[ast.AST], List[ast.AST]] = {}
        self.module_assigns: Dict[str, List[ast.AST]] = {}
        for node in module_level_ast_statements(self.tree):
            pairs = [pair for target in node.targets for pair in bound_values(target, node.value)] if isinstance(
                node, ast.Assign
            ) else loop_and_with_values(node)
            for name, value in pairs:
                self.module_assigns.setdefault(name, []).append(value)
        self.calls: List[list] = []
        self.functions: Dict[str, list] = {}
        self._cache: Dict[Tuple[str, str], Set[str]] = {}  # one function's names
        self._owners: Dict[int, Tuple[ast.ClassDef, Dict[str, List[ast.AST]]]] = {}
        self._module_cache: Dict[Tuple[str, str], Set[str]] = {}

    def build(self, calls: List[ast.Call]) -> Dict[str, Any]:
        """`calls`: those of the file that may call a function of the tree."""
        exports = dict(self.table) if self.package else {}
        self.owned = owned_nodes(self.view, [*calls, *self.view.nodes_of(*_FLOW_NODES)])
        self._calls([node for node in self.owned.get(None, ()) if type(node) is ast.Call], None, "")
        for node in self.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._function(node, self._collect(node, None), None)
            elif isinstance(node, ast.ClassDef):
                methods, attrs = self._class_methods(node)
                for method, collected in methods:
                    self._function(method, collected, (node, attrs))
        return {"calls": self.calls, "functions": self.functions, "exports": exports}

    def _class_methods(self, node: ast.ClassDef):
        """Each method with what `_collect` finds in it, and every method's `self.<attr> =
        ...` values together: any method may read any attribute."""
        methods = [(method, self._collect(method, ast_self_name(method))) for method in ast_class_methods(node)]
        attrs: Dict[str, List[ast.AST]] = {}
        for _, collected in methods:
            for name, values in collected[3].items():
                attrs.setdefault(name, []).extend(values)
        return methods, attrs

    def bound_sources(self, expression: ast.AST, function, class_node: Optional[ast.ClassDef]) -> Set[str]:
        """What a name or `self.<attr>` bound in the code of `function` (None: the module's
        own code; a method of `class_node`) holds: the absolute names of the classes and
        functions of the tree it is built by. A class named directly (`Focal(...)` is a
        construction, not a call of an instance) and a parameter hold nothing here."""
        scope = None
        if function is not None:
            collected = self._collect(function, ast_self_name(function) if class_node is not None else None)
            owner = None
            if class_node is not None:
                owner = self._owners.get(id(class_node))
                if owner is None:
                    owner = self._owners[id(class_node)] = (class_node, self._class_methods(class_node)[1])
            scope = _FlowScope(set(_parameters(function)), collected[0], owner, ast_self_name(function) if owner else None)
        head = ast_dotted_name(expression)
        if head is None:
            return set()
        first = head.split(".")[0]
        bound = first in self.module_assigns or (scope is not None and (first in scope.assigns or first == scope.instance))
        if not bound:
            return set()
        self._cache = {}
        return {source for source in self._sources(expression, scope, 0) if not source.startswith(PARAM)}

    def parameters(self) -> Dict[str, list]:
        """`functions` without walking any body: each module-level function's parameters."""
        return {
            self._qualify(node.name): [_parameters(node), []]
            for node in self.tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        }

    def _qualify(self, local: str) -> str:
        return f"{self.module}.{local}" if self.module else local

    def _collect(self, function, instance: Optional[str]) -> Tuple[Dict[str, List[ast.AST]], List[ast.AST], List[ast.Call], Dict]:
        """A function's local assignments, returns, calls and (for a method)
        `self.<attr>` assignments."""
        assigns: Dict[str, List[ast.AST]] = {}
        returns: List[ast.AST] = []
        calls: List[ast.Call] = []
        attrs: Dict[str, List[ast.AST]] = {}
        for node in self.owned.get(function, ()):
            kind = type(node)
            if kind is ast.Call:
                calls.append(node)
            elif kind is ast.Assign:
                for target in node.targets:
                    attribute = _ast_self_attribute(target, instance) if instance is not None else None
                    if attribute is not None:
                        attrs.setdefault(attribute, []).append(node.value)
                    for name, value in bound_values(target, node.value):
                        assigns.setdefault(name, []).append(value)
            elif kind in (ast.AnnAssign, ast.NamedExpr) and type(node.target) is ast.Name:
                if node.value is not None:
                    assigns.setdefault(node.target.id, []).append(node.value)
            elif kind is ast.Return and node.value is not None:
                returns.append(node.value)
            elif kind in (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith):
                for name, value in loop_and_with_values(node):
                    assigns.setdefault(name, []).append(value)
        return assigns, returns, calls, attrs

    def _function(self, function, collected, owner) -> None:
        assigns, returns, calls, _ = collected
        params = _parameters(function)
        local = function.name if owner is None else f"{owner[0].name}.{function.name}"
        scope = _FlowScope(set(params), assigns, owner, ast_self_name(function) if owner else None)
        self._cache = {}
        self._calls(calls, scope, local)
        if owner is None:
            sources: Set[str] = set()
            for value in returns:
                sources |= self._sources(value, scope, 0)
            self.functions[self._qualify(local)] = [params, sorted(sources)]

    def _calls(self, calls: List[ast.Call], scope, local: str) -> None:
        for node in calls:
            callee = self._name(ast_dotted_name(node.func), scope)
            if callee is None:
                continue
            args = []
            for index, arg in enumerate(node.args):
                if isinstance(arg, ast.Starred):
                    break
                args.append([index, sorted(self._sources(arg, scope, 0))])
            for keyword in node.keywords:
                if keyword.arg:  # an argument with no source still binds its parameter
                    args.append([keyword.arg, sorted(self._sources(keyword.value, scope, 0))])
            if args:
                self.calls.append([callee, self._qualify(local) if local else "", args])

    def _name(self, dotted: Optional[str], scope) -> Optional[str]:
        """The absolute name a module-level dotted name stands for, if the tree may define it."""
        if not dotted:
            return None
        head = dotted.split(".")[0]
        if scope is not None and (head in scope.params or head in scope.assigns or head == scope.instance):
            return None
        resolved = resolve(dotted, self.table)
        if resolved is not None and resolved.startswith("."):
            resolved = absolute_import(self.module, self.package, resolved)
        elif resolved is None and head in self.top:
            resolved = self._qualify(dotted)
        if resolved is None or outside_tree(resolved):
            return None
        return resolved

    def _expand(self, key: Tuple[str, str], values, scope, depth: int) -> Set[str]:
        """The sources of a name's assigned values, each name expanded once per function
        (`h = layer(h)` fifty times over must not branch fifty ways at every step)."""
        cache = self._module_cache if key[0] == "module" else self._cache
        found = cache.get(key)
        if found is None:
            cache[key] = set()  # through itself, a name reaches nothing more
            found = set().union(*(self._sources(value, scope, depth + 1) for value in values))
            cache[key] = found
        return found

    def _sources(self, node, scope, depth: int) -> Set[str]:
        if depth > _FLOW_DEPTH:
            return set()
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in _SAME_MODEL_METHODS:
                return self._sources(func.value, scope, depth + 1)
            node = func
        if isinstance(node, ast.Subscript):  # `critics[0]`: one of what the container holds
            return self._sources(node.value, scope, depth + 1)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return set().union(*(self._sources(element, scope, depth + 1) for element in node.elts))
        if isinstance(node, ast.Starred):
            return self._sources(node.value, scope, depth + 1)
        if isinstance(node, (ast.Name, ast.Attribute)):
            dotted = ast_dotted_name(node)
            if dotted is None:
                return set()
            head, _, rest = dotted.partition(".")
            if scope is not None:
                if scope.instance is not None and head == scope.instance and rest:
                    attribute = rest.split(".")[0]
                    return self._expand(("self", attribute), scope.owner[1].get(attribute, ()), scope, depth)
                if head in scope.assigns:
                    return self._expand(("local", head), scope.assigns[head], scope, depth)
                if head in scope.params:
                    return {PARAM + head} if not rest else set()
            if head in self.module_assigns:
                return self._expand(("module", head), self.module_assigns[head], None, depth)
            name = self._name(dotted, scope)
            return {name} if name else set()
        return set()


@dataclass
class _FlowScope:
    params: Set[str]
    assigns: Dict[str, List[ast.AST]]
    owner: Any  # (ClassDef, {attribute: assigned values}) for a method
    instance: Optional[str]


def bound_values(target: ast.AST, value: ast.AST) -> List[Tuple[str, ast.AST]]:
    """The names an assignment target binds, each with the expression it receives:
    element by element where the value is a tuple or list of matching shape (`critic, gen
    = Critic(), Gen()`; a starred name gets the rest as a list), else the whole value."""
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if isinstance(target, ast.Starred):
        return bound_values(target.value, value)
    if not isinstance(target, (ast.Tuple, ast.List)):
        return []
    names = target.elts
    stars = [i for i, name in enumerate(names) if isinstance(name, ast.Starred)]
    values = value.elts if isinstance(value, (ast.Tuple, ast.List)) else None
    if values is None or any(isinstance(v, ast.Starred) for v in values) or len(stars) > 1:
        return [pair for name in names for pair in bound_values(name, value)]
    if not stars:
        if len(values) != len(names):
            return [pair for name in names for pair in bound_values(name, value)]
        return [pair for name, item in zip(names, values) for pair in bound_values(name, item)]
    star, after = stars[0], len(names) - stars[0] - 1
    if len(values) < len(names) - 1:
        return [pair for name in names for pair in bound_values(name, value)]
    rest = ast.List(elts=values[star : len(values) - after], ctx=ast.Load())
    pairs = [pair for name, item in zip(names[:star], values[:star]) for pair in bound_values(name, item)]
    pairs += bound_values(names[star], rest)
    pairs += [pair for name, item in zip(names[star + 1 :], values[len(values) - after :]) for pair in bound_values(name, item)]
    return pairs


def loop_and_with_values(node: ast.AST) -> List[Tuple[str, ast.AST]]:
    """What a `for` target (`for critic in critics`, through `enumerate` and `zip`) and a
    `with ... as` name receive: the container (whose sources are its elements') or the
    context expression."""
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [pair for item in node.items if item.optional_vars is not None for pair in bound_values(item.optional_vars, item.context_expr)]
    if not isinstance(node, (ast.For, ast.AsyncFor)):
        return []
    target, iterable = node.target, node.iter
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.args and not iterable.keywords:
        if iterable.func.id == "enumerate" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            return bound_values(target.elts[1], iterable.args[0])
        if iterable.func.id == "zip" and isinstance(target, ast.Tuple) and len(target.elts) == len(iterable.args):
            return [pair for name, item in zip(target.elts, iterable.args) for pair in bound_values(name, item)]
    return bound_values(target, iterable)


def _ast_bound_names(node) -> List[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [name for target in node.targets for name, _ in bound_values(target, node.value)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def outside_tree(dotted: str) -> bool:
    """A name no linted module can define: PyTorch's or the standard library's."""
    head = dotted.split(".")[0]
    return head in ("torch", "functorch", "builtins") or head in getattr(sys, "stdlib_module_names", ())


class InstanceFlow:
    """Every file's `instance_flow` facts, indexed: which sources reach a parameter."""

    def __init__(self, flow_by_file: Mapping[str, Mapping[str, Any]]) -> None:
        self.functions: Dict[str, list] = {}
        self.exports: Dict[str, Tuple[str, bool, Mapping[str, str]]] = {}
        self._calls: Dict[str, List[Tuple[str, list]]] = {}
        for display, flow in flow_by_file.items():
            self.functions.update(flow.get("functions", {}))
            if flow.get("exports"):
                self.exports[module_name(display)] = (module_name(display), True, flow["exports"])
            for callee, caller, args in flow.get("calls", ()):
                self._calls.setdefault(callee.rsplit(".", 1)[-1], []).append((callee, [caller, args]))

    def function(self, dotted: str, depth: int = 0) -> Optional[str]:
        """The function of the tree that `dotted` names, through package re-exports."""
        if dotted in self.functions:
            return dotted
        matches = [name for name in self.functions if suffix_matches(name, dotted)]
        if matches:
            return min(matches)
        module, _, last = dotted.rpartition(".")
        for package, (name, is_init, table) in self.exports.items():
            if depth < 4 and module and suffix_matches(package, module) and last in table:
                target = table[last]
                target = absolute_import(name, is_init, target) if target.startswith(".") else target
                if target:
                    return self.function(target, depth + 1)
        return None

    def instances_into(self, function: str, param: str) -> Tuple[Set[str], bool]:
        """The sources (absolute names, a function's standing for what it returns) whose
        values reach parameter `param` of `function`, through every call site in the
        tree and the parameters those callers pass on; and whether any call site binds it."""
        found: Set[str] = set()
        bound = False
        seen: Set[Tuple[str, str]] = set()
        stack = [(function, param, 0)]
        while stack:
            target, name, depth = stack.pop()
            if (target, name) in seen or depth > _FLOW_DEPTH or target not in self.functions:
                continue
            seen.add((target, name))
            params = self.functions[target][0]
            index = params.index(name) if name in params else None
            for callee, (caller, args) in self._calls.get(target.rsplit(".", 1)[-1], ()):
                if self.function(callee) != target:
                    continue
                for key, sources in args:
                    if key != name and key != index:
                        continue
                    bound = True
                    for source in sources:
                        if source.startswith(PARAM):
                            stack.append((caller, source[len(PARAM):], depth + 1))
                        else:
                            found |= self._returned(source, depth)
        return found, bound

    def _returned(self, source: str, depth: int) -> Set[str]:
        """A source, and for a function of the tree what it returns (a factory's model)."""
        function = self.function(source)
        if function is None or depth > _FLOW_DEPTH:
            return {source}
        found = {source}
        for returned in self.functions[function][1]:
            if not returned.startswith(PARAM):
                found |= self._returned(returned, depth + 1)
        return found


# ---- within one file: scopes, what a function runs, and who calls it (TL004, LibCST) ----
#
# `FileFlow` is a mixin for a rule's traversal: it records each function's scope (its
# parameters, assignments, the names it reads and calls), each class's `self.<attr>`
# values and methods, and the names each top-level definition reads; `_reach` then says
# which top-level names, imported names and unresolved parameters a function runs.

MODULE_SCOPE = "<module>"
MAX_FLOW_DEPTH = 8


@dataclass(eq=False)
class ClassScope:
    name: str
    node: Any
    top: Set[str]
    # self.<attr> -> (assigned value, the method's scope)
    attrs: Dict[str, List[Tuple[Any, "Scope"]]] = dataclasses.field(default_factory=dict)
    methods: Dict[str, "Scope"] = dataclasses.field(default_factory=dict)
    # calls `self.<attr>(...)`: (attr, method scope, statement line, under cuDNN-off)
    self_calls: List[Tuple[str, "Scope", Any, bool]] = dataclasses.field(default_factory=list)


@dataclass(eq=False)
class Scope:
    """A function (or the module's own statements): what it binds, reads and calls."""

    name: str
    node: Any
    parent: Optional["Scope"]
    cls: Optional[ClassScope]
    params: List[str] = dataclasses.field(default_factory=list)
    defaults: Dict[str, Any] = dataclasses.field(default_factory=dict)
    annotations: Dict[str, Any] = dataclasses.field(default_factory=dict)
    instance: Optional[str] = None  # what a method calls `self`
    assigns: Dict[str, List[Any]] = dataclasses.field(default_factory=dict)
    refs: Set[str] = dataclasses.field(default_factory=set)
    calls: List[Tuple[str, Any]] = dataclasses.field(default_factory=list)
    called: Set[str] = dataclasses.field(default_factory=set)  # names called like a model: `x(...)`, `x.forward(...)`



@dataclass
class Reached:
    local: Set[str] = dataclasses.field(default_factory=set)
    imported: Set[str] = dataclasses.field(default_factory=set)
    # parameters that carry a model in and have no caller in this file: (function, name),
    # the function named as the project pass knows it (None: a method or nested function)
    params: Set[Tuple[Optional[str], str]] = dataclasses.field(default_factory=set)



def expression_refs(node) -> Set[str]:
    """The dotted names an expression reads (`self.rnn`, `models.Critic`, `x`)."""
    found: Set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.Name, cst.Attribute)):
            dotted = cst_dotted_name(current)
            if dotted:
                found.add(dotted)
                continue
            if isinstance(current, cst.Attribute):
                stack.append(current.value)
                continue
        if isinstance(current, cst.Arg):
            stack.append(current.value)
        elif isinstance(current, cst.Lambda):
            stack.append(current.body)
        else:
            stack.extend(current.children)
    return found


def bound_argument(call, keyword: str, index: Optional[int]):
    """The argument bound to a parameter (by keyword, or at a positional index).

    After a `*args` the positions are unknown, so only keywords are looked at; keywords
    may also follow `*args` and `**kwargs`."""
    position: Optional[int] = 0
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == keyword:
                return arg
        elif arg.star:
            if arg.star == "*":
                position = None
        elif position is not None:
            if index is not None and position == index:
                return arg
            position += 1
    return None






class FileFlow:
    """The in-file data flow, collected in the rule's own traversal (call `_start_flow`
    in `__init__`, `_record_call` in `visit_Call`; override `_assigned` to see every
    assignment target)."""

    def _start_flow(self) -> None:
        self._module = Scope(MODULE_SCOPE, None, None, None)
        self._scopes: List[Scope] = [self._module]
        self._all_scopes: List[Scope] = [self._module]
        self._classes: List[ClassScope] = []
        self._class_stack: List[ClassScope] = []
        self._kinds: List[Any] = []  # the enclosing classes and functions, innermost last
        self._top_refs: Dict[str, Set[str]] = {MODULE_SCOPE: set()}
        self._top: List[Set[str]] = []  # the top-level names being defined
        self._skip: Set[int] = set()
        self._targets: Dict[int, List[Any]] = {}  # id(assigned value) -> targets
        self._statements: List[Any] = []
        self._statement_top: Optional[Any] = None  # the module-level assignment being visited
        self._in_import = 0

    def _assigned(self, target, value) -> None:
        """Called for every assignment target; for subclasses."""

    def _record_call(self, node) -> None:
        callee = cst_dotted_name(node.func)
        scope = self._scope
        if callee:
            scope.calls.append((callee, node))
        called = called_name(node.func)
        if called:
            scope.called.add(called)

    @property
    def _scope(self) -> Scope:
        return self._scopes[-1]

    def _current_top(self) -> Set[str]:
        return self._top[-1] if self._top else {MODULE_SCOPE}

    def _ref(self, dotted: str) -> None:
        self._scope.refs.add(dotted)
        for top in self._current_top():
            self._top_refs.setdefault(top, set()).add(dotted)

    def visit_ClassDef(self, node) -> None:
        self._skip.add(id(node.name))
        top = self._current_top() if self._top else {node.name.value}
        info = ClassScope(node.name.value, node, set(top))
        self._classes.append(info)
        self._class_stack.append(info)
        self._kinds.append(info)
        self._top.append(info.top)
        self._top_refs.setdefault(node.name.value, set())

    def leave_ClassDef(self, node) -> None:
        self._class_stack.pop()
        self._kinds.pop()
        self._top.pop()

    def visit_FunctionDef(self, node) -> None:
        self._skip.add(id(node.name))
        owner = self._kinds[-1] if self._kinds and isinstance(self._kinds[-1], ClassScope) else None
        parent = self._scope
        scope = Scope(node.name.value, node, parent, owner, parameter_names(node))
        for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
            if param.default is not None:
                scope.defaults[param.name.value] = param.default
            if param.annotation is not None:
                scope.annotations[param.name.value] = param.annotation.annotation
        if owner is not None:
            scope.instance = self_name(node)
            owner.methods[node.name.value] = scope
        if self._top:
            self._top.append(set(self._current_top()))
        else:
            self._top.append({node.name.value})
            self._top_refs.setdefault(node.name.value, set())
        self._scopes.append(scope)
        self._all_scopes.append(scope)
        self._kinds.append(scope)

    def leave_FunctionDef(self, node) -> None:
        scope = self._scopes.pop()
        self._kinds.pop()
        self._top.pop()
        parent = self._scopes[-1]
        if parent.node is not None:
            # a closure's reads are its enclosing function's (minus the closure's own names)
            own = set(scope.params) | set(scope.assigns)
            parent.refs.update(ref for ref in scope.refs if ref.split(".")[0] not in own)
            parent.called.update(name for name in scope.called if name.split(".")[0] not in own)

    def visit_Param(self, node) -> None:
        self._skip.add(id(node.name))

    def visit_Arg(self, node) -> None:
        if node.keyword is not None:
            self._skip.add(id(node.keyword))

    def visit_Import(self, node) -> None:
        self._in_import += 1

    def leave_Import(self, node) -> None:
        self._in_import -= 1

    def visit_ImportFrom(self, node) -> None:
        self._in_import += 1

    def leave_ImportFrom(self, node) -> None:
        self._in_import -= 1

    def visit_Name(self, node) -> None:
        if self._in_import or id(node) in self._skip:
            return
        self._ref(node.value)

    def visit_Attribute(self, node) -> None:
        if self._in_import or id(node) in self._skip:
            return
        dotted = cst_dotted_name(node)
        if dotted is None:
            self._skip.add(id(node.attr))
            return
        self._ref(dotted)
        current = node
        while isinstance(current, cst.Attribute):
            self._skip.add(id(current))
            self._skip.add(id(current.attr))
            current = current.value
        self._skip.add(id(current))

    def visit_SimpleStatementLine(self, node) -> None:
        self._statements.append(node)
        if not self._top and not self._class_stack and self._scope is self._module:
            targets = set()
            for small in node.body:
                if isinstance(small, (cst.Assign, cst.AnnAssign)):
                    for target in assign_targets(small):
                        if isinstance(target, cst.Name):
                            targets.add(target.value)
            if targets:
                self._top.append(targets)
                for name in targets:
                    self._top_refs.setdefault(name, set())
                self._statement_top = node

    def leave_SimpleStatementLine(self, node) -> None:
        self._statements.pop()
        if self._statement_top is node:
            self._top.pop()
            self._statement_top = None

    def visit_SimpleStatementSuite(self, node) -> None:
        self._statements.append(node)

    def leave_SimpleStatementSuite(self, node) -> None:
        self._statements.pop()


    def _record_assign(self, targets, value) -> None:
        self._targets[id(value)] = targets
        scope = self._scope
        in_class_body = bool(self._kinds) and isinstance(self._kinds[-1], ClassScope)
        for target in targets:
            if not in_class_body:
                for name in assigned_names(target):
                    scope.assigns.setdefault(name, []).append(value)
            cls = scope.cls
            if (
                cls is not None
                and isinstance(target, cst.Attribute)
                and isinstance(target.value, cst.Name)
                and target.value.value == scope.instance
            ):
                cls.attrs.setdefault(target.attr.value, []).append((value, scope))
            self._assigned(target, value)

    def visit_Assign(self, node) -> None:
        self._record_assign([t.target for t in node.targets], node.value)

    def visit_AnnAssign(self, node) -> None:
        if node.value is not None:
            self._record_assign([node.target], node.value)

    # the other binding forms: what a `for` target, a walrus and a `with ... as` name receive
    def visit_For(self, node) -> None:
        self._record_assign([node.target], node.iter)

    def visit_NamedExpr(self, node) -> None:
        self._record_assign([node.target], node.value)

    def visit_WithItem(self, node) -> None:
        if node.asname is not None:
            self._record_assign([node.asname.name], node.item)


    def _call_offset(self, callee: str, caller: Scope, target: Scope) -> Optional[int]:
        """None if `callee` (called in `caller`) is not `target`; else how many leading
        parameters the call binds implicitly (1 for `self.method(...)`)."""
        if target.node is None:
            return None
        if target.cls is not None:
            if target.name == "__init__" and callee == target.cls.name:
                return 1  # ClassName(...) binds __init__'s parameters after self
            if caller.cls is target.cls and caller.instance and callee == f"{caller.instance}.{target.name}":
                return 1 if target.instance else 0
            return None
        if callee != target.name:
            return None
        scope = caller
        while scope is not None:
            if scope is target.parent:
                return 0
            scope = scope.parent
        return None

    def _arguments_for(self, target: Scope, param: str) -> Iterator[Tuple[Scope, Any]]:
        """(caller, argument expression or None if not passed) for each call of this file
        that runs `target`, whose parameter `param` it binds."""
        if param not in target.params:
            return
        index = target.params.index(param)
        for caller in self._all_scopes:
            for callee, call in caller.calls:
                offset = self._call_offset(callee, caller, target)
                if offset is not None:
                    arg = bound_argument(call, param, index - offset)
                    yield caller, (arg.value if arg is not None else None)

    def _reach(self, start: Scope, outputs=None, inputs=None) -> Reached:
        """What the code of `start` runs (`outputs`: the differentiated expression, all of
        whose graph counts; `inputs`: where that graph is cut)."""
        reach = Reached()
        seen: Set[Tuple[str, int]] = set()
        table = self.context.imports.table

        def expand(ref: str, scope: Scope, depth: int, model: bool = False) -> None:
            """`model`: the value flows into something called like a model."""
            key = (ref, id(scope), model)
            if key in seen or depth > MAX_FLOW_DEPTH:
                return
            seen.add(key)
            head, _, rest = ref.partition(".")
            if ref.rsplit(".", 1)[-1] in ("data", "detach"):
                return  # detached: no graph flows on
            if head in scope.called:
                model = True
            elif head == scope.instance and ".".join(ref.split(".")[:2]) in scope.called:
                model = True  # `self.disc[0](x)` runs what `self.disc` holds
            cls = scope.cls
            if cls is not None and scope.instance is not None and head == scope.instance:
                attr = rest.split(".")[0] if rest else None
                if attr is None:
                    reach.local.update(cls.top)
                elif attr in cls.attrs:
                    for value, owner in cls.attrs[attr]:
                        for inner in expression_refs(value):
                            expand(inner, owner, depth + 1, model)
                elif attr in cls.methods:
                    method = cls.methods[attr]
                    for inner in method.refs:
                        expand(inner, method, depth + 1)
                return
            if head in scope.params and scope.node is not None:
                # only a model is differentiated twice; the data a caller passes in is
                # differentiated once, whatever computed it
                annotation = self._tree_annotation(scope, head)
                if annotation:  # `critic: Critic` says what arrives
                    for inner in annotation:
                        expand(inner, scope, depth + 1, model)
                elif model and not upward(scope, head, depth, model):
                    reach.params.add((self._exported_name(scope), head))
                return
            if head in scope.assigns:
                if scope is self._module:
                    reach.local.add(head)
                for value in scope.assigns[head]:
                    for inner in expression_refs(value):
                        expand(inner, scope, depth + 1, model)
                return
            if scope.parent is not None:
                expand(ref, scope.parent, depth, model)
                return
            if head in self._top_names:
                reach.local.add(head)
                return
            qualified = resolve(ref, table)
            if qualified is not None:
                reach.imported.add(qualified)

        def upward(target: Scope, param: str, depth: int, model: bool) -> bool:
            found = False
            for caller, value in self._arguments_for(target, param):
                found = True
                for inner in expression_refs(value) if value is not None else ():
                    expand(inner, caller, depth + 1, model)
            return found

        if start is self._module:
            reach.local.add(MODULE_SCOPE)
        for ref in start.refs:
            expand(ref, start, 0)
        if outputs is not None:
            # everything that computed the differentiated tensor, up to `inputs`, is
            # differentiated twice, whether a model or a loss passed in by a caller
            cut = expression_refs(inputs) if inputs is not None else set()
            cut_heads = {ref.split(".")[0] for ref in cut}
            for ref in expression_refs(outputs):
                if ref.split(".")[0] not in cut_heads:
                    expand(ref, start, 0, True)
        return reach

    def _tree_annotation(self, scope: Scope, param: str) -> List[str]:
        """The names in a parameter's annotation that this file or another linted one may
        define (`Critic`, `models.Critic`); none for `nn.Module`, `Any`, `Optional`."""
        annotation = scope.annotations.get(param)
        if isinstance(annotation, cst.SimpleString):  # `critic: "Critic"`
            try:
                annotation = cst.parse_expression(str(annotation.evaluated_value))
            except cst.ParserSyntaxError:
                return []
        if annotation is None:
            return []
        names = []
        for ref in expression_refs(annotation):
            resolved = resolve(ref, self.context.imports.table)
            if (resolved and not outside_tree(resolved)) or (not resolved and ref.split(".")[0] in self._top_names):
                names.append(ref)
        return names

    def _exported_name(self, scope: Scope) -> Optional[str]:
        """A module-level function's absolute name, as the instance flow knows it."""
        if scope.parent is not self._module or scope.cls is not None:
            return None
        module = module_name(self.context.path)
        return f"{module}.{scope.name}" if module else scope.name

    def _holders(self, top: Set[str]) -> Set[str]:
        """The top-level names whose use runs the layer: its definition's, and those of
        everything in the file that (transitively) reads one of them."""
        holders = set(top)
        changed = True
        while changed:
            changed = False
            for name, refs in self._top_refs.items():
                if name not in holders and any(ref.split(".")[0] in holders for ref in refs):
                    holders.add(name)
                    changed = True
        return holders


def candidates_for(target: str, files, depth: int) -> List[Tuple[str, int]]:
    """The (file, candidate index) pairs that the dotted name `target` reaches: a holder
    of a linted module, a whole module, or a name a linted module re-exports. `files`:
    display path -> (module name, is a package, its RNN layers waiting for a site
    (`Pending` of `SecondOrderReaches`), its import table)."""
    if depth > 4:
        return []
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        prefix, rest = ".".join(parts[:cut]), parts[cut:]
        owners = [display for display, (module, _, _, _) in files.items() if module and suffix_matches(module, prefix)]
        if not owners:
            continue
        found: List[Tuple[str, int]] = []
        for owner in owners:
            module, package, candidates, imports = files[owner]
            if not rest:
                found.extend((owner, index) for index in range(len(candidates)))
                continue
            name = rest[0]
            found.extend((owner, i) for i, c in enumerate(candidates) if name in c.condition.holders)
            exported = imports.get(name)
            if exported is not None:
                if exported.startswith("."):
                    exported = absolute_import(module, package, exported)
                if exported:
                    found.extend(candidates_for(".".join([exported, *rest[1:]]), files, depth + 1))
        return found
    return []



def called_name(func) -> Optional[str]:
    """What a call runs like a model: `critic` for `critic(x)` and `critic.forward(x)`,
    `self.heads` for `self.heads[0](x)`."""
    while isinstance(func, cst.Subscript):
        func = func.value
    dotted = cst_dotted_name(func)
    if dotted and dotted.endswith(".forward"):
        dotted = dotted[: -len(".forward")]
    return dotted



def assign_targets(small) -> List[Any]:
    if isinstance(small, cst.Assign):
        return [t.target for t in small.targets]
    return [small.target] if small.value is not None else []
