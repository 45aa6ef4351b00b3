"""Whether a fix would be applied under the current settings (ruff's rules)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from torchlint.fixing.apply import is_applicable
from torchlint.core.diagnostics import Applicability, Diagnostic


@dataclass(frozen=True)
class FixableCounts:
    applicable: int
    hidden_unsafe: int


def count_fixable(diagnostics: Sequence[Diagnostic], unsafe_fixes: bool) -> FixableCounts:
    """Count the fixes `--fix` would apply, and the unsafe ones it would skip."""
    applicable = hidden = 0
    for diagnostic in diagnostics:
        if is_applicable(diagnostic.fix, unsafe_fixes):
            applicable += 1
        elif diagnostic.fix is not None and diagnostic.fix.applicability is Applicability.UNSAFE:
            hidden += 1
    return FixableCounts(applicable, hidden)


def show_fix_marker(diagnostics: Sequence[Diagnostic], unsafe_fixes: bool, fix_mode: bool) -> bool:
    """Whether `[*]` markers are shown at all.

    After `--fix` ran, a fix that is still pending could not be applied, so
    advertising it would mislead (ruff hides the markers in that case too).
    """
    if fix_mode:
        return False
    return any(is_applicable(d.fix, unsafe_fixes) for d in diagnostics)
