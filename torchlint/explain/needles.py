"""The literals a regular expression cannot match without: a test far cheaper than its search.

`needles(pattern)` reads the pattern with the stdlib's own parser and returns lower-case ASCII
strings, at least one of which occurs in `fold(text)` of any text the pattern matches, or None
when no such set can be said (a pattern that can match without a literal of `SHORTEST`
characters or more). A search whose needles are all absent from the folded text is skipped: on
megabytes of a paste, `in` over a handful of needles costs a fraction of a regex search that
starts at every position. Cost: linear in the pattern's parse tree; `fold` linear in the text.
"""

from __future__ import annotations

import re
from typing import FrozenSet, List, Optional, Sequence, Tuple

try:  # Python 3.11 and newer
    from re import _constants as constants, _parser as parser
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_constants as constants  # type: ignore[no-redef]
    import sre_parse as parser  # type: ignore[no-redef]

SHORTEST = 3
Needles = Optional[FrozenSet[str]]
# the characters beyond ASCII that a case-insensitive pattern matches to an ASCII letter: those
# whose simple lower case is one (İ, the Kelvin sign) and re's extra cases (ı, ſ); a test checks
# the list against the whole of Unicode
_TO_ASCII = {0x130: "i", 0x131: "i", 0x17F: "s", 0x212A: "k"}


def fold(text: str) -> str:
    """`text` as needles are looked for in it: lower case, with the letters a case-insensitive
    pattern takes for ASCII ones made ASCII."""
    return text.lower() if text.isascii() else text.translate(_TO_ASCII).lower()


def needles(pattern: "re.Pattern[str]") -> Needles:
    """At least one of these (case-folded) occurs in any text the pattern matches; None: unknown."""
    found = _sequence(list(parser.parse(pattern.pattern, pattern.flags & ~re.DEBUG)))
    if found is None or min(map(len, found)) < SHORTEST:
        return None
    return found


def may_match(folded_text: str, found: Needles) -> bool:
    """Whether a pattern with these needles can match a text whose `fold` is `folded_text`."""
    return found is None or any(needle in folded_text for needle in found)


def _sequence(items: Sequence[Tuple]) -> Needles:
    """The most selective needle set of a sequence: any of its required parts will do."""
    candidates: List[FrozenSet[str]] = []
    run: List[str] = []
    for op, value in items:
        if op is constants.LITERAL and value < 128:
            run.append(chr(value))
            continue
        _close(run, candidates)
        part = _part(op, value)
        if part is not None:
            candidates.append(part)
    _close(run, candidates)
    return max(candidates, key=lambda found: min(map(len, found)), default=None)


def _close(run: List[str], candidates: List[FrozenSet[str]]) -> None:
    if run:
        candidates.append(frozenset(["".join(run).lower()]))
        run.clear()


def _part(op, value) -> Needles:
    """What one element of a sequence requires: a group's body, every branch of an alternation,
    a repeat's body when it must occur at least once."""
    if op is constants.SUBPATTERN:
        return _sequence(list(value[-1]))
    if op is constants.BRANCH:
        branches = [_sequence(list(branch)) for branch in value[1]]
        if any(branch is None for branch in branches):
            return None
        return frozenset().union(*branches)
    if op in (constants.MAX_REPEAT, constants.MIN_REPEAT, getattr(constants, "POSSESSIVE_REPEAT", None)):
        least, _, body = value
        return _sequence(list(body)) if least >= 1 else None
    if op is getattr(constants, "ATOMIC_GROUP", None):
        return _sequence(list(value))
    return None
