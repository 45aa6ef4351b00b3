"""The real-log corpus of explain (tests/explain/real/) and how an answer is scored.

corpus.toml holds the logs collected for issue 24, split by a hash of their URL before any
signature was written from them; issue_logs.json holds the earlier logs the signatures were
first written from, which are development logs by construction.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from torchlint.explain.explanation import Explanation, explain

REAL = Path(__file__).resolve().parent / "real"
DEV, HELD_BACK = "dev", "held-back"


@dataclass(frozen=True)
class Case:
    id: str
    url: str
    split: str
    truth: str
    log: str
    expect: Optional[str]  # regex on Explanation.top; None for a non-GPU log

    @property
    def gpu(self) -> bool:
        return self.expect is not None


@dataclass(frozen=True)
class Outcome:
    case: Case
    got: Optional[str]
    gpu_claim: bool

    @property
    def passed(self) -> bool:
        if not self.case.gpu:
            return not self.gpu_claim
        return self.got is not None and re.search(self.case.expect or "", self.got) is not None


def split_of(url: str) -> str:
    """The split a log belongs to, fixed by its URL alone."""
    return HELD_BACK if hashlib.sha256(url.encode()).digest()[0] % 2 else DEV


def cases() -> List[Case]:
    found = [Case(entry["id"], entry["url"], entry["split"], entry["truth"], entry["log"], entry.get("expect"))
             for entry in tomllib.loads((REAL / "corpus.toml").read_text(encoding="utf-8"))["log"]]
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
    return Outcome(case, explanation.top, explanation.gpu_claim)


def score(split: str) -> List[Outcome]:
    return [outcome(case) for case in cases() if case.split == split]
