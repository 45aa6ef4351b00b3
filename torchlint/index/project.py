"""The project pass's view of the linted tree: every file's record, decoded once, and
what is built from all of them once per pass (the class graph, hot-path reach,
training loops, instance flow).

Cost: each index is built once per pass, linear in the records (see each index's own
cost)."""

from __future__ import annotations

from functools import cached_property
from typing import Dict, List, Mapping

from torchlint.analysis.hot_paths import Reach
from torchlint.analysis.flow_graph import InstanceFlow
from torchlint.analysis.modules import ClassIndex
from torchlint.analysis.loop_graph import LoopGraph
from torchlint.index.record import FileRecord


class ProjectIndex:
    """`records`: display path -> the file's record, in the run's file order."""

    def __init__(self, records: Mapping[str, FileRecord]) -> None:
        self.records = records
        self._loops: Dict[bool, LoopGraph] = {}

    @cached_property
    def classes(self) -> ClassIndex:
        """The one class graph of the pass: every class of every file, and the packages'
        re-exports the instance flow recorded."""
        return ClassIndex((facts for record in self.records.values() for facts in record.classes), self.flow.exports)

    @cached_property
    def reach(self) -> Reach:
        calls: Dict[str, Mapping[str, List[str]]] = {}
        for record in self.records.values():
            for name, methods in record.self_calls.items():
                calls.setdefault(name, methods)
        return Reach(self.classes, calls)

    def loops(self, evaluation: bool) -> LoopGraph:
        """Training loops and step functions of the tree (`evaluation`: evaluation loops too)."""
        if evaluation not in self._loops:
            facts = {display: record.loops for display, record in self.records.items()}
            self._loops[evaluation] = LoopGraph(facts, evaluation, self.reach.bases)
        return self._loops[evaluation]

    @cached_property
    def flow(self) -> InstanceFlow:
        return InstanceFlow({display: record.flow for display, record in self.records.items() if record.flow is not None})
