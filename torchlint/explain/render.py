"""Print explain matches as text (rich, colour on a terminal) or JSON."""

from __future__ import annotations

import json
import textwrap
from typing import IO, List, Tuple

from torchlint.explain.evidence import Clue, Evidence
from torchlint.explain.explanation import Explanation
from torchlint.explain.guard_advice import guard_line
from torchlint.explain.knowledge import KnowledgeBase, Match
from torchlint.explain.reasoning import Diagnosis
from torchlint.core.visible import visible

NO_MATCH = (
    "No known signature matched this log. If it is a CUDA/cuDNN failure, run `torchlint doctor` "
    "(and `torchlint doctor --smoke` on the GPU machine) to check the environment."
)
NON_TTY_WIDTH = 100
# Dead ends that hold for pip wheels only: with conda, the `cudatoolkit` package is torch's CUDA
# runtime, so reinstalling it is a real fix there.
PIP_ONLY = "(pip wheels)"
CONDA_NOTE = ("This is a conda install: its `cudatoolkit` (or `pytorch-cuda`) package is torch's CUDA runtime, "
              "so reinstalling or changing it, matched to the torch build, is a real fix here.")


def _clue_text(clue: Clue) -> str:
    return f"{clue.value} (line {clue.line}: {clue.excerpt})"


def _dead_ends(explanation: Explanation, match: Match, knowledge: KnowledgeBase) -> List[str]:
    evidence = explanation.evidence
    return [text for text in match.signature.dead_ends
            if not (evidence.conda and PIP_ONLY in text) and knowledge.fits(text, evidence.features)]


def _cause_lines(explanation: Explanation, found: Match) -> List[Tuple[str, str]]:
    """(cause text, the evidence features that support it) for each candidate cause, most supported first."""
    features = explanation.evidence.features
    return [(cause.text, ", ".join(sorted(set(cause.when) & features))) for cause in explanation.causes(found)]


def _workarounds(explanation: Explanation, found: Match, knowledge: KnowledgeBase) -> List[str]:
    """The leading cause's own advice and that of every cause the log supports, then the signature's,
    without the advice for another framework than the log's."""
    features = explanation.evidence.features
    causes = explanation.causes(found)
    chosen = [cause for index, cause in enumerate(causes) if index == 0 or set(cause.when) & features]
    advice = [text for cause in chosen for text in cause.workarounds] + list(found.signature.workarounds)
    return [text for text in advice if knowledge.fits(text, features)]


def _docs(explanation: Explanation, found: Match, knowledge: KnowledgeBase) -> str:
    docs = found.signature.docs
    return docs if docs and knowledge.fits(docs, explanation.evidence.features) else ""


def _diagnosis_advice(explanation: Explanation, diagnosis: Diagnosis, knowledge: KnowledgeBase) -> str:
    """The diagnosis' advice, or "" where it names another framework than the log's (torch's wheels)."""
    return diagnosis.advice if knowledge.fits(diagnosis.advice, explanation.evidence.features) else ""


def _reraise_broken_pipe() -> None:
    raise BrokenPipeError


def _rules(match: Match, knowledge: KnowledgeBase) -> List[str]:
    return [f"{code} {knowledge.rule_names.get(code, '')}".strip() for code in match.signature.rules]


def render_text(explanation: Explanation, knowledge: KnowledgeBase, stream: IO[str]) -> None:
    """The diagnoses and their evidence, then each match in full, most specific first."""
    matches = explanation.matches
    from rich.console import Console

    console = Console(file=stream, highlight=False)
    if not console.is_terminal:
        console = Console(file=stream, highlight=False, width=NON_TTY_WIDTH, no_color=True)
    console.on_broken_pipe = _reraise_broken_pipe  # rich would SystemExit(1); the CLI decides instead
    width = max(60, console.width)

    def say(text: str, style: str = "", indent: int = 0, bullet: str = "") -> None:
        prefix = " " * indent
        lines = textwrap.wrap(visible(text), width=width, initial_indent=prefix + bullet,
                              subsequent_indent=prefix + " " * len(bullet), break_on_hyphens=False) or [""]
        for line in lines:
            console.print(line, style=style or None, markup=False, soft_wrap=True)

    if not matches:
        say(NO_MATCH, "yellow")
        return
    if explanation.diagnoses:
        say("Diagnosis from the evidence in this log", "bold")
        for diagnosis in explanation.diagnoses:
            say(diagnosis.cause, "bold red", 2, "- ")
            say(_diagnosis_advice(explanation, diagnosis, knowledge), "", 4)
            for clue in diagnosis.clues:
                say(_clue_text(clue), "dim", 4, "evidence: ")
        console.print()
    noun = "signature" if len(matches) == 1 else "signatures"
    say(f"Matched {len(matches)} known {noun}, most specific first.", "bold")
    if explanation.evidence.conda:
        say(CONDA_NOTE, "", 0)
    for number, found in enumerate(matches, 1):
        signature = found.signature
        console.print()
        say(f"{number}. {signature.title}  [{signature.id}]", "bold cyan")
        say(f"line {found.line}: {found.excerpt}", "dim", 3)
        say("Root cause", "bold", 3)
        say(signature.root_cause, "", 5)
        causes = _cause_lines(explanation, found)
        if causes:
            say("Likely causes, the one this log supports most first", "bold", 3)
            for text, support in causes:
                say(text + (f" (the log shows: {support})" if support else ""), "", 5, "- ")
        if signature.asynchronous and knowledge.asynchronous_note:
            say("Asynchronous error", "bold", 3)
            say(knowledge.asynchronous_note, "", 5)
        say("Try first", "bold", 3)
        for step, text in enumerate(_workarounds(explanation, found, knowledge), 1):
            say(text, "", 5, f"{step}. ")
        dead_ends = _dead_ends(explanation, found, knowledge)
        if dead_ends:
            say("Dead ends", "bold", 3)
            for text in dead_ends:
                say(text, "", 5, "- ")
        prevented = []
        if signature.rules:
            prevented.append("torchlint check: " + ", ".join(_rules(found, knowledge)))
        if signature.doctor_checks:
            prevented.append("torchlint doctor: " + ", ".join(signature.doctor_checks))
        if guard_line(signature.id):
            prevented.append(guard_line(signature.id))
        if prevented:
            say("Prevented by", "bold", 3)
            for text in prevented:
                say(text, "", 5, "- ")
        docs = _docs(explanation, found, knowledge)
        if docs:
            say(f"Docs: {docs}", "", 3)
        if signature.sources:
            say("Sources", "dim", 3)
            for source in signature.sources:
                say(source, "dim", 5, "- ")


def render_json(explanation: Explanation, knowledge: KnowledgeBase) -> str:
    """Diagnoses, evidence, and all matches (most specific first) with every field of their signatures."""
    matches = explanation.matches
    return json.dumps(
        {
            "matched": bool(matches),
            "top": explanation.top,
            "gpu_claim": explanation.gpu_claim,
            "hint": None if matches else NO_MATCH,
            "diagnoses": [
                {"kind": d.kind, "cause": d.cause, "advice": _diagnosis_advice(explanation, d, knowledge),
                 "evidence": [{"fact": c.fact, "value": c.value, "line": c.line, "excerpt": c.excerpt}
                              for c in d.clues]}
                for d in explanation.diagnoses
            ],
            "evidence": [{"fact": c.fact, "value": c.value, "line": c.line, "excerpt": c.excerpt}
                         for c in explanation.evidence.used(*{c.fact for c in explanation.evidence.clues})],
            "conda": explanation.evidence.conda,
            "features": sorted(explanation.evidence.features),
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
                    "causes": [{"id": cause.id, "text": cause.text,
                                "supported_by": sorted(set(cause.when) & explanation.evidence.features)}
                               for cause in explanation.causes(m)],
                    "workarounds": _workarounds(explanation, m, knowledge),
                    "dead_ends": _dead_ends(explanation, m, knowledge),
                    "rules": [{"code": code, "name": knowledge.rule_names.get(code)} for code in m.signature.rules],
                    "doctor_checks": list(m.signature.doctor_checks),
                    "guard": guard_line(m.signature.id),
                    "docs": _docs(explanation, m, knowledge) or None,
                    "sources": list(m.signature.sources),
                }
                for m in matches
            ],
        },
        indent=2,
    )
