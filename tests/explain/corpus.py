"""The real-log corpora of explain and how an answer is scored.

real/corpus.toml holds the logs collected for issue 24, split by a hash of their URL before any
signature was written from them; real/issue_logs.json holds the earlier logs the signatures were
first written from, which are development logs by construction. The held-out splits (heldout/ to
heldout6/, ...) hold logs from threads the project never cited when they were collected for issue 33;
each is scored, never written from, until it is marked used (HeldOutSplit.used), and "held-out" names
the newest split not yet used.

An answer is right (the expected family leads), partial (a neighbouring family leads, or the
expected one is shown but not first), wrong (another answer leads) or nothing (no answer). It
over-claims when it gives advice or a docs link for another framework than the log's (or than the one
the log's library runs on: torch for vLLM), or makes a GPU claim on a log that is not a GPU problem.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from torchlint.explain.explanation import Explanation, explain
from torchlint.explain.knowledge import load_knowledge
from torchlint.explain.render import render_json

HERE = Path(__file__).resolve().parent
REAL = HERE / "real"
DEV, HELD_BACK = "dev", "held-back"
HELD_OUT = "held-out"  # an alias: the newest held-out split not yet used to write knowledge


@dataclass(frozen=True)
class HeldOutSplit:
    name: str
    folder: Path
    used: Optional[str] = None  # how it was used to write knowledge, with its scores; None while live


HELD_OUT_SPLITS = (
    HeldOutSplit("held-out-1", HERE / "heldout", "used to write knowledge after its first score: "
                 "55.8 % at collection, 69.2 % after the error-code knowledge"),
    HeldOutSplit("held-out-2", HERE / "heldout2", "used to write knowledge after its scores: "
                 "79.2 % at collection, 83.3 % after the framework-evidence work"),
    HeldOutSplit("held-out-3", HERE / "heldout3", "used to write knowledge after its first score: "
                 "44.4 % at collection, 84.4 % after the families written from the sources' own messages"),
    HeldOutSplit("held-out-4", HERE / "heldout4", "used to write knowledge after its first score: "
                 "69.6 % at collection, 84.8 % after the families of commit afda084"),
    HeldOutSplit("held-out-5", HERE / "heldout5", "used to write knowledge after its first score: "
                 "43.5 % at collection, 73.9 % after the families of commit 5f4fffc"),
    HeldOutSplit("held-out-6", HERE / "heldout6", "used to write knowledge after its first score: "
                 "67.4 % at collection, 91.3 % after the families of commit 2292fa4"),
    HeldOutSplit("held-out-7", HERE / "heldout7", "used to write knowledge after its first score: "
                 "67.4 % at collection, 95.7 % after the families of commit 0fd0975"),
    HeldOutSplit("held-out-8", HERE / "heldout8", "used to write knowledge after its first score: "
                 "67.4 % at collection, 97.8 % after the families of commit e1a2cd1"),
    HeldOutSplit("held-out-9", HERE / "heldout9", "used to write knowledge after its first score: "
                 "69.6 % at collection, 97.8 % after the families of commit fdd5224"),
    HeldOutSplit("held-out-10", HERE / "heldout10", "used to write knowledge after its first score: "
                 "69.6 % at collection, 100.0 % after the families of commit b233b33"),
    HeldOutSplit("held-out-11", HERE / "heldout11", "used to write knowledge after its first score: "
                 "60.9 % at collection, 97.8 % after the families of commit 50753bb"),
    HeldOutSplit("held-out-12", HERE / "heldout12", "used to write knowledge after its first score: "
                 "71.7 % at collection, 95.7 % after the families of commit 019b8a3"),
    HeldOutSplit("held-out-13", HERE / "heldout13", "used to write knowledge after its first score: "
                 "87.0 % at collection, 95.7 % after the families of commit 276aa12"),
    HeldOutSplit("held-out-14", HERE / "heldout14", "used to write knowledge after its first score: "
                 "76.1 % at collection, 95.7 % after the families of commit 1bd5c8a"),
    HeldOutSplit("held-out-15", HERE / "heldout15", "used to write knowledge after its first score: "
                 "73.9 % at collection, 87.0 % after the families of commit 22a7fb6"),
    HeldOutSplit("held-out-16", HERE / "heldout16", "used to write knowledge after its first score: "
                 "71.7 % at collection, 91.3 % after the families of commit 330ff8f"),
    HeldOutSplit("held-out-17", HERE / "heldout17", "used to write knowledge after its first score: "
                 "63.0 % at collection, 93.5 % after the families of commit c351b5b"),
    HeldOutSplit("held-out-18", HERE / "heldout18", "used to write knowledge after its first score: "
                 "65.2 % at collection, 84.8 % after the families of commit b65f241"),
    HeldOutSplit("held-out-19", HERE / "heldout19", "used to write knowledge after its first score: "
                 "78.3 % at collection, 89.1 % after the families of commit 3bfa6f2"),
    HeldOutSplit("held-out-20", HERE / "heldout20", "used to write knowledge after its first score: "
                 "71.7 % at collection, 80.4 % after the families of commit 15da269"),
    HeldOutSplit("held-out-21", HERE / "heldout21", "used to write knowledge after its first score: "
                 "71.7 % at collection, 80.4 % after the families of commit c44de72"),
    HeldOutSplit("held-out-22", HERE / "heldout22", "used to write knowledge after its first score: "
                 "79.2 % at collection, 91.7 % after the families of commit ecc5f3d"),
    HeldOutSplit("held-out-23", HERE / "heldout23", "used to write knowledge after its first score: "
                 "68.8 % at collection, 87.5 % after the families of commit bc096c8"),
    HeldOutSplit("held-out-24", HERE / "heldout24", "used to write knowledge after its first score: "
                 "75.0 % at collection, 87.5 % after the families of commit 9a2569e"),
    HeldOutSplit("held-out-25", HERE / "heldout25", "used to write knowledge after its first score: "
                 "93.8 % at collection (4 logs over-claiming), 93.8 % after commit e25d3bb (2 over-claiming)"),
    HeldOutSplit("held-out-26", HERE / "heldout26", "used to write knowledge after its first score: "
                 "81.2 % at collection, 93.8 % after commit 0c89856"),
    HeldOutSplit("held-out-27", HERE / "heldout27", "used to write knowledge after its first score: "
                 "91.7 % at collection (1 log over-claiming), 95.8 % after commit bd8f6d5 (1 over-claiming)"),
    HeldOutSplit("held-out-28", HERE / "heldout28", "used to write knowledge after its first score: "
                 "77.1 % at collection (1 log over-claiming), 87.5 % after commit c627470 (0 over-claiming)"),
    HeldOutSplit("held-out-29", HERE / "heldout29", "used to write knowledge after its first score: "
                 "87.5 % at collection (2 logs over-claiming), 89.6 % after c627470 (written from held-out-28), "
                 "93.8 % after commit 1a47641 (2 over-claiming)"),
    HeldOutSplit("held-out-30", HERE / "heldout30", "used to write knowledge after its first score: "
                 "85.4 % at collection (2 logs over-claiming), 85.4 % after 1a47641 (written from held-out-29), "
                 "87.5 % after commit 84bfc7f (1 over-claiming)"),
    HeldOutSplit("held-out-31", HERE / "heldout31", "used to write knowledge after its first score: "
                 "91.5 % at collection (2 logs over-claiming), 91.5 % after commit 76e4d15 (1 over-claiming)"),
    HeldOutSplit("held-out-32", HERE / "heldout32", "used to write knowledge after its first score: "
                 "75.0 % at collection (0 logs over-claiming), 79.2 % after commit a68e82e (0 over-claiming)"),
    HeldOutSplit("held-out-33", HERE / "heldout33", "used to write knowledge after its first score: "
                 "75.0 % at collection (1 log over-claiming), 81.2 % after commit 125946b (1 over-claiming)"),
    HeldOutSplit("held-out-34", HERE / "heldout34", "used to write knowledge after its first score: "
                 "91.8 % at collection (0 logs over-claiming), 93.9 % after commit d29fbfb (0 over-claiming)"),
    HeldOutSplit("held-out-35", HERE / "heldout35", "used to write knowledge after its first score: "
                 "73.2 % at collection (0 logs over-claiming), 78.6 % after commit 56f5580 (0 over-claiming)"),
    HeldOutSplit("held-out-36", HERE / "heldout36", "used to write knowledge after its first score: "
                 "85.5 % at collection (1 log over-claiming), 92.7 % after commit d7786ac (0 over-claiming)"),
    HeldOutSplit("held-out-37", HERE / "heldout37", "used to write knowledge after its first score: "
                 "82.1 % at collection (1 log over-claiming), 85.7 % after commit c798826 (1 over-claiming)"),
    HeldOutSplit("held-out-38", HERE / "heldout38", "used to write knowledge after its first score: "
                 "83.9 % at collection (0 logs over-claiming), 87.5 % after commit 0a7a9fb (0 over-claiming)"),
    HeldOutSplit("held-out-39", HERE / "heldout39", "used to write knowledge after its first score: "
                 "83.6 % at collection (0 logs over-claiming), 92.7 % after commit 5b8947c (0 over-claiming)"),
    HeldOutSplit("held-out-40", HERE / "heldout40", "used to write knowledge after its first score: "
                 "82.1 % at collection (0 logs over-claiming), 89.3 % after commit 772287c (0 over-claiming)"),
    HeldOutSplit("held-out-41", HERE / "heldout41"),
)
SPLITS = (DEV, HELD_BACK) + tuple(split.name for split in HELD_OUT_SPLITS)
RIGHT, PARTIAL, WRONG, NOTHING = "right", "partial", "wrong", "nothing"
VERDICTS = (RIGHT, PARTIAL, WRONG, NOTHING)
# How a piece of advice or a docs link names a framework. Written here, not taken from the
# knowledge base's [[framework]] table, so that the scorer does not share the blind spots of the
# code it scores.
FRAMEWORK_NAMES: Dict[str, "re.Pattern[str]"] = {
    "torch": re.compile(r"\btorch\b|PyTorch|pytorch\.org|\bTORCH_"),
    "tensorflow": re.compile(r"(?i:tensorflow)|\btf\.[a-z]|\bkeras\b"),
    "jax": re.compile(r"\bJAX\b|\bjax(?:lib)?\b|XLA_PYTHON_CLIENT|docs\.jax\.dev|jax\.readthedocs"),
    "onnxruntime": re.compile(r"ONNX Runtime|onnxruntime"),
    "ctranslate2": re.compile(r"(?i:ctranslate2)|faster-whisper|opennmt\.net"),
}
NO_FRAMEWORK = "none"  # a log no framework printed (nvidia-smi): no advice is another framework's
# Libraries whose process is a framework's: advice for that framework fits their logs (vLLM and SGLang run on torch).
RUNS_ON = {"vllm": "torch", "sglang": "torch"}


@dataclass(frozen=True)
class Case:
    id: str
    url: str
    split: str
    truth: str
    log: str
    expect: Optional[str]  # regex on Explanation.top; None for a non-GPU log
    framework: Optional[str] = None  # the framework that printed the log, where it is labelled
    partial: Optional[str] = None  # regex on Explanation.top for a neighbouring family

    @property
    def gpu(self) -> bool:
        return self.expect is not None


@dataclass(frozen=True)
class Outcome:
    case: Case
    got: Optional[str]
    gpu_claim: bool
    shown: Tuple[str, ...] = ()  # every other answer the explanation shows, in its order
    advice: Tuple[str, ...] = ()  # every piece of advice and docs link it shows

    @property
    def verdict(self) -> str:
        if not self.case.gpu:
            return WRONG if self.gpu_claim else RIGHT
        if self.got is None:
            return NOTHING
        if re.search(self.case.expect or "", self.got):
            return RIGHT
        neighbour = self.case.partial is not None and re.search(self.case.partial, self.got)
        if neighbour or any(re.search(self.case.expect or "", other) for other in self.shown):
            return PARTIAL
        return WRONG

    @property
    def passed(self) -> bool:
        return self.verdict == RIGHT

    @property
    def over_claims(self) -> List[str]:
        """What the explanation claims beyond the log: a GPU claim on a non-GPU log, and each
        framework other than the log's that its advice or docs links name."""
        claims = ["GPU claim on a non-GPU log"] if not self.case.gpu and self.gpu_claim else []
        if self.case.framework in (None, NO_FRAMEWORK):
            return claims
        others = set()
        fitting = {self.case.framework, RUNS_ON.get(self.case.framework)}
        for text in self.advice:
            named = {name for name, pattern in FRAMEWORK_NAMES.items() if pattern.search(text)}
            if named and not named & fitting:
                others |= named
        return claims + [f"{name} advice" for name in sorted(others)]


def split_of(url: str) -> str:
    """The split a log belongs to, fixed by its URL alone."""
    return HELD_BACK if hashlib.sha256(url.encode()).digest()[0] % 2 else DEV


def _logs(corpus: Path) -> List[dict]:
    return tomllib.loads(corpus.read_text(encoding="utf-8"))["log"]


def live_held_out() -> HeldOutSplit:
    """The split "held-out" names: the newest one not yet used to write knowledge."""
    return [split for split in HELD_OUT_SPLITS if split.used is None][-1]


def split_name(split: str) -> str:
    return live_held_out().name if split == HELD_OUT else split


def held_out_cases(split: HeldOutSplit) -> List[Case]:
    """The logs of one held-out split (its README.md has the rule)."""
    return [Case(entry["id"], entry["url"], split.name, entry["truth"], entry["log"], entry.get("expect"),
                 entry["framework"], entry.get("partial"))
            for entry in _logs(split.folder / "corpus.toml")]


def cases() -> List[Case]:
    """Every log of every split: the real corpus, the earlier issue logs, the held-out logs."""
    return real_cases() + [case for split in HELD_OUT_SPLITS for case in held_out_cases(split)]


def real_cases() -> List[Case]:
    found = [Case(entry["id"], entry["url"], entry["split"], entry["truth"], entry["log"], entry.get("expect"))
             for entry in _logs(REAL / "corpus.toml")]
    prior = json.loads((REAL / "issue_logs.json").read_text(encoding="utf-8"))
    for kind in ("gpu", "non_gpu"):
        for entry in prior[kind]:
            if kind == "gpu" and not entry["expected"]:
                continue  # no signature names this thread's cause
            expect = ("^(?:" + "|".join(map(re.escape, entry["expected"])) + ")(?:/|$)") if kind == "gpu" else None
            found.append(Case("prior:" + entry["url"].split("github.com/")[-1], entry["url"], DEV, entry["truth"],
                              entry["log"], expect))
    return found


def outcome(case: Case) -> Outcome:
    explanation: Explanation = explain(case.log)
    shown = [f"diag:{diagnosis.kind}" for diagnosis in explanation.diagnoses]
    for found in explanation.matches:
        shown += [found.signature.id] + [f"{found.signature.id}/{cause.id}" for cause in explanation.causes(found)]
    rendered = json.loads(render_json(explanation, load_knowledge()))
    advice = [diagnosis["advice"] for diagnosis in rendered["diagnoses"]]
    for found in rendered["matches"]:
        advice += found["workarounds"] + found["dead_ends"] + ([found["docs"]] if found["docs"] else [])
    return Outcome(case, explanation.top, explanation.gpu_claim,
                   tuple(answer for answer in shown if answer != explanation.top), tuple(advice))


def score(split: str) -> List[Outcome]:
    """The outcomes of one split; "held-out" scores the live held-out split."""
    name = split_name(split)
    return [outcome(case) for case in cases() if case.split == name]
