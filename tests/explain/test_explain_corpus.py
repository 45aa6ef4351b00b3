"""Scores on the real-log corpora (tests/explain/corpus.py): the development part the signatures were
written from and the held-back part no signature was written from, both at 85 % or more with no GPU
claim on a non-GPU log; and the held-out splits of threads the project never cited, which are scored
(`python bench/explain_corpus.py splits`), never tuned on, and must stay uncited while they are live
(not yet marked used)."""

import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from corpus import (
    DEV,
    FRAMEWORK_NAMES,
    HELD_BACK,
    HELD_OUT,
    HELD_OUT_SPLITS,
    NOTHING,
    RIGHT,
    SPLITS,
    WRONG,
    held_out_cases,
    real_cases,
    score,
    split_name,
    split_of,
)

REPO = Path(__file__).resolve().parents[2]
REAL_CASES = real_cases()
HELD_OUT_CASES = {split.name: held_out_cases(split) for split in HELD_OUT_SPLITS}
LIVE_SPLITS = [split for split in HELD_OUT_SPLITS if split.used is None]
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


@pytest.mark.parametrize("split", HELD_OUT_SPLITS, ids=lambda split: split.name)
def test_each_held_out_split_is_large_labelled_and_apart_from_the_rest_and_the_other_splits(split):
    cases = HELD_OUT_CASES[split.name]
    urls = [case.url for case in cases]
    assert len(urls) >= 45 and len(set(urls)) == len(urls)
    elsewhere = [case.url for case in REAL_CASES]
    elsewhere += [case.url for other, others in HELD_OUT_CASES.items() if other != split.name for case in others]
    assert not {_thread(url) for url in urls} & {_thread(url) for url in elsewhere}
    assert sum(not case.gpu for case in cases) >= 5
    assert len({case.framework for case in cases}) >= 5
    assert all(case.truth and case.log.strip() and case.split == split.name for case in cases)


def test_held_out_names_the_newest_split_not_yet_used_and_the_used_ones_say_how():
    assert LIVE_SPLITS and split_name(HELD_OUT) == LIVE_SPLITS[-1].name == HELD_OUT_SPLITS[-1].name
    assert [outcome.case.url for outcome in score(HELD_OUT)] == [case.url for case in HELD_OUT_CASES[LIVE_SPLITS[-1].name]]
    for split in HELD_OUT_SPLITS:
        if split.used is not None:  # a used split keeps its scores from before it was written from
            scores = re.findall(r"\d+\.\d %", split.used)
            readme = (split.folder / "README.md").read_text(encoding="utf-8")
            assert len(scores) >= 2 and all(found in readme for found in scores) and "Used for writing" in readme


def _cited_threads(folders):
    """thread -> the first file of the folders that names it (URL or owner/repo#N). Cost: one read of
    each text file under the folders, linear in their size."""
    named = {}
    for folder in folders:
        for path in sorted((REPO / folder).rglob("*")):
            if path.is_file() and path.suffix in {".py", ".toml", ".json", ".md", ".txt", ".rst", ".log"}:
                text = path.read_text(encoding="utf-8", errors="replace")
                for repo, number in THREAD.findall(text):
                    named.setdefault((repo.lower(), number), str(path.relative_to(REPO)))
    return named


@pytest.mark.parametrize("split", LIVE_SPLITS, ids=lambda split: split.name)
def test_no_live_held_out_thread_is_cited_in_the_knowledge_docs_the_real_corpus_or_another_split(split):
    others = [str(other.folder.relative_to(REPO)) for other in HELD_OUT_SPLITS if other != split]
    named = _cited_threads(["torchlint", "docs", "tests/explain/real"] + others)
    assert {_thread(case.url) for case in REAL_CASES} <= set(named)  # the scan sees every cited thread
    cases = HELD_OUT_CASES[split.name]
    assert not [(case.url, named[_thread(case.url)]) for case in cases if _thread(case.url) in named]


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
