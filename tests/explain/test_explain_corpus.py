"""Scores on the real-log corpus (tests/explain/corpus.py): the development part the signatures were
written from, and the held-back part no signature was written from. Both must stay at 85 % or more,
and no non-GPU log may get a GPU claim. `python bench/explain_corpus.py held-back --table` prints the rows."""

from collections import Counter

import pytest

from corpus import DEV, HELD_BACK, cases, score, split_of

CASES = cases()


def test_the_corpus_is_large_varied_and_split_by_url():
    assert len(CASES) >= 150 and len({case.url for case in CASES}) == len(CASES)
    assert sum(not case.gpu for case in CASES) >= 15
    counts = Counter(case.split for case in CASES)
    assert counts[HELD_BACK] >= 60
    new = [case for case in CASES if not case.id.startswith("prior:")]
    assert len(new) >= 140 and all(case.split == split_of(case.url) for case in new)


@pytest.mark.parametrize("split", [DEV, HELD_BACK])
def test_at_least_85_percent_of_each_split_is_explained_and_non_gpu_logs_get_no_gpu_claim(split):
    outcomes = score(split)
    missed = [(o.case.id, o.case.expect, o.got) for o in outcomes if not o.passed]
    assert sum(o.passed for o in outcomes) / len(outcomes) >= 0.85, missed
    assert all(o.passed for o in outcomes if not o.case.gpu), missed
