"""What the doctor's checks share: versions read and compared, the expected value shown, and why a check is skipped (no
torch, no GPU, a `CUDA_VISIBLE_DEVICES` that hides the GPUs)."""

from __future__ import annotations

import re
from typing import List, Optional

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from torchlint.doctor.facts import Facts, Gpu
from torchlint.doctor.results import NOT_IN_EVIDENCE, NOT_JUDGED, SKIP, CheckResult

INSTALL_PAGE = "https://pytorch.org/get-started/locally/"


ANY = "any"


def parse_version(text: Optional[str]) -> Optional[Version]:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def satisfies(found: Optional[str], spec: SpecifierSet) -> bool:
    version = parse_version(found)
    return version is not None and spec.contains(version, prereleases=True)


def expected_text(spec: Optional[SpecifierSet]) -> str:
    return str(spec) if spec is not None else ANY


def skipped_without_torch(name: str, facts: Facts) -> Optional[List[CheckResult]]:
    if facts.torch_version is None:
        return [CheckResult(name, SKIP, "unknown", "-", "torch is not importable (see the torch check)")]
    return None


def gpu_label(gpu: Gpu) -> str:
    return f"GPU {gpu.index} {gpu.name or '(name unknown)'}"


def gpus_unstated(facts: Facts) -> bool:
    """CUDA is available but the evidence names no GPU and no count (a collect_env paste cut short)."""
    return bool(facts.cuda_available) and not facts.gpus and not facts.device_count


def no_gpu_found(facts: Facts) -> str:
    """The `found` of a row skipped for want of a GPU: "no GPU", or not judged when the GPUs are unstated."""
    return f"{NOT_JUDGED}: CUDA is available, the GPUs are {NOT_IN_EVIDENCE}" if gpus_unstated(facts) else "no GPU"


# torch's warning when cudaGetDeviceCount fails with cudaErrorInsufficientDriver; the number is
# cudaDriverGetVersion's: 1000 * major + 10 * minor of the newest CUDA the driver runs (11040 -> 11.4).
_DRIVER_TOO_OLD = re.compile(r"driver on your system is too old \(found version (\d{4,6})\)")


def driver_cuda_from_warnings(facts: Facts) -> Optional[str]:
    """The newest CUDA the driver runs, as torch's "driver ... is too old (found version 11040)" warning says."""
    for message in facts.torch_warnings:
        found = _DRIVER_TOO_OLD.search(message)
        if found:
            number = int(found.group(1))
            return f"{number // 1000}.{number % 1000 // 10}"
    return None


def no_gpu_reason(facts: Facts) -> str:
    visible = facts.env.get("CUDA_VISIBLE_DEVICES")
    if facts.torch_build == "cpu":
        return "CPU-only torch build"
    if visible is not None and visible_devices_problem(visible):
        return f"CUDA_VISIBLE_DEVICES={visible!r} is malformed or hides every GPU"
    if facts.torch_version is None:
        return "torch is not importable"
    if "cuda_available" in facts.unknown:
        return f"CUDA could not be queried: {facts.unknown['cuda_available']}"
    if facts.cuda_available:
        return f"CUDA is available; the GPUs are {NOT_IN_EVIDENCE}"
    return "torch.cuda.is_available() is False"


# CUDA reads a comma-separated list of indices or GPU-/MIG- UUIDs and stops at the first
# entry it cannot parse: "[1,2,3]" or "cuda:0" hides every GPU, "0,1,x,2" shows only 0 and 1.
_VISIBLE_ENTRY = re.compile(r"^(?:\d+|GPU-[0-9A-Fa-f-]+|MIG-[0-9A-Za-z/-]+)$")


def visible_devices_problem(value: str) -> Optional[str]:
    """Why CUDA_VISIBLE_DEVICES=value hides GPUs it seems to list, or None when it is well formed."""
    entries = [entry.strip() for entry in value.split(",")]
    if value.strip() in ("", "-1"):
        return "This hides every GPU from CUDA in this process."
    if any(mark in value for mark in "[]()'\""):
        bare = ",".join(part.strip(" []()'\"") for part in value.split(","))
        return (f"{value!r} is not a device list: CUDA reads {entries[0]!r} as the first entry, cannot parse it, "
                f"and stops, so no GPU is visible. Write it without brackets or quotes: CUDA_VISIBLE_DEVICES={bare}.")
    for position, entry in enumerate(entries):
        if not _VISIBLE_ENTRY.match(entry):
            shown = "no GPU" if position == 0 else "only " + ",".join(entries[:position])
            return (f"{entry!r} is not a device index or GPU UUID: CUDA stops reading the list there, so "
                    f"{shown} is visible. Write indices separated by commas, e.g. CUDA_VISIBLE_DEVICES=0,1.")
    return None
