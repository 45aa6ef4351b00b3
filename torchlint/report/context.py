"""What a reporter needs to know besides the diagnostics themselves."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Union

from torchlint.ftypes import RuleInfo

# Per file: either a plain count of applied fixes, or counts by rule code.
FixedCounts = Union[int, Mapping[str, int]]


@dataclass(frozen=True)
class ReportContext:
    rules: Mapping[str, RuleInfo]
    root: Path
    color: bool = False
    sources: Mapping[str, str] = field(default_factory=dict)
    show_fixes: bool = False
    unsafe_fixes: bool = False
    fix_mode: bool = False
    fixed: Mapping[str, FixedCounts] = field(default_factory=dict)
    tool_version: str = ""

    def rule_name(self, code: str) -> str:
        """The rule's kebab-case name, or "" for a code torchlint does not know."""
        info = self.rules.get(code)
        return info.name if info else ""

    def rule_url(self, code: str) -> str | None:
        info = self.rules.get(code)
        return info.url if info else None
