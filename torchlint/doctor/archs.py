"""GPU architecture entries (sm_86, compute_90, sm_100f) and which of them run on a GPU."""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

_ARCH = re.compile(r"^(sm|compute)_(\d+)([af]?)$")


def parse_arch(entry: str) -> Optional[Tuple[str, int, int, str]]:
    """'sm_90a' -> ('sm', 9, 0, 'a'); 'compute_120' -> ('compute', 12, 0, ''); else None."""
    match = _ARCH.match(entry)
    if not match or len(match.group(2)) < 2:
        return None
    digits = match.group(2)
    return match.group(1), int(digits[:-1]), int(digits[-1]), match.group(3)


def kernel_coverage(capability: str, arch_list: List[str]) -> Tuple[Optional[str], Optional[str]]:
    """(a cubin entry that runs on `capability`, else a PTX entry that can be JIT-compiled).

    A cubin for X.y runs on X.z with z >= y (same major only); `a` (arch-specific)
    cubins run only on exactly X.y. PTX for X.y is JIT-compiled for any capability >= X.y.
    """
    major, minor = (int(part) for part in capability.split(".")[:2])
    cubins: List[Tuple[Tuple[int, int], str]] = []
    ptxs: List[Tuple[Tuple[int, int], str]] = []
    for entry in arch_list:
        parsed = parse_arch(entry)
        if parsed is None:
            continue
        kind, arch_major, arch_minor, suffix = parsed
        if kind == "sm":
            exact = (arch_major, arch_minor) == (major, minor)
            if exact or (suffix != "a" and arch_major == major and arch_minor <= minor):
                cubins.append(((arch_major, arch_minor), entry))
        elif suffix == "a":
            if (arch_major, arch_minor) == (major, minor):
                ptxs.append(((arch_major, arch_minor), entry))
        elif (arch_major, arch_minor) <= (major, minor):
            ptxs.append(((arch_major, arch_minor), entry))
    return _newest(cubins), _newest(ptxs)


def _newest(candidates: List[Tuple[Tuple[int, int], str]]) -> Optional[str]:
    return max(candidates)[1] if candidates else None
