"""What the analysis layer derives from one file and several readers share, each part
computed at most once: `SourceView.analysis`.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Dict, Optional, Sequence, Set

from torchlint.analysis.class_graph import ClassGraph, ClassGraphBuilder
from torchlint.analysis.instance_flow import FlowBuilder, bound_flow, top_level_names
from torchlint.analysis.scopes import AST_SCOPES, ScopeTable
from torchlint.analysis.training_loops import build_loop_facts


class FileAnalysis:
    """The shared analysis of one file (its `SourceView`)."""

    def __init__(self, view) -> None:
        self.view = view
        # the criterion calls found while building `loop_facts`, not yet resolved: the
        # first reader that can resolve instances takes them (`training_loops.loop_facts`)
        self.pending_criteria: Sequence = ()

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
    def bound_flow(self) -> FlowBuilder:
        return bound_flow(self.view)

    @cached_property
    def loop_facts(self) -> Optional[Dict[str, Any]]:
        facts, self.pending_criteria = build_loop_facts(self.view)
        return facts
