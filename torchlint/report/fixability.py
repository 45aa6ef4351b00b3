"""Whether a fix would be applied under the current settings (ruff's rules)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from torchlint.ftypes import Applicability, Diagnostic, Fix


def fix_applies(fix: Optional[Fix], unsafe_fixes: bool) -> bool:
    """True when `--fix` would apply `fix`: safe fixes always, unsafe ones only if enabled."""
    if fix is None:
        return False
    if fix.applicability is Applicability.SAFE:
        return True
    return unsafe_fixes and fix.applicability is Applicability.UNSAFE


@dataclass(frozen=True)
class FixableCounts:
    applicable: int
    hidden_unsafe: int


def count_fixable(diagnostics: Sequence[Diagnostic], unsafe_fixes: bool) -> FixableCounts:
    """Count the fixes `--fix` would apply, and the unsafe ones it would skip."""
    applicable = hidden = 0
    for diagnostic in diagnostics:
        if fix_applies(diagnostic.fix, unsafe_fixes):
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
    return any(fix_applies(d.fix, unsafe_fixes) for d in diagnostics)
