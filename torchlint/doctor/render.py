"""Turn doctor results into a rich table, plain text, or one JSON object."""

from __future__ import annotations

import json
import textwrap
from dataclasses import replace
from typing import IO, List, Optional

from torchlint import __version__
from torchlint.doctor.facts import Facts
from torchlint.doctor.results import FAIL, NOT_JUDGED, PASS, SKIP, WARN, CheckResult, count, failed, verdict
from torchlint.core.visible import visible

STYLES = {PASS: "green", WARN: "yellow", FAIL: "bold red", SKIP: "dim"}
NON_TTY_WIDTH = 120


def _reraise_broken_pipe() -> None:
    raise BrokenPipeError


def render_rich(results: List[CheckResult], stream: IO[str]) -> None:
    """The table, the details of failures, and the verdict; colour only on a terminal."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from torchlint.report.wrap import columns, wrap

    console = Console(file=stream, highlight=False, soft_wrap=False)
    if not console.is_terminal:  # piped: COLUMNS if set, else a width that keeps rows whole
        console = Console(file=stream, highlight=False, width=columns(NON_TTY_WIDTH), no_color=True)
    console.on_broken_pipe = _reraise_broken_pipe  # rich would SystemExit(1); the CLI decides instead
    # Advice holds commands and URLs that must stay copyable: it goes below the table,
    # wrapped at spaces but never inside a `command` or a URL, not folded into a narrow column.
    table = Table(show_lines=False, header_style="bold", expand=True)
    table.add_column("check", no_wrap=True, min_width=len("check"))
    table.add_column("status", no_wrap=True, min_width=len("status"))
    table.add_column("found", overflow="fold", ratio=3, min_width=len("found"))
    table.add_column("expected", overflow="fold", ratio=2, min_width=len("expected"))
    results = [_visible(result) for result in results]
    for result in results:
        style = STYLES.get(result.status, "")
        # cells are rich markup: text from --facts must not be read as tags
        table.add_row(escape(result.name), f"[{style}]{result.status}[/]" if style else result.status,
                      escape(result.found), escape(result.expected), style="dim" if result.status == SKIP else None)
    console.print(table)
    advised = [f"{r.name} ({r.status}): {r.advice}" for r in results if r.advice and r.status in (FAIL, WARN)]
    for advice in dict.fromkeys(advised):
        for line in wrap(advice, console.width, subsequent_indent="  "):
            console.print(line, markup=False, soft_wrap=True)
    not_judged = [result.name for result in results if result.found.startswith(NOT_JUDGED)]
    if not_judged:
        note = f"Not judged (the evidence does not say): {', '.join(dict.fromkeys(not_judged))}"
        for line in wrap(note, console.width, subsequent_indent="  "):
            console.print(line, markup=False, soft_wrap=True)
    style = "bold red" if failed(results) else ("yellow" if count(results)[WARN] else "bold green")
    console.print(f"[{style}]{verdict(results)}[/]")


def render_plain(results: List[CheckResult], width: int = 100) -> str:
    """A plain-text table (no colour, no rich): the message of `EnvironmentMismatch`."""
    results = [_visible(result) for result in results]
    name_width = max([len(r.name) for r in results] + [5])
    found_width = min(max([len(r.found) for r in results] + [5]), 40)
    lines = [f"{'status':<6}  {'check':<{name_width}}  {'found':<{found_width}}  expected"]
    for result in results:
        found = result.found if len(result.found) <= found_width else result.found[: found_width - 1] + "…"
        status = result.status.upper()
        lines.append(f"{status:<6}  {result.name:<{name_width}}  {found:<{found_width}}  {result.expected}")
        if result.advice and result.status in (FAIL, WARN):
            indent = " " * (8 + name_width + 2)
            lines.extend(textwrap.wrap(result.advice, width=max(width, len(indent) + 30),
                                       initial_indent=indent, subsequent_indent=indent))
        if result.detail and result.status == FAIL:
            lines.append(textwrap.indent(result.detail.rstrip(), " " * 8))
    lines.append(verdict(results))
    return "\n".join(lines)


def _visible(result: CheckResult) -> CheckResult:
    """The result with its text fit for a terminal: facts may come from a pasted `--facts`."""
    return replace(result, **{name: visible(value) for name, value in vars(result).items() if isinstance(value, str)})


def render_json(facts: Optional[Facts], results: List[CheckResult]) -> str:
    """Facts and results in one object, for CI."""
    return json.dumps(
        {
            "torchlint": __version__,
            "facts": facts.to_dict() if facts is not None else None,
            "results": [result.to_dict() for result in results],
            "summary": count(results),
            "verdict": verdict(results),
            "failed": failed(results),
        },
        indent=2,
    )
