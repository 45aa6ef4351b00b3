"""The project's import-time imports between its own files, from every file's record:
which heavy modules a file goes on importing, through the project modules it imports."""

from __future__ import annotations

from typing import Dict, Iterator, List, Mapping, Set

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

    def staying_beyond(self, display: str) -> Set[str]:
        """The heavy modules that stay imported, at import time, by the project modules
        this file imports at import time, directly or through others."""
        staying: Set[str] = set()
        seen = {display}
        stack = list(self._imported(display))
        while stack:
            other = stack.pop()
            if other in seen:
                continue
            seen.add(other)
            staying.update(self._records[other].staying_imports)
            stack.extend(self._imported(other))
        return staying

    def _imported(self, display: str) -> Iterator[str]:
        module, package = self._files[display]
        for imported in self._records[display].imported_modules:
            target = absolute_import(module, package, imported) if imported.startswith(".") else imported
            if not target:
                continue
            for other in self._by_last.get(target.rsplit(".", 1)[-1], ()):
                if suffix_matches(self._files[other][0], target):
                    yield other
