"""The doctor's checks of torch itself: installed at the declared version, the build (CPU or CUDA) wanted, CUDA
available."""

from __future__ import annotations

from typing import List

from torchlint.doctor.check_basics import ANY, INSTALL_PAGE, expected_text, satisfies, skipped_without_torch
from torchlint.doctor.facts import Facts
from torchlint.doctor.gpu_checks import _gpu_names
from torchlint.core.runtime_requirements import Requirements
from torchlint.doctor.results import FAIL, PASS, WARN, CheckResult
from torchlint.doctor.wheels import cuda_install_advice


def check_torch(facts: Facts, req: Requirements) -> List[CheckResult]:
    if facts.torch_version is None:
        reason = facts.unknown.get("torch", "torch is not importable")
        return [CheckResult("torch", FAIL, "not importable", expected_text(req.torch) if req.torch else "installed",
                            f"{reason}. Install torch ({INSTALL_PAGE}).")]
    if req.torch is not None and not satisfies(facts.torch_version, req.torch):
        return [CheckResult("torch", FAIL, facts.torch_version, str(req.torch),
                            f"Install a torch release matching {req.torch} ({INSTALL_PAGE}).")]
    return [CheckResult("torch", PASS, facts.torch_version, expected_text(req.torch))]


def check_torch_build(facts: Facts, req: Requirements) -> List[CheckResult]:
    skipped = skipped_without_torch("torch-build", facts)
    if skipped:
        return skipped
    found = {
        "cuda": f"CUDA {facts.torch_cuda}",
        "rocm": f"ROCm {facts.torch_hip}",
        "cpu": "CPU only",
    }.get(facts.torch_build, "unknown")
    needs_gpu = req.require_gpu or req.cuda is not None
    expected = "CUDA" if req.cuda is not None else ("CUDA or ROCm" if req.require_gpu else ANY)
    if facts.torch_build == "cpu" and (needs_gpu or facts.gpus):
        gpu = facts.gpus[0] if facts.gpus else None
        advice = cuda_install_advice(facts.torch_version or "", gpu.capability if gpu else None, facts.platform)
        where = f" on a machine with {_gpu_names(facts)}" if facts.gpus else ""
        return [CheckResult("torch-build", FAIL if needs_gpu else WARN, found, expected,
                            f"This torch wheel has no GPU support{where}. Install a CUDA build: {advice}")]
    if facts.torch_build == "rocm" and req.cuda is not None:
        return [CheckResult("torch-build", FAIL, found, expected,
                            "`cuda` is declared but this is a ROCm build of torch.")]
    return [CheckResult("torch-build", PASS, found, expected)]


def check_cuda(facts: Facts, req: Requirements) -> List[CheckResult]:
    if req.cuda is None:
        return []
    skipped = skipped_without_torch("cuda", facts)
    if skipped:
        return skipped
    if not facts.torch_cuda:
        return [CheckResult("cuda", FAIL, "none", str(req.cuda),
                            "This torch build carries no CUDA runtime; install a CUDA wheel.")]
    if not satisfies(facts.torch_cuda, req.cuda):
        return [CheckResult("cuda", FAIL, facts.torch_cuda, str(req.cuda),
                            "torch.version.cuda is the CUDA runtime bundled with the wheel; the system "
                            "toolkit (nvcc) does not change it. Install a torch wheel built for a "
                            f"matching CUDA ({INSTALL_PAGE}).")]
    return [CheckResult("cuda", PASS, facts.torch_cuda, str(req.cuda))]
