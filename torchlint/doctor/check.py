"""Judge a facts record against the declared requirements and known incompatibilities.

Pure functions: (Facts, Requirements) -> [CheckResult]. No I/O, no torch; tested with
recorded fact sets from machines we do not have.
"""

from __future__ import annotations

import re
from typing import Callable, List, Optional, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from torchlint.doctor.archs import kernel_coverage, parse_arch
from torchlint.doctor.compat import COMPATIBILITY_DOC, CUDA_RELEASE_NOTES, cuda_builds_for, minimum_driver
from torchlint.doctor.facts import Facts, Gpu
from torchlint.doctor.loader import check_wsl_libcuda
from torchlint.doctor.requirements import Requirements
from torchlint.doctor.results import FAIL, NOT_IN_EVIDENCE, NOT_JUDGED, PASS, SKIP, WARN, CheckResult
from torchlint.doctor.runtimes import (
    check_declared_packages,
    check_gpu_runtimes,
    check_nvidia_wheel_majors,
    check_onnxruntime_flavours,
    check_runtime_loader,
)
from torchlint.doctor.wheels import Shipped, cuda_install_advice, runs_on, shipped

INSTALL_PAGE = "https://pytorch.org/get-started/locally/"
ANY = "any"
Check = Callable[[Facts, Requirements], List[CheckResult]]


def run_checks(facts: Facts, requirements: Requirements) -> List[CheckResult]:
    """Every check, in table order."""
    results: List[CheckResult] = []
    for check in CHECKS:
        results.extend(check(facts, requirements))
    return results


def _version(text: Optional[str]) -> Optional[Version]:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def _satisfies(found: Optional[str], spec: SpecifierSet) -> bool:
    version = _version(found)
    return version is not None and spec.contains(version, prereleases=True)


def _expected(spec: Optional[SpecifierSet]) -> str:
    return str(spec) if spec is not None else ANY


def _no_torch(name: str, facts: Facts) -> Optional[List[CheckResult]]:
    if facts.torch_version is None:
        return [CheckResult(name, SKIP, "unknown", "-", "torch is not importable (see the torch check)")]
    return None


def _gpu_label(gpu: Gpu) -> str:
    return f"GPU {gpu.index} {gpu.name or '(name unknown)'}"


def _no_gpu_reason(facts: Facts) -> str:
    visible = facts.env.get("CUDA_VISIBLE_DEVICES")
    if facts.torch_build == "cpu":
        return "CPU-only torch build"
    if visible is not None and visible_devices_problem(visible):
        return f"CUDA_VISIBLE_DEVICES={visible!r} is malformed or hides every GPU"
    if facts.torch_version is None:
        return "torch is not importable"
    if "cuda_available" in facts.unknown:
        return f"CUDA could not be queried: {facts.unknown['cuda_available']}"
    return "torch.cuda.is_available() is False"


# --- torch ---------------------------------------------------------------------------


def check_torch(facts: Facts, req: Requirements) -> List[CheckResult]:
    if facts.torch_version is None:
        reason = facts.unknown.get("torch", "torch is not importable")
        return [CheckResult("torch", FAIL, "not importable", _expected(req.torch) if req.torch else "installed",
                            f"{reason}. Install torch ({INSTALL_PAGE}).")]
    if req.torch is not None and not _satisfies(facts.torch_version, req.torch):
        return [CheckResult("torch", FAIL, facts.torch_version, str(req.torch),
                            f"Install a torch release matching {req.torch} ({INSTALL_PAGE}).")]
    return [CheckResult("torch", PASS, facts.torch_version, _expected(req.torch))]


def check_torch_build(facts: Facts, req: Requirements) -> List[CheckResult]:
    skipped = _no_torch("torch-build", facts)
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
    skipped = _no_torch("cuda", facts)
    if skipped:
        return skipped
    if not facts.torch_cuda:
        return [CheckResult("cuda", FAIL, "none", str(req.cuda),
                            "This torch build carries no CUDA runtime; install a CUDA wheel.")]
    if not _satisfies(facts.torch_cuda, req.cuda):
        return [CheckResult("cuda", FAIL, facts.torch_cuda, str(req.cuda),
                            "torch.version.cuda is the CUDA runtime bundled with the wheel; the system "
                            "toolkit (nvcc) does not change it. Install a torch wheel built for a "
                            f"matching CUDA ({INSTALL_PAGE}).")]
    return [CheckResult("cuda", PASS, facts.torch_cuda, str(req.cuda))]


# --- GPUs ----------------------------------------------------------------------------


def _gpu_names(facts: Facts) -> str:
    return ", ".join(gpu.name or "?" for gpu in facts.gpus) or f"{facts.device_count} device(s)"


def check_gpu(facts: Facts, req: Requirements) -> List[CheckResult]:
    expected = "at least one" if req.require_gpu else "not required"
    if facts.has_gpu:
        return [CheckResult("gpu", PASS, _gpu_names(facts), expected)]
    if facts.gpus and facts.torch_build == "cpu":
        return [CheckResult("gpu", FAIL if req.require_gpu else WARN, f"{_gpu_names(facts)} (CPU-only torch build)",
                            expected, "The machine has an NVIDIA GPU but this torch build cannot use it; "
                            "see torch-build for a CUDA build that exists.")]
    reason = _no_gpu_reason(facts)
    if facts.gpus and facts.cuda_available is False and facts.torch_build == "cuda":
        names = ", ".join(gpu.name or "?" for gpu in facts.gpus)
        return [CheckResult("gpu", FAIL if req.require_gpu else WARN, f"{names}, but CUDA is unavailable", expected,
                            "The machine has NVIDIA GPUs but torch.cuda.is_available() is False: check the driver "
                            "against torch's CUDA (driver-for-cuda), CUDA_VISIBLE_DEVICES, and `nvidia-smi`.")]
    if facts.cuda_available is None and "cuda_available" in facts.unknown and facts.torch_version is not None:
        return [CheckResult("gpu", SKIP, f"{NOT_JUDGED}: unknown", expected, facts.unknown["cuda_available"])]
    if req.require_gpu:
        return [CheckResult("gpu", FAIL, f"none ({reason})", expected,
                            "`require-gpu = true` but torch sees no GPU. Check `nvidia-smi`, the "
                            "torch build, and CUDA_VISIBLE_DEVICES.")]
    return [CheckResult("gpu", SKIP, f"none ({reason})", expected, "CUDA is unavailable; GPU checks are skipped.")]


def check_gpu_name(facts: Facts, req: Requirements) -> List[CheckResult]:
    if not req.gpu_name:
        return []
    expected = " or ".join(repr(name) for name in req.gpu_name)
    if not facts.has_gpu:
        return [CheckResult("gpu-name", SKIP, "no GPU", expected)]
    results = []
    for gpu in facts.gpus:
        name = gpu.name or ""
        ok = any(wanted.lower() in name.lower() for wanted in req.gpu_name)
        results.append(CheckResult("gpu-name", PASS if ok else FAIL, _gpu_label(gpu), expected,
                                   "" if ok else "This GPU is not one the project declares; "
                                   "select another with CUDA_VISIBLE_DEVICES."))
    return results


def check_compute_capability(facts: Facts, req: Requirements) -> List[CheckResult]:
    spec = req.compute_capability
    if spec is None:
        return []
    if not facts.has_gpu:
        return [CheckResult("compute-capability", SKIP, "no GPU", str(spec))]
    results = []
    for gpu in facts.gpus:
        found = f"{gpu.capability or 'unknown'} ({_gpu_label(gpu)})"
        if gpu.capability is None:
            results.append(CheckResult("compute-capability", WARN, found, str(spec), "Capability unreadable."))
        elif _satisfies(gpu.capability, spec):
            results.append(CheckResult("compute-capability", PASS, found, str(spec)))
        else:
            results.append(CheckResult("compute-capability", FAIL, found, str(spec),
                                       "This GPU is older than the project declares it needs."))
    return results


def check_kernel_image(facts: Facts, req: Requirements) -> List[CheckResult]:
    if not facts.has_gpu:
        return [CheckResult("kernel-image", SKIP, "no GPU", "-")]
    if facts.torch_build != "cuda":
        return [CheckResult("kernel-image", SKIP, f"{facts.torch_build} build", "CUDA build")]
    arch_list = facts.arch_list or []
    if facts.arch_list is None:
        return [_kernel_image_from_cuda(facts, gpu) for gpu in facts.gpus] or [
            CheckResult("kernel-image", SKIP, f"{NOT_JUDGED}: no GPU model or arch list", "sm_XY for each GPU")]
    shown = " ".join(arch_list) or "empty"
    if not arch_list:
        return [CheckResult("kernel-image", WARN, "arch list unreadable", "sm_XY for each GPU",
                            facts.unknown.get("arch_list", "torch reported no compiled architectures."))]
    results = []
    for gpu in facts.gpus:
        if gpu.capability is None:
            results.append(CheckResult("kernel-image", WARN, f"{_gpu_label(gpu)}: capability unknown", shown))
            continue
        sm = "sm_" + gpu.capability.replace(".", "")
        cubin, ptx = kernel_coverage(gpu.capability, arch_list)
        found = f"{_gpu_label(gpu)} is {sm}"
        if cubin:
            results.append(CheckResult("kernel-image", PASS, f"{found}; runs {cubin}", shown))
        elif ptx and parse_arch(ptx)[1] == int(gpu.capability.split(".")[0]):
            results.append(CheckResult("kernel-image", WARN, f"{found}; only PTX {ptx}", shown,
                                       "No native kernels for this GPU: every kernel is JIT-compiled from "
                                       "PTX at first use (slow start-up, needs a driver that knows that PTX)."))
        else:
            # torch's own _check_cubins calls a GPU with no cubin of its major "not compatible",
            # whatever PTX the build carries.
            results.append(CheckResult("kernel-image", FAIL, found + (f"; only PTX {ptx}" if ptx else ""), shown,
                                       _no_kernels_advice(facts, gpu, sm)))
    return results


def _no_kernels_advice(facts: Facts, gpu: Gpu, sm: str) -> str:
    base = (facts.torch_version or "").split("+")[0]
    return (f"torch {base} has no kernels for {sm}: expect \"no kernel image is available for execution on "
            "the device\" or illegal-instruction errors. Install a torch wheel whose "
            f"torch.cuda.get_arch_list() includes {sm} ({INSTALL_PAGE}), or build from source with "
            f"TORCH_CUDA_ARCH_LIST=\"{gpu.capability}\".")


def _kernel_image_from_cuda(facts: Facts, gpu: Gpu) -> CheckResult:
    """The arch list is unknown (pasted evidence): judge by what a CUDA release can build for."""
    if gpu.capability is None:
        return CheckResult("kernel-image", SKIP, f"{NOT_JUDGED}: {_gpu_label(gpu)}, capability unknown", "-")
    sm = "sm_" + gpu.capability.replace(".", "")
    wheel = shipped_by_wheel(facts)
    if wheel is not None:
        found = f"{_gpu_label(gpu)} is {sm}; torch {facts.torch_version} wheel"
        shown = " ".join(wheel.archs)
        if runs_on(wheel.archs, gpu.capability):
            return CheckResult("kernel-image", PASS, found, shown)
        return CheckResult("kernel-image", FAIL, found, shown,
                           f"The published torch {wheel.release} {wheel.variant} wheels ship {shown} ({wheel.source}), "
                           f"nothing for {sm}. " + cuda_install_advice(facts.torch_version or "", gpu.capability,
                                                                       facts.platform))
    support = cuda_builds_for(facts.torch_cuda or "", gpu.capability)
    found = f"{_gpu_label(gpu)} is {sm}; CUDA {facts.torch_cuda} build"
    if support is None:
        return CheckResult("kernel-image", SKIP, f"{NOT_JUDGED}: {found}", "-")
    ok, span = support
    expected = f"{span} for {sm}"
    if ok:
        return CheckResult("kernel-image", SKIP, f"{NOT_JUDGED}: arch list unknown; {found}", expected,
                           f"CUDA {facts.torch_cuda} can build {sm} kernels; run the doctor on the machine "
                           "to read the wheel's arch list.")
    return CheckResult("kernel-image", FAIL, found, expected,
                       f"No CUDA {facts.torch_cuda} build carries kernels for {sm} ({CUDA_RELEASE_NOTES}). "
                       f"Install a torch wheel built with {span} ({INSTALL_PAGE}).")


def shipped_by_wheel(facts: Facts) -> Optional[Shipped]:
    """The arch list of the published wheel this torch version names (+cu128), when the table has it."""
    version = facts.torch_version or ""
    if "+cu" not in version:
        return None
    return shipped(version, version.split("+")[1], facts.platform)


# --- driver --------------------------------------------------------------------------


def check_driver(facts: Facts, req: Requirements) -> List[CheckResult]:
    if req.driver is None:
        return []
    if facts.driver_version is None:
        status = WARN if facts.has_gpu else SKIP
        return [CheckResult("driver", status, "unknown", str(req.driver),
                            facts.unknown.get("driver_version", "driver version unreadable"))]
    if not _satisfies(facts.driver_version, req.driver):
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
    if facts.driver_version is None:
        if not facts.has_gpu:
            return [CheckResult(name, SKIP, "no driver found", expected, "No GPU; nothing to check.")]
        if facts.unknown.get("driver_version") == NOT_IN_EVIDENCE:
            return [CheckResult(name, SKIP, f"{NOT_JUDGED}: driver version unknown", expected)]
        return [CheckResult(name, WARN, "unknown", expected,
                            facts.unknown.get("driver_version", "driver version unreadable"))]
    found = _version(facts.driver_version)
    if found is None:
        return [CheckResult(name, WARN, facts.driver_version, expected, "Unparseable driver version.")]
    if found < floor:
        return [CheckResult(name, FAIL, facts.driver_version, expected,
                            f"torch {facts.torch_version} bundles the CUDA {facts.torch_cuda} runtime, which "
                            f"this driver cannot run (\"driver version is insufficient\"). Upgrade the driver "
                            f"to >= {floor}, or install a torch wheel built for an older CUDA. Installing a "
                            f"CUDA toolkit does not help: the runtime comes with torch ({COMPATIBILITY_DOC}).")]
    return [CheckResult(name, PASS, facts.driver_version, expected)]


# --- cuDNN ---------------------------------------------------------------------------


def check_cudnn(facts: Facts, req: Requirements) -> List[CheckResult]:
    if req.cudnn is None:
        if facts.cudnn_version is None:
            return []
        return [CheckResult("cudnn", PASS, facts.cudnn_version, ANY)]
    skipped = _no_torch("cudnn", facts)
    if skipped:
        return skipped
    if facts.cudnn_version is None:
        if not facts.has_gpu:  # as driver and compute-capability: nothing to judge without a GPU
            return [CheckResult("cudnn", SKIP, "no GPU", str(req.cudnn))]
        if facts.cudnn_available is False:
            reason = facts.unknown.get("cudnn_version", "torch reports no cuDNN (cuDNN failed to load).")
            return [CheckResult("cudnn", FAIL, "none", str(req.cudnn), reason)]
        return [CheckResult("cudnn", SKIP, f"{NOT_JUDGED}: unknown", str(req.cudnn),
                            facts.unknown.get("cudnn_version", "cuDNN version unreadable"))]
    if not _satisfies(facts.cudnn_version, req.cudnn):
        return [CheckResult("cudnn", FAIL, facts.cudnn_version, str(req.cudnn),
                            "torch loads the cuDNN its wheel depends on (the nvidia-cudnn-cu* package); "
                            "install a torch release that ships a matching cuDNN.")]
    return [CheckResult("cudnn", PASS, facts.cudnn_version, str(req.cudnn))]


def check_cudnn_enabled(facts: Facts, req: Requirements) -> List[CheckResult]:
    name = "cudnn-enabled"
    if not facts.has_gpu or facts.torch_build != "cuda":
        return [CheckResult(name, SKIP, "no CUDA GPU", "-")]
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


# --- environment variables -----------------------------------------------------------


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
