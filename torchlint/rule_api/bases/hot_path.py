"""The base of the rules that report what a hot path must not do (TL003, TL005): every
method of every class is checked, and a finding is reported where a hot path reaches its
method (torchlint/analysis/hot_paths.py), in the file at once, else in the project pass.

Cost: per class, its settings and its CPU state (one pass over its methods each, the CPU
state's over their statements only) and, per method that may run per step, its parents
and its `StepScope` (one pass each): computed once for the rules of the traversal (TL003
and TL005 share them through the context), then O(depth) per `off_step` question with
answers kept in the scope; `cpu_state(expr)` renders the expression asked about."""

from __future__ import annotations

import ast
from typing import Any, Dict, FrozenSet, Iterator, List, Mapping, Optional, Set, Tuple

from torchlint.analysis.class_graph import class_graph
from torchlint.analysis.classes import ast_class_methods, methods
from torchlint.analysis.every_step import (
    ClassSettings, StepScope, class_settings, in_error_path, in_periodic_branch, step_scope,
)
from torchlint.analysis.hot_paths import METRIC_UPDATE, Reach, criterion_methods
from torchlint.analysis.instance_flow import instance_flow
from torchlint.analysis.loop_reach import LoopPass, loop_candidate_nodes
from torchlint.analysis.modules import ClassIndex
from torchlint.analysis.scopes import owned_nodes
from torchlint.analysis.torch_calls import ast_other_framework_code
from torchlint.analysis.loop_graph import CriterionUse
from torchlint.analysis.loss_paths import CRITERION_METHODS
from torchlint.analysis.training_loops import cst_no_grad_decorated, loop_facts, may_run_per_step
from torchlint.analysis.value_kinds import ast_fresh_cpu_tensor
from torchlint.core.config import Config
from torchlint.core.lazy import cst
from torchlint.core.positions import cst_counterparts
from torchlint.core.walk import ast_statements
from torchlint.analysis.source_view import SourceView
from torchlint.rule_api.rule import Report, Rule
from torchlint.analysis.module_names import module_name
from torchlint.analysis.pending import HotPathReaches, Pending
from torchlint.index.record import FileRecord


def _cpu_state(class_node: Optional[ast.ClassDef], table: Mapping[str, str], memo) -> Set[str]:
    """The state of `self` (rendered by `ast.unparse`) that every assignment of the class,
    in any of its methods, sets to a fresh CPU tensor. Cost: a walk of each method's
    statements, but of those `memo` holds from the text's previous version, and a test of
    each value assigned to an attribute or an item."""
    values: Dict[str, List[ast.AST]] = {}
    if class_node is None:
        return set()
    for function in ast_class_methods(class_node):
        for text, value in memo.result(function, "assigned_state", None, lambda: _assigned_state(function)):
            values.setdefault(text, []).append(value)
    return {
        text
        for text, assigned in values.items()
        if text.startswith("self") and all(ast_fresh_cpu_tensor(value, table) for value in assigned)
    }


def _assigned_state(function) -> List[Tuple[str, ast.AST]]:
    """(the target rendered, the value) of each assignment of one method to an attribute or an item."""
    found = []
    for node in ast_statements(function.body):  # assignments are statements: no expression is walked
        kind = type(node)
        if kind is ast.Assign:
            pairs = [(target, node.value) for target in node.targets]
        elif kind is ast.AnnAssign and node.value is not None:
            pairs = [(node.target, node.value)]
        else:
            continue
        held = (ast.Attribute, ast.Subscript)
        found.extend((ast.unparse(target), value) for target, value in pairs if isinstance(target, held))
    return found


def _rendered(code: str) -> str:
    """An expression's code as `ast.unparse` renders it (the code itself if it is no expression)."""
    try:
        return ast.unparse(ast.parse(f"({code})", mode="eval").body)
    except SyntaxError:
        return code


def _ast_classes(context) -> Dict[int, ast.ClassDef]:
    """id(LibCST class) -> the file's stdlib-ast class, whole (also the methods the LibCST
    parse left out). Cost: one pass over the statements of the top-level statements that
    hold a class."""
    tree = context.statement_tree
    wanted = [*context.view.nodes_of(ast.ClassDef), *(s for s in tree.body if isinstance(s, ast.ClassDef))]
    whole = context.elided.whole if context.elided is not None else (lambda node: node)
    return {id(ours): whole(theirs) for theirs, ours in cst_counterparts(context.module, tree, wanted).items()}


class HotPathRule(LoopPass, Rule):
    """A rule that checks every method of every class, and reports what it finds where a
    hot path reaches that method (in the file at once, else in the project pass).
    Subclasses give `ast_candidate` (whether one stdlib-ast node may be a finding: the
    sites follow from it) and
    `method_reports` (the findings of one method, each with whether its fix needs a
    Lightning step)."""

    project_rule = True
    follows_names = False  # what a hot path runs elsewhere in the file is read from the stdlib ast
    options: Mapping[str, Any] = {"check-error-paths": False, "check-periodic-branches": False}
    # True: training loops and step functions are hot paths too (torchlint/analysis/loop_reach.py)
    training_loops = False

    def __init__(self, context) -> None:
        super().__init__(context)
        self._class_names: List[str] = []
        self._candidates: List[Pending] = []
        self._reach: Optional[Reach] = None
        self._class_node = None
        self._class_name = ""
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
        record.classes, record.self_calls, record.periodic_self_calls = graph.classes, graph.self_calls, graph.periodic_calls
        if cls.training_loops:
            record.loops = loop_facts(view, criteria=True)
            if record.flow is None:  # what reaches a criterion parameter, or a factory returns
                record.flow = instance_flow(view)

    @classmethod
    def ast_candidate(cls, node: ast.AST, view: SourceView) -> bool:
        raise NotImplementedError

    @classmethod
    def sites(cls, view: SourceView, config: Config) -> List[ast.AST]:
        """The candidates (`ast_candidate`, calls all) in the methods that may run per step,
        then (with `training_loops`) those in functions that may run per step; none in
        another framework's code. The methods of a class holding none need no LibCST parse:
        the class's settings and state are read from the stdlib ast (`class_settings`,
        `_cpu_state`). Found whole (the gate and the parse read them all, and finding the
        first costs what finding all does). Cost: one test per call of the file, and the
        calls found placed in their functions (`owned_nodes`)."""
        if ast_other_framework_code(view):
            return []
        found = [node for node in view.nodes_of(ast.Call) if cls.ast_candidate(node, view)]
        if not found:
            return []
        owners = owned_nodes(view, found)
        per_step = {
            id(function)
            for klass in view.nodes_of(ast.ClassDef)
            for function in ast_class_methods(klass)
            if may_run_per_step(function.name)
        }
        sites = [node for owner, nodes in owners.items() if id(owner) in per_step for node in nodes]
        if cls.training_loops:
            sites.extend(loop_candidate_nodes(view, owners))
        return sites

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
            key = ("cpu_state", id(self._class_node))
            shared = self.context.shared
            if key not in shared:
                shared[key] = _cpu_state(self._ast_class(), self.context.view.imports, self.context.view.memo)
            self._cpu_state = shared[key]
        return bool(self._cpu_state) and _rendered(self.context.module.code_for_node(expression)) in self._cpu_state

    def _ast_class(self) -> Optional[ast.ClassDef]:
        """The stdlib ast of the class being visited, whole; None outside a class."""
        if self._class_node is None:
            return None
        shared = self.context.shared
        key = ("ast_classes", 0)
        if key not in shared:
            shared[key] = _ast_classes(self.context)
        return shared[key].get(id(self._class_node))

    def metric_update(self, function, class_node) -> bool:
        """Whether `function` is the `update` of the class being visited and that class is a metric
        (its bases resolve, in this file, to `hot_paths.METRIC_BASES`): what it reads on the host
        goes into the metric's state, on every batch."""
        return (
            class_node is not None
            and class_node is self._class_node
            and function.name.value == METRIC_UPDATE
            and self._file_reach().is_metric(self._class_name)
        )

    def off_step(self, node, parents: Mapping) -> bool:
        """Whether `node` does not run on every step: an error path, or a block that runs
        now and then (as the rule's `check-error-paths` / `check-periodic-branches` say)."""
        if in_error_path(node, parents, bool(self.settings["check-error-paths"]), self._step_scope()):
            return True
        return not self.settings["check-periodic-branches"] and in_periodic_branch(node, parents, self._step_scope())

    def _step_scope(self) -> StepScope:
        """The current method's `StepScope`, made once for the rules of the traversal (its
        answers are the same for each: they keep them for one another)."""
        if self._scope is None:
            shared = self.context.shared
            key = ("step_scope", id(self._function), id(self._class_node))
            scope = shared.get(key)
            if scope is None:
                if self._settings is None:
                    settings_key = ("class_settings", id(self._class_node))
                    if settings_key not in shared:
                        shared[settings_key] = class_settings(self._ast_class(), self.context.view.memo)
                    self._settings = shared[settings_key]
                scope = shared[key] = step_scope(self._function, self._settings)
            self._scope = scope
        return self._scope

    def visit_ClassDef(self, node) -> None:
        self._class_names.append(node.name.value)
        module = module_name(self.context.path)
        dotted = ".".join(self._class_names)
        class_name = f"{module}.{dotted}" if module else dotted
        self._class_node, self._class_name, self._cpu_state, self._settings = node, class_name, None, None
        for function in methods(node):
            if not isinstance(function.body, cst.IndentedBlock) or not may_run_per_step(function.name.value):
                continue
            self._function, self._scope = function, None
            reports = list(self.method_reports(node.name.value, function))
            self._method_reports[id(function)] = reports  # the loop pass reads them again
            if reports:
                # `@torch.inference_mode()` on a predictor's `forward`: no training step starts there (a
                # per-batch hook under `no_grad` still runs on every step)
                inference = (
                    function.name.value in CRITERION_METHODS
                    and not self.settings.get("check-evaluation-loops")
                    and cst_no_grad_decorated(function, self.context.imports)
                )
                self._place(class_name, function.name.value, reports, inference)

    def leave_ClassDef(self, node) -> None:
        self._class_names.pop()

    def _place(
        self, class_name: str, method_name: str, reports: List[Tuple[Report, bool]], inference: bool = False
    ) -> None:
        """Report what a hot path reaches, or defer it to the project pass; `inference`: the method runs
        under no gradient, so it is no hot path of its own (a training step that calls it still is)."""
        route = self._file_reach().route(class_name, method_name)
        if inference and route is not None and not route.via:
            return
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
            diagnostic = self.context.pending_diagnostic(report)
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
            skipped = None if self.settings["check-periodic-branches"] else graph.periodic_calls
            self._reach = Reach(ClassIndex(graph.classes), graph.self_calls, decided_only=True, skipped=skipped)
        return self._reach

    def leave_Module(self, node) -> None:
        record = self.context.record
        if self.training_loops:
            loop_pending = self._loop_pass(node, self._class_reported)
            settled = {self._deferred[id(report.node)] for report in self.context.reports if id(report.node) in self._deferred}
            self._candidates = [c for i, c in enumerate(self._candidates) if i not in settled]
            record.pending.extend(loop_pending)
        record.pending.extend(self._candidates)
