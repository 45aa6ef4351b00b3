"""The project pass's view of the linted tree: every file's record, decoded once, and
what is built from all of them once per pass (the class graph, hot-path reach,
training loops, instance flow).

Cost: each index is built once per pass, linear in the records (see each index's own
cost)."""

from __future__ import annotations

from functools import cached_property
from typing import Dict, List, Mapping, Tuple

from torchlint.analysis.hot_paths import Reach
from torchlint.analysis.flow_graph import InstanceFlow
from torchlint.analysis.modules import ClassIndex
from torchlint.analysis.loop_graph import LoopGraph
from torchlint.index.record import FileRecord


class ProjectIndex:
    """`records`: display path -> the file's record, in the run's file order."""

    def __init__(self, records: Mapping[str, FileRecord]) -> None:
        self.records = records
        self._loops: Dict[Tuple[bool, bool], LoopGraph] = {}
        self._reach: Dict[bool, Reach] = {}

    @cached_property
    def classes(self) -> ClassIndex:
        """The one class graph of the pass: every class of every file, and the packages'
        re-exports the instance flow recorded."""
        return ClassIndex((facts for record in self.records.values() for facts in record.classes), self.flow.exports)

    def reach(self, periodic: bool = False) -> Reach:
        """What hot paths reach over the tree's classes (`periodic`: also through the calls a
        method makes only now and then)."""
        if periodic not in self._reach:
            calls: Dict[str, Mapping[str, List[str]]] = {}
            skipped: Dict[str, Mapping[str, List[str]]] = {}
            for record in self.records.values():
                for name, methods in record.self_calls.items():
                    calls.setdefault(name, methods)
                for name, methods in record.periodic_self_calls.items():
                    skipped.setdefault(name, methods)
            self._reach[periodic] = Reach(self.classes, calls, skipped=None if periodic else skipped)
        return self._reach[periodic]

    def loops(self, evaluation: bool, periodic: bool = False) -> LoopGraph:
        """Training loops and step functions of the tree (`evaluation`: evaluation loops too;
        `periodic`: the calls made only now and then too)."""
        key = (evaluation, periodic)
        if key not in self._loops:
            facts = {display: record.loops for display, record in self.records.items()}
            self._loops[key] = LoopGraph(facts, evaluation, self.reach().bases, periodic)
        return self._loops[key]

    @cached_property
    def flow(self) -> InstanceFlow:
        return InstanceFlow({display: record.flow for display, record in self.records.items() if record.flow is not None})
