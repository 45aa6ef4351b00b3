"""The `--show-fixes` block: what `--fix` changed, per file and rule (ruff's layout)."""

from __future__ import annotations

from typing import Mapping

from torchlint.report import paths
from torchlint.report.context import FixedCounts, ReportContext
from torchlint.report.styled import Line


def total_fixed(fixed: Mapping[str, FixedCounts]) -> int:
    """Number of fixes applied across all files."""
    return sum(count if isinstance(count, int) else sum(count.values()) for count in fixed.values())


def fix_summary_lines(ctx: ReportContext) -> list[Line]:
    """The block (with a blank line before and after), or nothing when it is not wanted."""
    total = total_fixed(ctx.fixed)
    if not ctx.show_fixes or total == 0:
        return []
    per_file = {
        name: {"": counts} if isinstance(counts, int) else counts
        for name, counts in ctx.fixed.items()
    }
    per_file = {name: counts for name, counts in per_file.items() if sum(counts.values())}
    width = len(str(max(max(c.values()) for c in per_file.values())))
    plural = "" if total == 1 else "s"
    lines: list[Line] = [[], [(f"Fixed {total} finding{plural}:", "bold green")]]
    for filename in sorted(per_file):
        lines.append([("-", "cyan"), (" ", ""), (paths.for_humans(filename), "bold"), (":", "cyan")])
        by_count = sorted(per_file[filename].items(), key=lambda item: (-item[1], item[0]))
        for code, count in by_count:
            if not count:
                continue
            line: Line = [(f"    {count:>{width}} × ", "")]
            if code:
                line += [(code, "bold red"), (f" ({ctx.rule_name(code)})", "")]
            else:
                line.append(("fixes" if count != 1 else "fix", ""))
            lines.append(line)
    lines.append([])
    return lines
