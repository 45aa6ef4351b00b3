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
