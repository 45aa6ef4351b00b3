"""The outcome of one check or smoke test, and how outcomes add up to a verdict."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Dict, Iterable, List

PASS = "pass"
WARN = "warn"
FAIL = "fail"
SKIP = "skip"
STATUSES = (PASS, WARN, FAIL, SKIP)
NOT_JUDGED = "not judged"  # how a SKIP row's `found` starts when the evidence lacks the fact
NOT_IN_EVIDENCE = "not in the evidence"  # Facts.unknown reason of a fact pasted evidence does not state


@dataclass(frozen=True)
class CheckResult:
    """One row of the doctor's table.

    `detail` carries the full error text of a failed smoke test (or anything else too
    long for the table); it is empty for most checks.
    """

    name: str
    status: str
    found: str
    expected: str
    advice: str = ""
    detail: str = ""

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def count(results: Iterable[CheckResult]) -> Dict[str, int]:
    """How many results have each status."""
    counts = {status: 0 for status in STATUSES}
    for result in results:
        counts[result.status] += 1
    return counts


def failed(results: Iterable[CheckResult]) -> bool:
    return any(result.status == FAIL for result in results)


def verdict(results: List[CheckResult]) -> str:
    """The one-line summary printed under the table."""
    counts = count(results)
    summary = (
        f"{counts[PASS]} passed, {counts[WARN]} warning{'s' if counts[WARN] != 1 else ''}, "
        f"{counts[FAIL]} failed, {counts[SKIP]} skipped"
    )
    if counts[FAIL]:
        return f"FAIL: {summary}"
    if counts[WARN]:
        return f"OK with warnings: {summary}"
    return f"OK: {summary}"
