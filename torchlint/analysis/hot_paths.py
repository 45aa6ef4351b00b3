"""Hot paths: what a hot path runs, across the classes of the whole linted tree.

Which classes are modules (with `torchlint.analysis.modules.ClassIndex`), which methods a
hot path reaches (`forward` of a module, the `*_step` hooks of a LightningModule,
`forward`/`backward` of an `autograd.Function`, and the `self.method(...)` calls they
make, a few calls deep, through the class and its bases in any file), and the base of
the rules that report what a hot path reaches (TL003, TL005).

The class facts come from the stdlib ast of every file
(`torchlint.analysis.class_graph`), gated or not, so a base defined in a file no rule
parses with LibCST still resolves; they are the `classes` of each file's record
(`torchlint.index.record`), and the project pass builds one `Reach` from all of them
(`torchlint.index.project.ProjectIndex.reach`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import AbstractSet, Any, Dict, FrozenSet, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from torchlint.analysis.class_graph import class_graph
from torchlint.analysis.classes import ast_class_methods, methods
from torchlint.analysis.instance_flow import bound_instance_sources
from torchlint.analysis.loss_paths import CRITERION_METHODS
from torchlint.analysis.loop_graph import CriterionUse, LoopGraph
from torchlint.analysis.training_loops import loop_facts, may_run_per_step
from torchlint.analysis.value_kinds import fresh_cpu_tensor
from torchlint.analysis.scopes import ast_own_nodes, own_nodes
from torchlint.analysis.loop_reach import LoopPass, loop_candidate_nodes, loop_findings
from torchlint.core.config import Config
from torchlint.core.partial_parse import definitions_around
from torchlint.core.diagnostics import Diagnostic
from torchlint.core.lazy import cst
from torchlint.analysis.modules import LIGHTNING_STEPS, ClassFacts, ClassIndex, Kind
from torchlint.index.module_names import module_name
from torchlint.core.rule import Report, Rule, SourceView
from torchlint.index.pending import HotPathReaches, Pending
from torchlint.index.record import FileRecord
from torchlint.analysis.every_step import (
    ClassSettings, StepScope, class_settings, in_error_path, in_periodic_branch, step_scope,
)

MAX_DEPTH = 3  # self-calls followed from a hot path
# a Hugging Face `Trainer` subclass runs these on every training step
HF_TRAINERS = frozenset({"transformers.Trainer", "transformers.trainer.Trainer"})
HF_TRAINER_STEPS = ("training_step", "compute_loss")
AUTOGRAD_FUNCTIONS = frozenset(
    {"torch.autograd.Function", "torch.autograd.function.Function", "torch.autograd.function.InplaceFunction"}
)


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
