"""Fix mode after the per-file pass: project-level fixes to a fixpoint, then each fixed file written (or diffed), or
its findings restored when it cannot be."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from torchlint.core.diagnostics import Diagnostic
from torchlint.engine import lint_text
from torchlint.core.bounded_read import ReadRefused
from torchlint.core.source import DecodeError, decode_source, read_source
from torchlint.fixing.apply import (
    apply_checked,
    dropped_message,
    is_applicable,
    parses,
    unified_diff,
)
from torchlint.fixing.write import ChangedDuringRun, Snapshot, write_fixed
from torchlint.index.record_text import RecordText
from torchlint.run.notebook import is_notebook, read_notebook
from torchlint.run.notebook_json import NotebookError
from torchlint.run.jobs import rules_for
from torchlint.run.per_file import fixed_to_fixpoint
from torchlint.run.project import project_pass

if TYPE_CHECKING:
    from torchlint.run.jobs import FileOutcome, RunSettings


def fixed_bytes(outcome: FileOutcome) -> bytes:
    """The fixed file as it is to be written: the encoding, BOM and newlines it had; a
    notebook with only its changed cells' sources replaced."""
    if outcome.layout is not None:
        return outcome.notebook.encode(outcome.fixed_text, outcome.layout)
    return outcome.original.encode(outcome.fixed_text)


MAX_PROJECT_ROUNDS = 5


def fix_project(
    outcomes: Sequence[FileOutcome], diagnostics: List[Diagnostic], settings: RunSettings
) -> List[Diagnostic]:
    """Project-level fixes to a fixpoint, as per-file fixes are: a file a project fix
    changed is fixed and linted again, its record renewed, and the project pass rerun,
    until no project fix applies (bounded). Two fixes that overlap (both insert
    `import torch` at the top) are thus applied in turn, and a second --fix finds
    nothing left."""
    for _ in range(MAX_PROJECT_ROUNDS):
        diagnostics, changed = apply_project_fixes(outcomes, diagnostics, settings)
        if not changed:
            break
        for outcome in changed:
            _refix(outcome, settings)
        diagnostics = project_pass(outcomes, settings)
    return diagnostics


def _refix(outcome: FileOutcome, settings: RunSettings) -> None:
    """Fix and lint a file's fixed text again after a project-level fix changed it."""
    rules = rules_for(outcome.display, settings)
    newline = outcome.original.newline
    fixed = fixed_to_fixpoint(outcome.fixed_text, outcome.display, rules, newline, settings, outcome.layout)
    outcome.diagnostics = list(fixed.result.diagnostics)
    outcome.record = RecordText.of(fixed.result.facts)
    outcome.errors.extend(e for e in fixed.result.errors if e not in outcome.errors)
    outcome.warnings.extend(w for w in fixed.dropped if w not in outcome.warnings)
    outcome.fixed_text = fixed.text
    outcome.applied.update(fixed.applied)
    if outcome.source is not None:
        outcome.source = fixed.text


def apply_project_fixes(
    outcomes: Sequence[FileOutcome], diagnostics: List[Diagnostic], settings: RunSettings
) -> Tuple[List[Diagnostic], List[FileOutcome]]:
    """Apply the fixes of project-level findings to their files' (already fixed) text;
    return the findings that remain and the outcomes whose text changed."""
    by_file: Dict[str, List[Diagnostic]] = {}
    for diagnostic in diagnostics:
        if is_applicable(diagnostic.fix, settings.unsafe):
            by_file.setdefault(diagnostic.filename, []).append(diagnostic)
    remaining = [d for d in diagnostics if not any(d in group for group in by_file.values())]
    outcomes_by_name = {outcome.display: outcome for outcome in outcomes}
    changed: List[FileOutcome] = []
    for filename, group in by_file.items():
        outcome = outcomes_by_name.get(filename)
        if outcome is None or not _load_original(outcome):
            remaining.extend(group)
            continue
        if outcome.layout is not None:
            remaining.extend(d for d in group if not outcome.layout.admits(outcome.fixed_text, d.fix))
            group = [d for d in group if outcome.layout.admits(outcome.fixed_text, d.fix)]
        checked = apply_checked(outcome.fixed_text, [(d.code, d.fix) for d in group])
        if checked.indices and not parses(checked.text):
            outcome.warnings.append(f"{filename}: a project-level fix produced code that does not parse; not applied")
            remaining.extend(group)
            continue
        outcome.warnings.extend(dropped_message(group[index], problem) for index, problem in checked.dropped)
        if checked.indices:
            changed.append(outcome)
        outcome.fixed_text = checked.text
        if outcome.layout is not None:
            outcome.layout.moved(checked.spans)
        outcome.applied.update(checked.applied)
        remaining.extend(d for index, d in enumerate(group) if index not in checked.indices)
    return remaining, changed


def _load_original(outcome: FileOutcome) -> bool:
    if outcome.fixed_text is not None:
        return True
    try:
        data = read_source(Path(outcome.display))
        if is_notebook(outcome.display):
            outcome.original = read_notebook(data)
            outcome.notebook, outcome.layout = outcome.original, outcome.original.layout.copy()
        else:
            outcome.original = decode_source(data)
    except (OSError, ReadRefused, DecodeError, NotebookError):
        return False
    outcome.linted = Snapshot.of(data)
    outcome.fixed_text = outcome.original.text
    return True


def finish_fix(outcome: FileOutcome, path: Optional[Path], settings: RunSettings) -> bool:
    """Write the fixed text (`torchlint.fixing.write`: only over the bytes that were linted), or
    keep its diff (`--diff`), or keep it for stdout. False if the file changed since it
    was read, so the fixes were not written: the guard doing its job, not an error."""
    if outcome.original is None or not outcome.applied:
        return True
    if settings.mode == "diff":
        if outcome.layout is not None:
            outcome.diff = outcome.notebook.diff(outcome.display, outcome.fixed_text, outcome.layout)
        else:
            outcome.diff = unified_diff(outcome.display, outcome.original.text, outcome.fixed_text)
        return True
    if path is None:
        return True
    try:
        write_fixed(path, fixed_bytes(outcome), outcome.linted)
    except ChangedDuringRun:
        message = "changed during the run, so its fixes were not written; its findings stay"
        outcome.warnings.append(f"{outcome.display}: {message}")
        return False
    except (OSError, NotebookError) as error:
        outcome.errors.append(f"{outcome.display}: cannot write the fixed file: {error}")
        outcome.applied = Counter()
    return True


def restore_unfixed(outcome: FileOutcome, settings: RunSettings) -> None:
    """A file whose fixes were not written: its findings (and record) are those of the text
    that was read, as a run without --fix reports them."""
    rules = rules_for(outcome.display, settings)
    if outcome.notebook is not None:
        outcome.layout = outcome.notebook.layout.copy()
    result = lint_text(outcome.original.text, outcome.display, settings.config, rules, newline=outcome.original.newline)
    outcome.diagnostics = list(result.diagnostics)
    outcome.record = RecordText.of(result.facts)
    outcome.fixed_text = outcome.original.text
    outcome.applied = Counter()
    if outcome.source is not None:
        outcome.source = outcome.original.text
