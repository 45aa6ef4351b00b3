"""Hit rate on real logs quoted from public issues (tests/explain/real/issue_logs.json).

A log is explained when the first diagnosis or the first matched signature names the cause
its thread established. Non-GPU logs must get no match and no diagnosis at all.
"""

import json
from pathlib import Path

from torchlint.explain.evidence import extract
from torchlint.explain.knowledge import load_knowledge, match
from torchlint.explain.reasoning import diagnose

CASES = json.loads((Path(__file__).resolve().parent / "real" / "issue_logs.json").read_text(encoding="utf-8"))
KNOWLEDGE = load_knowledge()


def _answer(log):
    matches = match(log, KNOWLEDGE)
    diagnoses = diagnose(extract(log, [m.offset for m in matches]), matches)
    return [f"diag:{d.kind}" for d in diagnoses][:1] + [m.signature.id for m in matches][:1]


def test_at_least_85_percent_of_real_gpu_logs_are_explained_by_their_true_cause():
    explained = [case["url"] for case in CASES["gpu"] if set(_answer(case["log"])) & set(case["expected"])]
    missed = sorted({case["url"] for case in CASES["gpu"]} - set(explained))
    assert len(CASES["gpu"]) >= 30
    assert len(explained) / len(CASES["gpu"]) >= 0.85, missed


def test_real_non_gpu_logs_get_no_claim():
    claims = {case["url"]: _answer(case["log"]) for case in CASES["non_gpu"]}
    assert len(claims) >= 6
    assert all(answer == [] for answer in claims.values()), claims
