"""Scores on the real-log corpora (tests/explain/corpus.py): the development part the signatures were
written from and the held-back part no signature was written from, both at 85 % or more with no GPU
claim on a non-GPU log; and the held-out logs of threads the project never cites, which are scored
(`python bench/explain_corpus.py splits`), never tuned on, and must stay uncited."""

import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from corpus import (
    DEV,
    FRAMEWORK_NAMES,
    HELD_BACK,
    NOTHING,
    RIGHT,
    SPLITS,
    WRONG,
    held_out_cases,
    real_cases,
    score,
    split_of,
)

REPO = Path(__file__).resolve().parents[2]
REAL_CASES = real_cases()
HELD_OUT_CASES = held_out_cases()
# a thread named by URL (github.com/owner/repo/issues/N, /pull/N) or as owner/repo#N
THREAD = re.compile(r"([\w.-]+/[\w.-]+)(?:/(?:issues|pull|discussions)/|#)(\d+)")


@pytest.fixture(scope="module")
def outcomes():
    return {split: score(split) for split in SPLITS}


def _thread(url):
    found = THREAD.search(url.split("github.com/", 1)[-1])
    return found.group(1).lower(), found.group(2)


def test_the_corpus_is_large_varied_and_split_by_url():
    assert len(REAL_CASES) >= 150 and len({case.url for case in REAL_CASES}) == len(REAL_CASES)
    assert sum(not case.gpu for case in REAL_CASES) >= 15
    counts = Counter(case.split for case in REAL_CASES)
    assert counts[HELD_BACK] >= 60
    new = [case for case in REAL_CASES if not case.id.startswith("prior:")]
    assert len(new) >= 140 and all(case.split == split_of(case.url) for case in new)


@pytest.mark.parametrize("split", [DEV, HELD_BACK])
def test_at_least_85_percent_of_each_split_is_explained_and_non_gpu_logs_get_no_gpu_claim(split, outcomes):
    scored = outcomes[split]
    missed = [(o.case.id, o.case.expect, o.got) for o in scored if not o.passed]
    assert sum(o.passed for o in scored) / len(scored) >= 0.85, missed
    assert all(o.passed for o in scored if not o.case.gpu), missed


def test_the_held_out_split_is_large_labelled_and_apart_from_the_rest():
    urls = [case.url for case in HELD_OUT_CASES]
    assert len(urls) >= 50 and len(set(urls)) == len(urls)
    assert not {_thread(url) for url in urls} & {_thread(case.url) for case in REAL_CASES}
    assert sum(not case.gpu for case in HELD_OUT_CASES) >= 5
    assert len({case.framework for case in HELD_OUT_CASES}) >= 5
    assert all(case.truth and case.log.strip() for case in HELD_OUT_CASES)


def test_no_held_out_thread_is_cited_in_the_knowledge_docs_or_the_real_corpus():
    named = {}  # thread -> the first file that names it
    for folder in ("torchlint", "docs", "tests/explain/real"):
        for path in sorted((REPO / folder).rglob("*")):
            if path.is_file() and path.suffix in {".py", ".toml", ".json", ".md", ".txt", ".rst", ".log"}:
                text = path.read_text(encoding="utf-8", errors="replace")
                for repo, number in THREAD.findall(text):
                    named.setdefault((repo.lower(), number), str(path.relative_to(REPO)))
    assert {_thread(case.url) for case in REAL_CASES} <= set(named)  # the scan sees every cited thread
    assert not [(case.url, named[_thread(case.url)]) for case in HELD_OUT_CASES if _thread(case.url) in named]


def test_the_scorer_cannot_pass_a_wrong_label(outcomes):
    scored = [o for split in SPLITS for o in outcomes[split]]
    labels = sorted({o.case.expect for o in scored if o.case.expect})
    checked = 0
    for o in scored:
        if o.verdict != RIGHT or not o.case.gpu:
            continue
        answers = [o.got] + list(o.shown)
        wrong = next(label for label in labels if not any(re.search(label, answer) for answer in answers))
        assert replace(o, case=replace(o.case, expect=wrong, partial=None)).verdict == WRONG
        if o.gpu_claim:  # the same log labelled "not a GPU problem"
            relabelled = replace(o, case=replace(o.case, expect=None))
            assert relabelled.verdict == WRONG and "GPU claim on a non-GPU log" in relabelled.over_claims
        checked += 1
    assert checked >= 100
    unanswered = next(o for o in scored if o.case.gpu and o.got is None)
    assert unanswered.verdict == NOTHING


def test_advice_for_another_framework_is_an_over_claim(outcomes):
    scored = [o for split in SPLITS for o in outcomes[split]]
    torch_advice = [o for o in scored if any({name for name, pattern in FRAMEWORK_NAMES.items() if pattern.search(text)}
                                             == {"torch"} for text in o.advice)]
    assert len(torch_advice) >= 10
    for o in torch_advice:
        assert "torch advice" in replace(o, case=replace(o.case, framework="jax")).over_claims
        assert "torch advice" not in replace(o, case=replace(o.case, framework="torch")).over_claims
        assert "torch advice" not in replace(o, case=replace(o.case, framework="none")).over_claims
