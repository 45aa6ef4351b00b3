"""Judge a facts record against the declared requirements and known incompatibilities.

Pure functions: (Facts, Requirements) -> [CheckResult]. No I/O, no torch; tested with
recorded fact sets from machines we do not have.
"""

from __future__ import annotations

from typing import Callable, List, Tuple

from torchlint.doctor.cudnn_checks import check_cudnn, check_cudnn_enabled, check_cudnn_library_path
from torchlint.doctor.driver_checks import check_driver, check_driver_for_cuda
from torchlint.doctor.environment_checks import (
    check_cublas_workspace_config,
    check_cuda_launch_blocking,
    check_cuda_visible_devices,
    check_torch_use_cuda_dsa,
    check_torch_warnings,
)
from torchlint.doctor.facts import Facts
from torchlint.doctor.gpu_checks import check_compute_capability, check_gpu, check_gpu_name, check_kernel_image
from torchlint.doctor.loader import check_wsl_libcuda
from torchlint.core.runtime_requirements import Requirements
from torchlint.doctor.results import CheckResult
from torchlint.doctor.runtimes import (
    check_declared_packages,
    check_gpu_runtimes,
    check_nvidia_wheel_majors,
    check_onnxruntime_flavours,
    check_runtime_loader,
)
from torchlint.doctor.torch_checks import check_cuda, check_torch, check_torch_build

Check = Callable[[Facts, Requirements], List[CheckResult]]


def run_checks(facts: Facts, requirements: Requirements) -> List[CheckResult]:
    """Every check, in table order."""
    results: List[CheckResult] = []
    for check in CHECKS:
        results.extend(check(facts, requirements))
    return results


CHECKS: Tuple[Check, ...] = (
    check_torch,
    check_torch_build,
    check_cuda,
    check_gpu,
    check_gpu_name,
    check_compute_capability,
    check_kernel_image,
    check_driver,
    check_driver_for_cuda,
    check_cudnn,
    check_cudnn_enabled,
    check_cudnn_library_path,
    check_declared_packages,
    check_gpu_runtimes,
    check_nvidia_wheel_majors,
    check_onnxruntime_flavours,
    check_runtime_loader,
    check_wsl_libcuda,
    check_cuda_launch_blocking,
    check_torch_use_cuda_dsa,
    check_cuda_visible_devices,
    check_cublas_workspace_config,
    check_torch_warnings,
)


CHECK_NAMES = tuple(check.__name__[len("check_"):].replace("_", "-") for check in CHECKS)
