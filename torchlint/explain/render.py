"""Print explain matches as text (rich, colour on a terminal) or JSON."""

from __future__ import annotations

import json
import textwrap
from typing import IO, List

from torchlint.explain.knowledge import KnowledgeBase, Match

NO_MATCH = (
    "No known signature matched this log. If it is a CUDA/cuDNN failure, run `torchlint doctor` "
    "(and `torchlint doctor --smoke` on the GPU machine) to check the environment."
)
NON_TTY_WIDTH = 100


def _reraise_broken_pipe() -> None:
    raise BrokenPipeError


def _rules(match: Match, knowledge: KnowledgeBase) -> List[str]:
    return [f"{code} {knowledge.rule_names.get(code, '')}".strip() for code in match.signature.rules]


def render_text(matches: List[Match], knowledge: KnowledgeBase, stream: IO[str]) -> None:
    """Each match in full, most specific first; or a plain statement that nothing matched."""
    from rich.console import Console

    console = Console(file=stream, highlight=False)
    if not console.is_terminal:
        console = Console(file=stream, highlight=False, width=NON_TTY_WIDTH, no_color=True)
    console.on_broken_pipe = _reraise_broken_pipe  # rich would SystemExit(1); the CLI decides instead
    width = max(60, console.width)

    def say(text: str, style: str = "", indent: int = 0, bullet: str = "") -> None:
        prefix = " " * indent
        lines = textwrap.wrap(text, width=width, initial_indent=prefix + bullet,
                              subsequent_indent=prefix + " " * len(bullet), break_on_hyphens=False) or [""]
        for line in lines:
            console.print(line, style=style or None, markup=False, soft_wrap=True)

    if not matches:
        say(NO_MATCH, "yellow")
        return
    noun = "signature" if len(matches) == 1 else "signatures"
    say(f"Matched {len(matches)} known {noun}, most specific first.", "bold")
    for number, found in enumerate(matches, 1):
        signature = found.signature
        console.print()
        say(f"{number}. {signature.title}  [{signature.id}]", "bold cyan")
        say(f"line {found.line}: {found.excerpt}", "dim", 3)
        say("Root cause", "bold", 3)
        say(signature.root_cause, "", 5)
        if signature.asynchronous and knowledge.asynchronous_note:
            say("Asynchronous error", "bold", 3)
            say(knowledge.asynchronous_note, "", 5)
        say("Try first", "bold", 3)
        for step, text in enumerate(signature.workarounds, 1):
            say(text, "", 5, f"{step}. ")
        if signature.dead_ends:
            say("Dead ends", "bold", 3)
            for text in signature.dead_ends:
                say(text, "", 5, "- ")
        prevented = []
        if signature.rules:
            prevented.append("torchlint check: " + ", ".join(_rules(found, knowledge)))
        if signature.doctor_checks:
            prevented.append("torchlint doctor: " + ", ".join(signature.doctor_checks))
        if prevented:
            say("Prevented by", "bold", 3)
            for text in prevented:
                say(text, "", 5, "- ")
        if signature.docs:
            say(f"Docs: {signature.docs}", "", 3)
        if signature.sources:
            say("Sources", "dim", 3)
            for source in signature.sources:
                say(source, "dim", 5, "- ")


def render_json(matches: List[Match], knowledge: KnowledgeBase) -> str:
    """All matches, most specific first, with every field of their signatures."""
    return json.dumps(
        {
            "matched": bool(matches),
            "hint": None if matches else NO_MATCH,
            "matches": [
                {
                    "id": m.signature.id,
                    "title": m.signature.title,
                    "specificity": m.signature.specificity,
                    "line": m.line,
                    "excerpt": m.excerpt,
                    "root_cause": m.signature.root_cause,
                    "asynchronous": m.signature.asynchronous,
                    "asynchronous_note": knowledge.asynchronous_note if m.signature.asynchronous else None,
                    "workarounds": list(m.signature.workarounds),
                    "dead_ends": list(m.signature.dead_ends),
                    "rules": [{"code": code, "name": knowledge.rule_names.get(code)} for code in m.signature.rules],
                    "doctor_checks": list(m.signature.doctor_checks),
                    "docs": m.signature.docs or None,
                    "sources": list(m.signature.sources),
                }
                for m in matches
            ],
        },
        indent=2,
    )
