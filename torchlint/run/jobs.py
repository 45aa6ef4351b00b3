"""What a run is asked to do and what it gives back: the run's settings, a job (one file to lint), each file's outcome,
and the rules that apply to a path."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pathspec

from torchlint.core.config import Config
from torchlint.core.diagnostics import Diagnostic
from torchlint.rule_api.registry import all_rules
from torchlint.core.source import DecodeError, SourceFile, decode_source
from torchlint.fixing.write import Snapshot
from torchlint.index.record_text import RecordText
from torchlint.run.notebook import Layout, Notebook, is_notebook


@dataclass(frozen=True)
class RunSettings:
    config: Config
    codes: Tuple[str, ...]
    mode: str = "check"  # check | fix | diff
    unsafe: bool = False
    use_cache: bool = True
    keep_sources: bool = False


@dataclass
class FileOutcome:
    display: str
    diagnostics: List[Diagnostic] = field(default_factory=list)
    record: RecordText = field(default_factory=RecordText)  # what the project pass reads of the file
    errors: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)  # fixes refused (the guard, a file changed): their findings stay
    applied: Counter = field(default_factory=Counter)
    diff: Optional[str] = None
    original: Optional[SourceFile] = None
    fixed_text: Optional[str] = None
    linted: Optional[Snapshot] = None  # the bytes fixed: the file must still hold them when written
    source: Optional[str] = None
    undecoded: Optional[bytes] = None  # the bytes of `source`, decoded only if a finding needs the text
    cached: bool = False
    notebook: Optional[Notebook] = None  # the file is a notebook: its source is the cells' module
    layout: Optional[Layout] = None  # where the notebook's cells are in the (fixed) module
    unread_notebook: Optional[bytes] = None  # a cached notebook, read only if a finding needs its cells
    key: Optional[str] = None  # the cache key of the bytes read (`cache.entry_key`)


@dataclass
class RunResult:
    outcomes: List[FileOutcome]
    diagnostics: List[Diagnostic]

    @property
    def errors(self) -> List[str]:
        return [error for outcome in self.outcomes for error in outcome.errors]

    @property
    def warnings(self) -> List[str]:
        return [warning for outcome in self.outcomes for warning in outcome.warnings]

    @property
    def applied(self) -> Dict[str, Counter]:
        return {o.display: o.applied for o in self.outcomes if o.applied}

    def sources(self) -> Dict[str, str]:
        """The text kept of each file with findings, by `Diagnostic.source_name` (a
        notebook: each cell)."""
        found: Dict[str, str] = {}
        reported = {diagnostic.filename for diagnostic in self.diagnostics}
        for outcome in self.outcomes:
            if outcome.undecoded is not None and outcome.display in reported:
                try:
                    outcome.source = decode_source(outcome.undecoded).text
                except DecodeError:
                    pass
                outcome.undecoded = None
            if outcome.source is None:
                continue
            if outcome.notebook is not None:
                found.update(outcome.notebook.cell_sources(outcome.display, outcome.source, outcome.layout))
            else:
                found[outcome.display] = outcome.source
        return found


@lru_cache(maxsize=None)
def _pattern(pattern: str) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines([pattern])


def rules_for(display: str, settings: RunSettings) -> List[type]:
    """The selected rules minus those `per-file-ignores` turns off for this path."""
    notebook = is_notebook(display)
    rules = [r for r in all_rules() if r.code in settings.codes and (r.applies_to_notebooks or not notebook)]
    ignored = set()
    relative = relative_path(display, settings.config) if settings.config.per_file_ignores else display
    for pattern, codes in settings.config.per_file_ignores:
        if _pattern(pattern).match_file(relative):
            ignored.update(codes)
    if ignored:
        rules = [r for r in rules if not any(r.code.startswith(code) for code in ignored)]
    return rules


def relative_path(display: str, config: Config) -> str:
    """The file's path relative to the project root (absolute outside it): what
    `per-file-ignores` match, the cache is keyed by and the file is linted under (its findings,
    records and module names), so that all of them are the same whatever the working directory."""
    # string operations: pathlib costs more than the warm run's cache lookup itself
    absolute = os.path.abspath(display)
    root = os.path.join(str(config.root), "")
    relative = absolute[len(root):] if absolute.startswith(root) else absolute
    return relative.replace(os.sep, "/")


Job = Tuple[str, Optional[Path], Optional[bytes]]
