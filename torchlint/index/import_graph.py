"""The project's import-time imports between its own files, from every file's record:
which heavy modules a file goes on importing, through the project modules it imports.

Cost: O(files + imports) for the whole project pass (each file's imports resolved once,
by the last part of the module name; components found once), plus the size of each
answer."""

from __future__ import annotations

from collections import Counter
from typing import Dict, Iterator, List, Mapping, NamedTuple, Set

from torchlint.analysis.module_names import absolute_import, is_package, module_name, suffix_matches
from torchlint.index.record import FileRecord


class ImportGraph:
    """Module-level imports between the files of `records` (display path -> record)."""

    def __init__(self, records: Mapping[str, FileRecord]) -> None:
        self._records = records
        self._files = {display: (module_name(display), is_package(display)) for display in records}
        self._by_last: Dict[str, List[str]] = {}
        for display, (module, _) in self._files.items():
            self._by_last.setdefault(module.rsplit(".", 1)[-1], []).append(display)
        self._imports: Dict[str, List[str]] = {}  # a file's project imports, resolved once
        self._index: Dict[str, int] = {}  # Tarjan's visiting order, over every search
        self._component: Dict[str, "_Component"] = {}

    def staying_beyond(self, display: str) -> Set[str]:
        """The heavy modules that stay imported, at import time, by the project modules
        this file imports at import time, directly or through others (the file itself
        counts only as imported by another: a cycle through it does not add its own).

        Cost: each file's imports are resolved and its strongly connected component
        (Tarjan's, iterative, started from the files asked) found once; a component knows
        what the components it imports keep; an answer then costs the size of the set."""
        if display not in self._component:
            self._components_from(display)
        component = self._component[display]
        counts = component.counts
        own = self._records[display].staying_imports
        staying = set(component.below)
        staying.update(module for module, count in counts.items() if count - (module in own) > 0)
        return staying

    def _components_from(self, root: str) -> None:
        """Tarjan's algorithm from `root` over the files not yet in a component."""
        index: Dict[str, int] = self._index
        low: Dict[str, int] = {}
        stack: List[str] = []
        on_stack: Set[str] = set()

        def enter(node: str) -> None:
            index[node] = low[node] = len(index)
            stack.append(node)
            on_stack.add(node)
            work.append((node, iter(self._edges(node))))

        work: List[tuple] = []
        enter(root)
        while work:
            node, edges = work[-1]
            for other in edges:
                if other not in index:
                    enter(other)
                    break
                if other in on_stack:
                    low[node] = min(low[node], index[other])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    members = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        members.append(member)
                        if member == node:
                            break
                    self._close(members)

    def _close(self, members: List[str]) -> None:
        """A finished component: the modules its members keep (how many members keep
        each) and, `below`, everything the components it imports keep (all finished)."""
        component = _Component(Counter(), set())
        inside = set(members)
        for member in members:
            component.counts.update(set(self._records[member].staying_imports))
            for other in self._edges(member):
                if other not in inside:
                    below = self._component[other]
                    component.below.update(below.below)
                    component.below.update(below.counts)
        for member in members:
            self._component[member] = component

    def _edges(self, display: str) -> List[str]:
        edges = self._imports.get(display)
        if edges is None:
            edges = self._imports[display] = list(self._imported(display))
        return edges

    def _imported(self, display: str) -> Iterator[str]:
        module, package = self._files[display]
        for imported in self._records[display].imported_modules:
            target = absolute_import(module, package, imported) if imported.startswith(".") else imported
            if not target:
                continue
            for other in self._by_last.get(target.rsplit(".", 1)[-1], ()):
                if suffix_matches(self._files[other][0], target):
                    yield other


class _Component(NamedTuple):
    """Files that import each other (a strongly connected component of the graph)."""

    counts: Counter  # heavy module -> how many of the component's files keep it
    below: Set[str]  # what the components it imports keep, through any depth
