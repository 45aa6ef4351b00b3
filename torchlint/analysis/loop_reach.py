"""The training-loop half of a hot-path rule: what training loops and step functions
run (torchlint/analysis/training_loops.py), found in the file pass where the file alone
decides it, else kept as candidates the project pass decides over every file's facts.

Cost: per owner with reports, its parents (shared with the class pass and the other hot-path
rule) and one pass over its own nodes for its loops; per report a climb to the owner
(O(depth)). An owner nested in another is walked again by it (O(n × nesting))."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from torchlint.analysis.loop_graph import LoopGraph, describe_owner
from torchlint.analysis.training_loops import cst_owners, loop_facts, may_run_per_step
from torchlint.core.diagnostics import Diagnostic
from torchlint.core.lazy import cst
from torchlint.analysis.module_names import module_name
from torchlint.analysis.source_view import SourceView
from torchlint.analysis.pending import LoopReaches, Pending
from torchlint.analysis.scopes import own_nodes, parents_of

LOOP_PREFIX = "the training loop in "


def loop_candidate_nodes(view: SourceView, owners: Dict[Optional[ast.AST], List[ast.AST]]) -> List[ast.AST]:
    """A rule's candidate nodes (`owners`: grouped by `owned_nodes`) in functions and module
    code, in a file that may hold training code or be called from it."""
    if loop_facts(view) is None:
        return []
    return [
        node
        for owner, nodes in owners.items()
        if owner is None or (isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)) and may_run_per_step(owner.name))
        for node in nodes
    ]


class LoopPass:
    """Mixin for `HotPathRule`: `_loop_pass(module)` at the end of the file pass."""

    _loop_graph: Optional[LoopGraph] = None

    def _parents(self, body) -> Dict:
        """`parents_of(body)`, computed once for the rules of the traversal (TL003 and TL005,
        their class and loop passes) through the context they share."""
        key = ("parents", id(body))
        shared = self.context.shared
        found = shared.get(key)
        if found is None:
            found = shared[key] = parents_of(body)
        return found

    def _file_loops(self) -> Optional[LoopGraph]:
        """The training loops of this file alone (None: it has none worth keeping)."""
        if self._loop_graph is None:
            loops = self.context.record.loops if self.training_loops else None
            if loops:
                self._loop_graph = LoopGraph(
                    {"": loops}, evaluation=bool(self.settings.get("check-evaluation-loops")),
                    periodic=bool(self.settings.get("check-periodic-branches")),
                )
        return self._loop_graph

    def _loop_pass(self, module, reported: Set[int]) -> List[Pending]:
        """Report what hot loops and step functions of this file run; return the
        findings that wait for the project pass."""
        graph = self._file_loops()
        if graph is None:
            return []
        owners = self.context.record.loops.owners
        candidates: List[Pending] = []
        for qualname, node, class_node in cst_owners(module, module_name(self.context.path)):
            owner = owners.get(qualname)
            if owner is None or not may_run_per_step(qualname.rsplit(".", 1)[-1]):
                continue
            body = node if isinstance(node, cst.Module) else node.body
            if not isinstance(body, (cst.Module, cst.IndentedBlock)):
                continue
            self._class_node, self._cpu_state, self._settings = class_node, None, None
            self._function, self._scope = node, None
            where = describe_owner(qualname)
            found = self._method_reports.get(id(node))
            if found is None:
                found = list(self.owner_reports(node, class_node, where))
            # a criterion's loss code is placed with its class (`HotPathRule._place`)
            reports = [pair for pair in found if id(pair[0].node) not in reported and id(pair[0]) not in self.criterion_only]
            if not reports:
                continue
            parents = self._parents(body)
            loops = (cst.For, cst.While)
            loop_index = {id(loop): i for i, loop in enumerate(n for n in own_nodes(body) if type(n) in loops)}
            route = graph.route(qualname)
            for report, lightning_fix in reports:
                enclosing = _enclosing_loops(report.node, parents, loop_index)
                if lightning_fix:
                    report.fix = None  # `self.log` of a hand-written trainer need not take tensors
                if any(graph.hot_loop(qualname, i) for i in enclosing):
                    report.message = report.message.replace(f" in {where} ", f" in {LOOP_PREFIX}{where} ", 1)
                    self.context.reports.append(report)
                elif route is not None:
                    report.message += route.describe()
                    self.context.reports.append(report)
                else:
                    diagnostic = self.context.pending_diagnostic(report)
                    if diagnostic is not None:
                        candidates.append(Pending(diagnostic, LoopReaches(qualname, tuple(sorted(enclosing)), where)))
        return candidates


def _enclosing_loops(node, parents: Mapping, loop_index: Mapping[int, int]) -> Set[int]:
    found: Set[int] = set()
    child, parent = node, parents.get(node)
    while parent is not None:
        index = loop_index.get(id(parent))
        if index is not None and child is not getattr(parent, "iter", None) and child is not getattr(parent, "test", None):
            found.add(index)
        child, parent = parent, parents.get(parent)
    return found


def loop_findings(
    pending: Sequence[Tuple[str, Pending]], graph: LoopGraph, bases: Optional[Callable[[str], List[str]]] = None
) -> List[Diagnostic]:
    """The `LoopReaches` findings (`pending`: (display path, pending) pairs) that a hot
    loop or step function of the tree (`graph`, over every file's loop facts) runs, also
    as the override of a method a base's hot code calls on `self`, or through the calls such an
    override makes (`bases`: a class's bases over the tree; `LoopGraph.reached_route`)."""
    found = []
    for display, item in pending:
        if not isinstance(item.condition, LoopReaches):
            continue
        diagnostic, loop = item.diagnostic, item.condition
        if any(graph.hot_loop(loop.owner, i) for i in loop.enclosing):
            message = diagnostic.message.replace(f" in {loop.where} ", f" in {LOOP_PREFIX}{loop.where} ", 1)
        else:
            route = graph.route(loop.owner) if bases is None else graph.reached_route(loop.owner, bases)
            if route is None:
                continue
            origin_file = graph.files.get(route.origin)
            message = diagnostic.message + route.describe(origin_file if origin_file != display else None)
        found.append(replace(diagnostic, message=message))
    return found
