"""The doctor's checks of the NVIDIA driver: present, and new enough for the CUDA that torch was built with."""

from __future__ import annotations

from typing import List

from torchlint.doctor.check_basics import driver_cuda_from_warnings, gpus_unstated, parse_version, satisfies
from torchlint.doctor.compat import COMPATIBILITY_DOC, minimum_driver
from torchlint.doctor.facts import Facts
from torchlint.core.runtime_requirements import Requirements
from torchlint.doctor.results import FAIL, NOT_IN_EVIDENCE, NOT_JUDGED, PASS, SKIP, WARN, CheckResult


def check_driver(facts: Facts, req: Requirements) -> List[CheckResult]:
    if req.driver is None:
        return []
    if facts.driver_version is None:
        status = WARN if facts.has_gpu else SKIP
        return [CheckResult("driver", status, "unknown", str(req.driver),
                            facts.unknown.get("driver_version", "driver version unreadable"))]
    if not satisfies(facts.driver_version, req.driver):
        return [CheckResult("driver", FAIL, facts.driver_version, str(req.driver),
                            "Upgrade the NVIDIA driver.")]
    return [CheckResult("driver", PASS, facts.driver_version, str(req.driver))]


def check_driver_for_cuda(facts: Facts, req: Requirements) -> List[CheckResult]:
    name = "driver-for-cuda"
    if facts.torch_build != "cuda" or not facts.torch_cuda:
        return [CheckResult(name, SKIP, "no CUDA runtime in torch", "-")]
    floor = minimum_driver(facts.torch_cuda, facts.platform)
    platform = "Windows" if (facts.platform or "").startswith("win") else "Linux"
    if floor is None:
        return [CheckResult(name, WARN, facts.driver_version or "unknown", f"(no data for CUDA {facts.torch_cuda})",
                            f"torchlint has no driver floor for CUDA {facts.torch_cuda}; see {COMPATIBILITY_DOC}")]
    expected = f">={floor} for CUDA {facts.torch_cuda} ({platform})"
    warned = driver_cuda_from_warnings(facts)
    torch_cuda = parse_version(facts.torch_cuda)
    if warned and torch_cuda is not None and parse_version(warned) < torch_cuda:
        return [CheckResult(name, FAIL, f"{facts.driver_version or 'the driver'} runs CUDA <= {warned} "
                            "(torch warned: \"driver on your system is too old\")", expected,
                            f"torch {facts.torch_version} bundles the CUDA {facts.torch_cuda} runtime and torch "
                            f"itself warned that the driver is too old for it: the driver runs CUDA {warned} at most. "
                            f"Upgrade the driver to >= {floor}, or install a torch wheel built for CUDA {warned} or "
                            f"older. Installing a CUDA toolkit does not help: the runtime comes with torch "
                            f"({COMPATIBILITY_DOC}).")]
    if facts.driver_version is None:
        if gpus_unstated(facts):
            return [CheckResult(name, SKIP, f"{NOT_JUDGED}: driver version unknown", expected)]
        if not facts.has_gpu:
            return [CheckResult(name, SKIP, "no driver found", expected, "No GPU; nothing to check.")]
        if facts.unknown.get("driver_version") == NOT_IN_EVIDENCE:
            return [CheckResult(name, SKIP, f"{NOT_JUDGED}: driver version unknown", expected)]
        return [CheckResult(name, WARN, "unknown", expected,
                            facts.unknown.get("driver_version", "driver version unreadable"))]
    found = parse_version(facts.driver_version)
    if found is None:
        return [CheckResult(name, WARN, facts.driver_version, expected, "Unparseable driver version.")]
    if found < floor:
        return [CheckResult(name, FAIL, facts.driver_version, expected,
                            f"torch {facts.torch_version} bundles the CUDA {facts.torch_cuda} runtime, which "
                            f"this driver cannot run (\"driver version is insufficient\"). Upgrade the driver "
                            f"to >= {floor}, or install a torch wheel built for an older CUDA. Installing a "
                            f"CUDA toolkit does not help: the runtime comes with torch ({COMPATIBILITY_DOC}).")]
    return [CheckResult(name, PASS, facts.driver_version, expected)]
