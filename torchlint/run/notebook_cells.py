"""Notebooks in a run's results: the cached notebooks a finding needs read, and findings mapped to cell positions."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, List, Sequence

from torchlint.core.diagnostics import Diagnostic
from torchlint.run.notebook_json import NotebookError
from torchlint.run.per_file import attach_notebook

if TYPE_CHECKING:
    from torchlint.run.jobs import FileOutcome, RunSettings


def read_cached_notebooks(
    outcomes: Sequence[FileOutcome], project: Sequence[Diagnostic], settings: RunSettings
) -> None:
    """Read the cached notebooks that a finding is in or names rows of; a warm run parses
    no other notebook."""
    unread = [o for o in outcomes if o.unread_notebook is not None]
    if not unread:
        return
    diagnostics = [d for outcome in outcomes for d in outcome.diagnostics] + list(project)
    in_files = {d.filename for d in diagnostics}
    for outcome in unread:
        data, outcome.unread_notebook = outcome.unread_notebook, None
        if outcome.notebook is not None:  # a project fix read it already
            continue
        if outcome.display in in_files or any(outcome.display in d.message for d in diagnostics):
            try:
                attach_notebook(outcome, data, settings)
            except NotebookError:  # its cached finding says why
                pass


def with_cell_positions(outcomes: Sequence[FileOutcome], project: List[Diagnostic]) -> List[Diagnostic]:
    """Notebook findings (each outcome's and the project pass's) with cell positions."""
    notebooks = {outcome.display: outcome for outcome in outcomes if outcome.layout is not None}

    def in_cells(outcome: FileOutcome, diagnostic: Diagnostic) -> Diagnostic:
        text = outcome.fixed_text if outcome.fixed_text is not None else outcome.notebook.text
        return outcome.notebook.in_cells(diagnostic, text, outcome.layout)

    def rows_named(diagnostic: Diagnostic) -> Diagnostic:
        message = diagnostic.message
        for display, outcome in notebooks.items():
            text = outcome.fixed_text if outcome.fixed_text is not None else outcome.notebook.text
            message = outcome.notebook.name_rows(message, display, text, outcome.layout)
        return diagnostic if message == diagnostic.message else replace(diagnostic, message=message)

    for outcome in outcomes:
        if outcome.display in notebooks:
            outcome.diagnostics = [in_cells(outcome, d) for d in outcome.diagnostics]
        if notebooks:
            outcome.diagnostics = [rows_named(d) for d in outcome.diagnostics]
    project = [in_cells(notebooks[d.filename], d) if d.filename in notebooks else d for d in project]
    return [rows_named(d) for d in project] if notebooks else project
