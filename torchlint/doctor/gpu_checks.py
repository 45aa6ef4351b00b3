"""The doctor's checks of the GPUs: present, named as declared, of a supported compute capability, and covered by the
kernels the torch wheel ships."""

from __future__ import annotations

from typing import List, Optional

from torchlint.doctor.archs import kernel_coverage, parse_arch
from torchlint.doctor.check_basics import INSTALL_PAGE, gpu_label, gpus_unstated, no_gpu_found, no_gpu_reason, satisfies
from torchlint.doctor.compat import CUDA_RELEASE_NOTES, cuda_builds_for
from torchlint.doctor.facts import Facts, Gpu
from torchlint.core.runtime_requirements import Requirements
from torchlint.doctor.results import FAIL, NOT_IN_EVIDENCE, NOT_JUDGED, PASS, SKIP, WARN, CheckResult
from torchlint.doctor.wheels import Shipped, cuda_install_advice, runs_on, shipped


def _gpu_names(facts: Facts) -> str:
    return ", ".join(gpu.name or "?" for gpu in facts.gpus) or f"{facts.device_count} device(s)"


def check_gpu(facts: Facts, req: Requirements) -> List[CheckResult]:
    expected = "at least one" if req.require_gpu else "not required"
    if facts.has_gpu:
        return [CheckResult("gpu", PASS, _gpu_names(facts), expected)]
    if gpus_unstated(facts):  # is_available() is True: torch sees at least one GPU, which the text does not name
        return [CheckResult("gpu", PASS, f"CUDA available; GPU models {NOT_IN_EVIDENCE}", expected)]
    if facts.gpus and facts.torch_build == "cpu":
        return [CheckResult("gpu", FAIL if req.require_gpu else WARN, f"{_gpu_names(facts)} (CPU-only torch build)",
                            expected, "The machine has an NVIDIA GPU but this torch build cannot use it; "
                            "see torch-build for a CUDA build that exists.")]
    reason = no_gpu_reason(facts)
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
        return [CheckResult("gpu-name", SKIP, no_gpu_found(facts), expected)]
    results = []
    for gpu in facts.gpus:
        name = gpu.name or ""
        ok = any(wanted.lower() in name.lower() for wanted in req.gpu_name)
        results.append(CheckResult("gpu-name", PASS if ok else FAIL, gpu_label(gpu), expected,
                                   "" if ok else "This GPU is not one the project declares; "
                                   "select another with CUDA_VISIBLE_DEVICES."))
    return results


def check_compute_capability(facts: Facts, req: Requirements) -> List[CheckResult]:
    spec = req.compute_capability
    if spec is None:
        return []
    if not facts.has_gpu:
        return [CheckResult("compute-capability", SKIP, no_gpu_found(facts), str(spec))]
    results = []
    for gpu in facts.gpus:
        found = f"{gpu.capability or 'unknown'} ({gpu_label(gpu)})"
        if gpu.capability is None:
            results.append(CheckResult("compute-capability", WARN, found, str(spec), "Capability unreadable."))
        elif satisfies(gpu.capability, spec):
            results.append(CheckResult("compute-capability", PASS, found, str(spec)))
        else:
            results.append(CheckResult("compute-capability", FAIL, found, str(spec),
                                       "This GPU is older than the project declares it needs."))
    return results


def check_kernel_image(facts: Facts, req: Requirements) -> List[CheckResult]:
    if not facts.has_gpu:
        return [CheckResult("kernel-image", SKIP, no_gpu_found(facts), "-")]
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
            results.append(CheckResult("kernel-image", WARN, f"{gpu_label(gpu)}: capability unknown", shown))
            continue
        sm = "sm_" + gpu.capability.replace(".", "")
        cubin, ptx = kernel_coverage(gpu.capability, arch_list)
        found = f"{gpu_label(gpu)} is {sm}"
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
        return CheckResult("kernel-image", SKIP, f"{NOT_JUDGED}: {gpu_label(gpu)}, capability unknown", "-")
    sm = "sm_" + gpu.capability.replace(".", "")
    wheel = shipped_by_wheel(facts)
    if wheel is not None:
        found = f"{gpu_label(gpu)} is {sm}; torch {facts.torch_version} wheel"
        shown = " ".join(wheel.archs)
        if runs_on(wheel.archs, gpu.capability):
            return CheckResult("kernel-image", PASS, found, shown)
        return CheckResult("kernel-image", FAIL, found, shown,
                           f"The published torch {wheel.release} {wheel.variant} wheels ship {shown} ({wheel.source}), "
                           f"nothing for {sm}. " + cuda_install_advice(facts.torch_version or "", gpu.capability,
                                                                       facts.platform))
    support = cuda_builds_for(facts.torch_cuda or "", gpu.capability)
    found = f"{gpu_label(gpu)} is {sm}; CUDA {facts.torch_cuda} build"
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
