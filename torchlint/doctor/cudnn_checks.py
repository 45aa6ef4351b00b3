"""The doctor's checks of cuDNN: the version torch loads, whether it is enabled, and where the library comes from."""

from __future__ import annotations

from typing import List

from torchlint.doctor.check_basics import ANY, no_gpu_found, satisfies, skipped_without_torch
from torchlint.doctor.facts import Facts
from torchlint.core.runtime_requirements import Requirements
from torchlint.doctor.results import FAIL, NOT_JUDGED, PASS, SKIP, WARN, CheckResult


def check_cudnn(facts: Facts, req: Requirements) -> List[CheckResult]:
    if req.cudnn is None:
        if facts.cudnn_version is None:
            return []
        return [CheckResult("cudnn", PASS, facts.cudnn_version, ANY)]
    skipped = skipped_without_torch("cudnn", facts)
    if skipped:
        return skipped
    if facts.cudnn_version is None:
        if not facts.has_gpu:  # as driver and compute-capability: nothing to judge without a GPU
            return [CheckResult("cudnn", SKIP, no_gpu_found(facts), str(req.cudnn))]
        if facts.cudnn_available is False:
            reason = facts.unknown.get("cudnn_version", "torch reports no cuDNN (cuDNN failed to load).")
            return [CheckResult("cudnn", FAIL, "none", str(req.cudnn), reason)]
        return [CheckResult("cudnn", SKIP, f"{NOT_JUDGED}: unknown", str(req.cudnn),
                            facts.unknown.get("cudnn_version", "cuDNN version unreadable"))]
    if not satisfies(facts.cudnn_version, req.cudnn):
        return [CheckResult("cudnn", FAIL, facts.cudnn_version, str(req.cudnn),
                            "torch loads the cuDNN its wheel depends on (the nvidia-cudnn-cu* package); "
                            "install a torch release that ships a matching cuDNN.")]
    return [CheckResult("cudnn", PASS, facts.cudnn_version, str(req.cudnn))]


def check_cudnn_enabled(facts: Facts, req: Requirements) -> List[CheckResult]:
    name = "cudnn-enabled"
    if not facts.has_gpu or facts.torch_build != "cuda":
        found = no_gpu_found(facts) if facts.torch_build == "cuda" else "no CUDA GPU"
        return [CheckResult(name, SKIP, "no CUDA GPU" if found == "no GPU" else found, "-")]
    if facts.cudnn_available is None:
        return [CheckResult(name, SKIP, f"{NOT_JUDGED}: unknown", "available and enabled",
                            facts.unknown.get("cudnn_available", "cuDNN availability was not recorded"))]
    if not facts.cudnn_available:
        return [CheckResult(name, FAIL, "not available", "available and enabled",
                            "torch cannot load cuDNN: convolutions and RNNs fall back to slow kernels or "
                            "fail. Check for a stray libcudnn on LD_LIBRARY_PATH and reinstall torch.")]
    if facts.cudnn_enabled is False:
        return [CheckResult(name, FAIL, "disabled (torch.backends.cudnn.enabled = False)", "available and enabled",
                            "cuDNN is switched off for the whole process. If this works around double "
                            "backward through an RNN (rule TL004), scope it instead: "
                            "`with torch.backends.cudnn.flags(enabled=False):` around that RNN's forward.")]
    return [CheckResult(name, PASS, "available and enabled", "available and enabled")]


def check_cudnn_library_path(facts: Facts, req: Requirements) -> List[CheckResult]:
    if not facts.cudnn_on_library_path or facts.torch_build != "cuda":
        return []
    return [CheckResult("cudnn-library-path", WARN, ", ".join(facts.cudnn_on_library_path),
                        "no libcudnn on LD_LIBRARY_PATH",
                        "A libcudnn on LD_LIBRARY_PATH can be loaded instead of the one torch was built "
                        "with; a mismatch shows up as CUDNN_STATUS_NOT_INITIALIZED or version errors. "
                        "Remove it from LD_LIBRARY_PATH unless torch was built against it.")]
