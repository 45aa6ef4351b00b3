"""The literal prefilter of explain's feature patterns (torchlint/explain/needles.py) never skips a
search that would have matched: checked on the patterns' own shapes, on every real log the
project holds, and on the letters beyond ASCII that case-insensitive patterns take for ASCII."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest

from torchlint.explain.evidence import _FEATURE_NEEDLES, FEATURES
from torchlint.explain.needles import _TO_ASCII, fold, may_match, needles

EXPLAIN_TESTS = Path(__file__).resolve().parent


@pytest.mark.parametrize("pattern, expected", [
    (r"docker(?:file)?\b", {"docker"}),
    (r"\b(?:xgboost|XGBoost(?:Error)?|gpu_hist)\b", {"xgboost", "gpu_hist"}),
    (r"(?:cudnn|CUDNN)_STATUS_\w+", {"_status_"}),
    (r"a+bcd", {"bcd"}),
    (r"(?:abc){2,}x", {"abc"}),
    (r"(?i:Cannot Load) \w+", {"cannot load"}),
    (r"\d+ GiB", {" gib"}),
])
def test_the_needles_are_what_every_match_holds(pattern, expected):
    assert needles(re.compile(pattern)) == expected


@pytest.mark.parametrize("pattern", [r"\w+", r"(?:abc)?x{0,3}", r"ab|\d", r"[Ff]oo", r"ab"])
def test_a_pattern_that_can_match_without_a_long_literal_has_no_needles(pattern):
    assert needles(re.compile(pattern)) is None


def test_case_insensitive_letters_beyond_ascii_are_folded_as_re_matches_them():
    # every code point re.IGNORECASE takes for an ASCII letter: its simple lower case is one, or
    # it is one of re's extra cases of an ASCII letter
    from re import _casefix
    import _sre

    to_ascii = {cp for cp in range(128, sys.maxunicode + 1) if _sre.unicode_tolower(cp) < 128}
    to_ascii |= {cp for letter, extra in _casefix._EXTRA_CASES.items() if letter < 128 for cp in extra}
    assert to_ascii == set(_TO_ASCII)
    pattern = re.compile(r"(?i:disk) full")
    text = "DİSK full, \u212aelvin"
    assert pattern.search(text) and may_match(fold(text), needles(pattern))


def _real_logs():
    for path in sorted((EXPLAIN_TESTS / "samples").glob("*.log")):
        yield path.read_text(encoding="utf-8", errors="replace")
    for path in sorted(EXPLAIN_TESTS.glob("*/corpus.toml")):
        for log in tomllib.loads(path.read_text(encoding="utf-8")).get("log", []):
            yield log["log"]


def test_no_feature_that_matches_a_real_log_is_skipped():
    logs = [(text, fold(text)) for text in _real_logs()]
    assert len(logs) > 1000
    skipped = [
        name for name, pattern in FEATURES for text, folded in logs
        if pattern.search(text) and not may_match(folded, _FEATURE_NEEDLES[name])
    ]
    assert skipped == []
