"""What the analysis layer derives from one file and several readers share, each part
computed at most once: `SourceView.analysis`.

Cost: each part is computed at most once per file (cached properties); each analysis
states its own cost.
"""

from __future__ import annotations

import weakref
from functools import cached_property
import ast
from typing import Callable, Dict, FrozenSet, Optional, Sequence, Set, Tuple

from torchlint.analysis.class_graph import ClassGraph, ClassGraphBuilder
from torchlint.analysis.flow_facts import FlowFacts
from torchlint.analysis.instance_flow import FlowBuilder, bound_flow, build_instance_flow, top_level_names
from torchlint.analysis.periodic_calls import periodic_blocks, periodic_call_ids
from torchlint.analysis.scopes import AST_SCOPES, ScopeTable, owned_nodes
from torchlint.analysis.loop_facts import LoopFacts
from torchlint.analysis.criterion_calls import CriterionCalls, with_criteria
from torchlint.analysis.training_loops import build_loop_facts


class FileAnalysis:
    """The shared analysis of one file (its `SourceView`, which holds it)."""

    def __init__(self, view) -> None:
        # a proxy, here and in what the builders keep of it: a view and its analysis are then
        # freed by reference counting, not left to the cyclic garbage collector
        self.view = weakref.proxy(view)
        self._periodic_sites: Dict[int, FrozenSet[int]] = {}  # `periodic_sites`' answers, by owner

    @cached_property
    def scope_table(self) -> ScopeTable:
        """The file's defs, lambdas and classes, to place nodes by position."""
        return ScopeTable(self.view.nodes_of(*AST_SCOPES))

    @cached_property
    def class_graph(self) -> ClassGraph:
        return ClassGraphBuilder(self.view).build()

    @cached_property
    def top_level_names(self) -> Set[str]:
        return top_level_names(self.view.tree)

    @cached_property
    def instance_flow(self) -> Optional[FlowFacts]:
        return build_instance_flow(self.view)

    @cached_property
    def bound_flow(self) -> FlowBuilder:
        return bound_flow(self.view)

    @cached_property
    def _loops_and_criterion_calls(self) -> Tuple[Optional[LoopFacts], Sequence[CriterionCalls]]:
        return build_loop_facts(self.view)

    @property
    def loop_facts(self) -> Optional[LoopFacts]:
        """The training-loop facts without criteria (`training_loops.loop_facts`)."""
        return self._loops_and_criterion_calls[0]

    @cached_property
    def loop_facts_with_criteria(self) -> Optional[LoopFacts]:
        """The training-loop facts with criteria, what their calls' instances hold told by
        the file's instance flow (`bound_flow`)."""
        return with_criteria(*self._loops_and_criterion_calls, self.bound_flow.bound_sources)

    @cached_property
    def _periodic_owners(self) -> Set[int]:
        """The ids of the defs whose own code holds an `if` with a block taken now and then or only in
        evaluation (`periodic_calls.periodic_blocks`, read without unit divisors: more blocks, never fewer),
        and the tree's for the module's own code. Cost: one test of each `if` of the file."""
        branches = [branch for branch in self.view.nodes_of(ast.If) if periodic_blocks(branch)]
        return {id(self.view.tree if owner is None else owner) for owner in owned_nodes(self.view, branches)}

    def periodic_sites(
        self, owner: Optional[ast.AST], body: Sequence[ast.stmt], trains: Callable[[ast.Call], bool],
        unit_divisors: FrozenSet[str],
    ) -> FrozenSet[int]:
        """`periodic_calls.periodic_call_ids` of a def's (`owner`; None: the module's own code) statements,
        found once per def for its readers (the class graph, the loop facts), and only for the defs that hold
        such an `if` (`_periodic_owners`): the others have none. Cost: O(1) for those, else the def's walk."""
        key = id(self.view.tree if owner is None else owner)
        if key not in self._periodic_owners:
            return frozenset()
        found = self._periodic_sites.get(key)
        if found is None:
            found = self._periodic_sites[key] = periodic_call_ids(body, trains, unit_divisors)
        return found
