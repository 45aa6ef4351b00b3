"""Known compatibility data the checks consult. Data only, each row with its source.

Minimum NVIDIA driver for the CUDA runtime torch was built with ("minor version
compatibility": since CUDA 11 a driver from the same major family runs every minor
release of that family, with a limited feature set for PTX JIT of newer code).
Sources:
- CUDA Toolkit Release Notes, table "CUDA Toolkit and Minimum Required Driver Version
  for CUDA Minor Version Compatibility":
  https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html#cuda-driver
- CUDA Compatibility guide, "Minor Version Compatibility" (13.x >= 580, 12.x >= 525,
  11.x >= 450; 11.0 needs 450.80.02 / 452.39 for the 11.x family):
  https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html
- CUDA 10.x minimum drivers, same guide, table "CUDA Toolkit 10.x Minimum Required
  Driver Versions".
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Tuple

from packaging.version import InvalidVersion, Version


class DriverFloor(NamedTuple):
    cuda_from: str  # inclusive, "major.minor"
    cuda_before: str  # exclusive
    linux: str
    windows: str


MINIMUM_DRIVER: Tuple[DriverFloor, ...] = (
    # CUDA 13.x: the compatibility guide gives ">= 580" (the r580 branch, both platforms).
    DriverFloor("13.0", "14.0", "580", "580"),
    # CUDA 12.x: release notes, minor version compatibility table.
    DriverFloor("12.0", "13.0", "525.60.13", "528.33"),
    # CUDA 11.1-11.8: release notes, minor version compatibility table.
    DriverFloor("11.1", "12.0", "450.80.02", "452.39"),
    # CUDA 11.0 GA shipped with an older driver (release notes, footnote to the table).
    DriverFloor("11.0", "11.1", "450.36.06", "451.22"),
    # CUDA 10.x: no minor version compatibility; one floor per minor release.
    DriverFloor("10.2", "10.3", "440.33", "441.22"),
    DriverFloor("10.1", "10.2", "418.39", "418.96"),
    DriverFloor("10.0", "10.1", "410.48", "411.31"),
    # CUDA 9.x: same table.
    DriverFloor("9.2", "9.3", "396.26", "397.44"),
    DriverFloor("9.1", "9.2", "390.46", "391.29"),
    DriverFloor("9.0", "9.1", "384.81", "385.54"),
)

COMPATIBILITY_DOC = "https://docs.nvidia.com/deploy/cuda-compatibility/"


def minimum_driver(cuda: str, platform: Optional[str]) -> Optional[Version]:
    """The oldest driver that runs CUDA runtime `cuda` on `platform`, or None if unknown."""
    try:
        runtime = Version(cuda)
    except InvalidVersion:
        return None
    for floor in MINIMUM_DRIVER:
        if Version(floor.cuda_from) <= runtime < Version(floor.cuda_before):
            windows = (platform or "").startswith("win")
            return Version(floor.windows if windows else floor.linux)
    return None


# Which GPU architectures a CUDA toolkit release can build for. A torch wheel built with
# CUDA X has kernels only for architectures CUDA X knows, and (as torch's own
# `_check_cubins` says) a GPU is served only by cubins of its own major version.
# Sources: CUDA Toolkit Release Notes per release (new architectures: Turing 10.0,
# Ampere 11.0/11.1, Ada and Hopper 11.8, Blackwell 12.8; removed: sm_30 after 10.2,
# sm_35/sm_37 after 11.8, Maxwell/Pascal/Volta (sm_50-sm_72) from 13.0):
# https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html
class ArchSupport(NamedTuple):
    capability_from: Tuple[int, int]  # inclusive
    capability_before: Tuple[int, int]  # exclusive
    first_cuda: str  # the first CUDA release that builds kernels this GPU runs
    last_cuda_before: Optional[str]  # the first CUDA release that no longer does, or None


ARCH_SUPPORT: Tuple[ArchSupport, ...] = (
    ArchSupport((3, 0), (3, 5), "6.0", "11.0"),
    ArchSupport((3, 5), (4, 0), "6.0", "12.0"),
    ArchSupport((5, 0), (7, 5), "6.5", "13.0"),
    ArchSupport((7, 5), (8, 0), "10.0", None),
    ArchSupport((8, 0), (9, 0), "11.0", None),
    ArchSupport((9, 0), (10, 0), "11.8", None),
    ArchSupport((10, 0), (12, 0), "12.8", None),
    ArchSupport((12, 0), (13, 0), "12.8", None),
)
CUDA_RELEASE_NOTES = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html"


def _major_minor(text: str) -> Optional[Tuple[int, int]]:
    parts = text.split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        return None


def cuda_builds_for(cuda: str, capability: str) -> Optional[Tuple[bool, str]]:
    """(can a build with CUDA `cuda` carry kernels for `capability`, the CUDA range that can).

    None when either version is unreadable or the architecture is not in the table.
    """
    runtime = _major_minor(cuda)
    cap = _major_minor(capability)
    if runtime is None or cap is None:
        return None
    for row in ARCH_SUPPORT:
        if row.capability_from <= cap < row.capability_before:
            first = _major_minor(row.first_cuda)
            last = _major_minor(row.last_cuda_before) if row.last_cuda_before else None
            ok = first is not None and runtime >= first and (last is None or runtime < last)
            span = f"CUDA >= {row.first_cuda}" + (f" and < {row.last_cuda_before}" if last else "")
            return ok, span
    return None


def cuda_of_tag(tag: str) -> Optional[str]:
    """'cu101' -> '10.1', 'cu124' -> '12.4', 'cu92' -> '9.2'; else None."""
    digits = tag[2:] if tag.startswith("cu") else ""
    if not digits.isdigit() or len(digits) < 2:
        return None
    return f"{digits[:-1]}.{digits[-1]}"


# The newest CUDA each torch release was built with on pytorch.org (Linux wheels or
# conda). A GPU that needs a newer CUDA has no kernels in any build of that release.
# Source: https://pytorch.org/get-started/previous-versions/
NEWEST_CUDA_OF_TORCH: Tuple[Tuple[str, str], ...] = (
    ("0.4", "9.2"), ("1.0", "10.0"), ("1.1", "10.0"), ("1.2", "10.0"), ("1.3", "10.1"), ("1.4", "10.1"),
    ("1.5", "10.2"), ("1.6", "10.2"), ("1.7", "11.0"), ("1.8", "11.1"), ("1.9", "11.1"), ("1.10", "11.3"),
    ("1.11", "11.5"), ("1.12", "11.6"), ("1.13", "11.7"), ("2.0", "11.8"), ("2.1", "12.1"), ("2.2", "12.1"),
    ("2.3", "12.1"), ("2.4", "12.4"), ("2.5", "12.4"), ("2.6", "12.6"), ("2.7", "12.8"), ("2.8", "12.9"),
    ("2.9", "13.0"),
)
PREVIOUS_VERSIONS_PAGE = "https://pytorch.org/get-started/previous-versions/"


def newest_cuda_of_torch(torch_version: str) -> Optional[str]:
    """The newest CUDA any official build of this torch release used, or None if not in the table."""
    release = ".".join(torch_version.split("+")[0].split(".")[:2])
    if release.startswith("0.") and release < "0.4":
        release = "0.4"  # older releases had still older CUDA builds
    return dict(NEWEST_CUDA_OF_TORCH).get(release)
