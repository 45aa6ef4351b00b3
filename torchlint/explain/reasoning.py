"""Reason over a log's evidence with the doctor's own tables: the specific cause.

"This GPU (sm_86) has no kernels in a cu101 build" beats three generic causes. Each
diagnosis names the clues it used. A diagnosis is made only for the error families whose
signatures ask for it (`evidence = [...]` in signatures.toml), so an environment detail
never becomes the explanation of an error it cannot cause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import List, Optional, Sequence, Set

from torchlint.doctor.archs import kernel_coverage, parse_arch
from torchlint.doctor.check_basics import parse_version, visible_devices_problem
from torchlint.doctor.gpu_checks import shipped_by_wheel
from torchlint.doctor.runtimes import library_context
from torchlint.doctor.compat import (
    COMPATIBILITY_DOC,
    PREVIOUS_VERSIONS_PAGE,
    cuda_builds_for,
    minimum_driver,
    newest_cuda_of_torch,
)
from torchlint.doctor.wheels import cuda_install_advice, runs_on
from torchlint.explain.evidence import Clue, Evidence
from torchlint.explain.knowledge import EVIDENCE_KINDS, Match

KERNELS, DRIVER, VISIBLE_DEVICES, WSL, LOADER = EVIDENCE_KINDS
# A CUDA library file named in a log line: libcudnn_cnn_infer.so.8, cudnn64_9.dll, cublasLt64_12.dll
_LIBRARY = re.compile(r"\b(lib(?:cudnn|cublas|cudart|nccl)\w*\.so(?:\.\d+)+|(?:cudnn|cublas|cublasLt|cudart)\w*?64_\d+\.dll)")
INSTALL_PAGE = "https://pytorch.org/get-started/locally/"


@dataclass(frozen=True)
class Diagnosis:
    kind: str
    cause: str
    advice: str
    clues: Sequence[Clue]


def diagnose(evidence: Evidence, matches: List[Match]) -> List[Diagnosis]:
    """The environment causes the evidence proves for the matched error families."""
    wanted: Set[str] = {kind for m in matches for kind in m.signature.evidence}
    found: List[Diagnosis] = []
    if KERNELS in wanted:
        found += _kernels(evidence)
    if DRIVER in wanted:
        found += _driver(evidence)
    if VISIBLE_DEVICES in wanted:
        found += _visible_devices(evidence)
    if LOADER in wanted:
        found += _loader(evidence, [m for m in matches if LOADER in m.signature.evidence])
    if WSL in wanted and evidence.wsl1:
        found.append(Diagnosis(
            WSL,
            "This runs under WSL1 (its kernel is 4.4.0-...-Microsoft), which has no GPU support: CUDA in WSL "
            "needs WSL2, where the Windows NVIDIA driver provides libcuda.so in /usr/lib/wsl/lib.",
            "Convert the distribution to WSL2 from Windows (`wsl --set-version <distro> 2`, and `wsl "
            "--set-default-version 2` for new ones), keep the Windows NVIDIA driver up to date, and do not "
            "install a Linux NVIDIA driver inside the distribution.",
            evidence.used("wsl1")))
    elif WSL in wanted and evidence.wsl:
        found.append(Diagnosis(
            WSL,
            "This runs under WSL2, where libcuda.so is not a Linux driver file: the Windows NVIDIA driver "
            "provides it in /usr/lib/wsl/lib, and the loader must find it there.",
            "Make sure /usr/lib/wsl/lib is on the loader path (`export LD_LIBRARY_PATH=/usr/lib/wsl/lib:"
            "$LD_LIBRARY_PATH`, or `sudo ldconfig` after checking /etc/ld.so.conf.d/ld.wsl.conf) and update the "
            "Windows driver. Do not install a Linux NVIDIA driver inside WSL2: it replaces the WSL stub.",
            evidence.used("wsl")))
    return found


# products whose processes are torch's: a torch version in their log says what the process loads
_RUNS_ON_TORCH = frozenset({"product:torch", "product:vllm", "product:dgl", "product:comfyui"})


def _loader(evidence: Evidence, matches: List[Match]) -> List[Diagnosis]:
    """Who needs the library the log could not load, from the doctor's runtime tables. In the log of another
    framework (ONNX Runtime, TensorFlow) a torch installed beside it does not say which library that framework asks
    for, so torch's need is left out there."""
    names = dict.fromkeys(hit.group(1) for m in matches for hit in _LIBRARY.finditer(m.excerpt))
    facts = evidence.facts
    if any(feature.startswith("product:") and feature not in _RUNS_ON_TORCH for feature in evidence.features):
        facts = replace(facts, torch_version=None, torch_cuda=None, torch_build="unknown",
                        packages={name: version for name, version in facts.packages.items() if name != "torch"})
    results = []
    for name in names:
        context = library_context(name, facts)
        if context and context.count(". ") >= 1:  # more than "X is cuDNN 8.": someone's need is known
            results.append(Diagnosis(
                LOADER, context,
                "Make the loader find the major version the program needs (its nvidia-* pip package, or its "
                "directory first on LD_LIBRARY_PATH / PATH); a library of another major version does not replace "
                "it. `torchlint doctor` lists which copy each runtime gets.",
                evidence.used("torch", "torch-cuda", "package")))
    return results


def _kernels(evidence: Evidence) -> List[Diagnosis]:
    facts = evidence.facts
    results = []
    for gpu in facts.gpus:
        if gpu.capability is None:
            continue
        sm = "sm_" + gpu.capability.replace(".", "")
        label = f"{gpu.name} ({sm})" if gpu.name else f"this GPU ({sm})"
        clues = evidence.used("gpu", "torch", "torch-cuda", "arch-list")
        stated = _stated_arch_list(evidence, gpu.capability)
        if stated:
            results.append(Diagnosis(
                KERNELS, f"{label} has no kernels in this torch install: {stated}.",
                f"Install a torch build whose torch.cuda.get_arch_list() has an sm_{gpu.capability.split('.')[0]}x "
                f"entry ({INSTALL_PAGE}; older releases: {PREVIOUS_VERSIONS_PAGE}). Driver and system-toolkit "
                "changes do not add kernels to torch.", clues))
            continue
        wheel = shipped_by_wheel(facts)
        if wheel is not None:
            if not runs_on(wheel.archs, gpu.capability):
                results.append(Diagnosis(
                    KERNELS,
                    f"{label} has no kernels in torch {facts.torch_version}: the published torch {wheel.release} "
                    f"{wheel.variant} wheels ship {' '.join(wheel.archs)} ({wheel.source}).",
                    cuda_install_advice(facts.torch_version or "", gpu.capability, facts.platform)
                    + " Driver and system-toolkit changes do not add kernels to torch.", clues))
            continue
        if facts.torch_cuda:
            support = cuda_builds_for(facts.torch_cuda, gpu.capability)
            if support and not support[0]:
                results.append(Diagnosis(
                    KERNELS,
                    f"{label} has no kernels in a torch build made with CUDA {facts.torch_cuda}: that CUDA "
                    f"release cannot build for {sm} ({support[1]} can).",
                    f"Install a torch build made with {support[1]} ({INSTALL_PAGE}; older releases: "
                    f"{PREVIOUS_VERSIONS_PAGE}). Driver and system-toolkit changes do not add kernels to torch.",
                    clues))
                continue
        if facts.torch_version:
            newest = newest_cuda_of_torch(facts.torch_version)
            support = cuda_builds_for(newest, gpu.capability) if newest else None
            if support and not support[0] and support[1].startswith("CUDA >= ") and " and " not in support[1]:
                release = ".".join(facts.torch_version.split("+")[0].split(".")[:2])
                results.append(Diagnosis(
                    KERNELS,
                    f"{label} is newer than every build of torch {release}: its newest build uses CUDA "
                    f"{newest}, and {sm} needs {support[1]}.",
                    f"Upgrade torch to a release with a {support[1]} build ({INSTALL_PAGE}); code pinned to "
                    f"torch {release} cannot run on this GPU.",
                    clues))
    return results


def _stated_arch_list(evidence: Evidence, capability: str) -> Optional[str]:
    """Why the arch list torch printed in the log cannot serve this GPU, judged as torch does."""
    arch_list = evidence.facts.arch_list
    if arch_list:
        cubin, ptx = kernel_coverage(capability, arch_list)
        major = int(capability.split(".")[0])
        if cubin is None and not (ptx and (parse_arch(ptx) or ("", -1))[1] == major):
            return f"torch lists {' '.join(arch_list)}, none of them for this GPU's major version"
    minimum = evidence.minimum_capability
    if minimum and parse_version(capability) is not None and parse_version(capability) < parse_version(minimum):
        return f"torch says its minimum capability is {minimum}"
    return None


def _driver(evidence: Evidence) -> List[Diagnosis]:
    facts = evidence.facts
    cuda = parse_version(facts.torch_cuda)
    if cuda is None:
        return []
    clues = evidence.used("driver", "torch", "torch-cuda")
    floor = minimum_driver(facts.torch_cuda or "", facts.platform)
    driver = parse_version(facts.driver_version)
    if floor is not None and driver is not None and driver < floor:
        return [Diagnosis(
            DRIVER,
            f"The NVIDIA driver {facts.driver_version} is older than CUDA {facts.torch_cuda} (torch's bundled "
            f"runtime) needs: >= {floor}.",
            f"Upgrade the driver (on the host, for containers), or install a torch build for an older CUDA. "
            f"A new CUDA toolkit does not help: the runtime comes with torch ({COMPATIBILITY_DOC}).",
            clues)]
    smi = parse_version(evidence.nvidia_smi_cuda)
    if smi is not None and (smi.major < cuda.major or (cuda.major < 11 and smi < cuda)):
        return [Diagnosis(
            DRIVER,
            f"This driver runs CUDA <= {evidence.nvidia_smi_cuda} ({evidence.driver_cuda_source}), but torch was "
            f"built with CUDA {facts.torch_cuda}.",
            f"Upgrade the driver, or install a torch build for CUDA {evidence.nvidia_smi_cuda} or older "
            f"({COMPATIBILITY_DOC}).",
            clues)]
    return []


def _visible_devices(evidence: Evidence) -> List[Diagnosis]:
    value = evidence.facts.env.get("CUDA_VISIBLE_DEVICES")
    problem = visible_devices_problem(value) if value is not None else None
    if not problem:
        return []
    return [Diagnosis(VISIBLE_DEVICES, f"CUDA_VISIBLE_DEVICES={value}: {problem}",
                      "Fix the variable before the process starts (or in the script before its first CUDA call); "
                      "indices then count from 0 among the visible GPUs.", evidence.used("env"))]
