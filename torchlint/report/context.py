"""What a reporter needs to know besides the diagnostics themselves."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from torchlint.core.diagnostics import RuleInfo


@dataclass(frozen=True)
class ReportContext:
    """Run-wide facts the formats need: rule metadata, sources, fix settings and results."""

    rules: Mapping[str, RuleInfo]
    root: Path
    color: bool = False
    sources: Mapping[str, str] = field(default_factory=dict)
    show_fixes: bool = False
    unsafe_fixes: bool = False
    fix_mode: bool = False
    fixed: Mapping[str, int] = field(default_factory=dict)
    # filename -> rule code -> fixes applied; lets --show-fixes name the rules.
    fixed_codes: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    tool_version: str = ""

    @property
    def total_fixed(self) -> int:
        """Fixes applied across all files."""
        if self.fixed:
            return sum(self.fixed.values())
        return sum(sum(codes.values()) for codes in self.fixed_codes.values())

    def rule_name(self, code: str) -> str:
        """The rule's kebab-case name, or "" for a code torchlint does not know."""
        info = self.rules.get(code)
        return info.name if info else ""

    def rule_level(self, code: str) -> str:
        """"error" or "warning" (the rule's level; "error" for a code torchlint does not know)."""
        info = self.rules.get(code)
        return info.level if info else "error"

    def rule_url(self, code: str) -> str | None:
        info = self.rules.get(code)
        return info.url if info else None
