"""The doctor's checks of the environment: CUDA variables that slow or hide the GPUs, and the warnings torch printed
while the probe queried CUDA."""

from __future__ import annotations

import re
from typing import List

from torchlint.doctor.check_basics import visible_devices_problem
from torchlint.doctor.facts import Facts
from torchlint.core.runtime_requirements import Requirements
from torchlint.doctor.results import PASS, WARN, CheckResult


def check_cuda_launch_blocking(facts: Facts, req: Requirements) -> List[CheckResult]:
    value = facts.env.get("CUDA_LAUNCH_BLOCKING")
    if value is None:
        return []
    if value.strip() in ("", "0"):
        return [CheckResult("cuda-launch-blocking", PASS, repr(value), "unset or 0")]
    return [CheckResult("cuda-launch-blocking", WARN, repr(value), "unset or 0",
                        "Every kernel launch waits for the GPU: training runs much slower. Set it only to "
                        "locate an asynchronous CUDA error, then unset it.")]


def check_torch_use_cuda_dsa(facts: Facts, req: Requirements) -> List[CheckResult]:
    value = facts.env.get("TORCH_USE_CUDA_DSA")
    if value is None:
        return []
    return [CheckResult("torch-use-cuda-dsa", WARN, repr(value), "unset",
                        "TORCH_USE_CUDA_DSA is a build-time flag: setting it when running a released "
                        "wheel does nothing. Device-side assertions need torch built from source with it; "
                        "to locate an assert, use CUDA_LAUNCH_BLOCKING=1 or reproduce on CPU.")]


def check_cuda_visible_devices(facts: Facts, req: Requirements) -> List[CheckResult]:
    value = facts.env.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return []
    problem = visible_devices_problem(value)
    if problem:
        return [CheckResult("cuda-visible-devices", WARN, repr(value), "a device list", problem)]
    return [CheckResult("cuda-visible-devices", PASS, repr(value), "a device list")]


def check_cublas_workspace_config(facts: Facts, req: Requirements) -> List[CheckResult]:
    value = facts.env.get("CUBLAS_WORKSPACE_CONFIG")
    if value is None:
        return []
    # The two settings documented for deterministic cuBLAS:
    # https://pytorch.org/docs/stable/notes/randomness.html
    if value in (":4096:8", ":16:8"):
        return [CheckResult("cublas-workspace-config", PASS, repr(value), "':4096:8' or ':16:8'")]
    return [CheckResult("cublas-workspace-config", WARN, repr(value), "':4096:8' or ':16:8'",
                        "Not one of the documented settings; deterministic algorithms may still raise.")]


_CUDA_WORDS = re.compile(r"cuda|cudnn|driver|gpu|nvidia|capability|sm_\d", re.IGNORECASE)


def check_torch_warnings(facts: Facts, req: Requirements) -> List[CheckResult]:
    relevant = [message.strip() for message in facts.torch_warnings if _CUDA_WORDS.search(message)]
    if not relevant or not (facts.has_gpu or req.require_gpu):
        return []  # e.g. "Found no NVIDIA driver" from a CUDA wheel on a CPU node that needs no GPU
    first = relevant[0].splitlines()[0]
    return [CheckResult("torch-warnings", WARN, first[:200], "no CUDA warnings from torch",
                        "torch warned while the probe queried CUDA; see the detail.", "\n".join(relevant))]
