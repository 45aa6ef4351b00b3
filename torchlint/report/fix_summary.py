"""The `--show-fixes` block: what `--fix` changed, per file and rule (ruff's layout)."""

from __future__ import annotations

from typing import Mapping

from torchlint.core import paths
from torchlint.report.context import ReportContext
from torchlint.report.styled import Line


def _per_file(ctx: ReportContext) -> dict[str, Mapping[str, int]]:
    """filename -> code -> count; code "" when only a file's total is known."""
    files = set(ctx.fixed) | set(ctx.fixed_codes)
    per_file = {
        name: ctx.fixed_codes.get(name) or {"": ctx.fixed.get(name, 0)} for name in files
    }
    return {name: counts for name, counts in per_file.items() if sum(counts.values())}


def fix_summary_lines(ctx: ReportContext) -> list[Line]:
    """The block (with a blank line before and after), or nothing when it is not wanted."""
    total = ctx.total_fixed
    if not ctx.show_fixes or total == 0:
        return []
    per_file = _per_file(ctx)
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
