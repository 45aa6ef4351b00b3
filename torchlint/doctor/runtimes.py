"""The other GPU runtimes installed beside torch, and whether they can share one process.

Probe half: `probe_runtimes` reads distribution versions (and their nvidia-* requirements)
with importlib.metadata, never importing a package (importing TensorFlow alone takes
seconds), the packages' build records, and the loader's libraries (torchlint/doctor/loader.py).

Check half (pure): what each runtime is built for (torchlint/doctor/runtime_builds.py) is
compared with torch's, with the other runtimes', and with what the environment provides.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import sys
from typing import Dict, List, Optional, Sequence, Tuple

from packaging.utils import canonicalize_name

from torchlint.doctor.facts import Facts
from torchlint.doctor.loader import Expectation, check_loader, parse_library_name
from torchlint.core.runtime_requirements import Requirements
from torchlint.doctor.results import FAIL, PASS, SKIP, WARN, CheckResult
from torchlint.doctor.runtime_builds import (
    NVIDIA_WHEEL,
    Need,
    contains,
    nvidia_requirements,
    read_build_files,
    runtime_needs,
    version_major,
)

# Distributions recorded in Facts.packages: the GPU stack and everything that can shadow it.
RECORDED = re.compile(
    r"^(torch|onnxruntime(-gpu|-directml|-openvino|-qnn|-rocm|-training)?|ort-nightly(-gpu)?"
    r"|tensorflow(-cpu|-gpu|-intel|-macos|-rocm)?|tf-nightly(-cpu|-gpu)?"
    r"|jax|jaxlib|jax-cuda\d+-(plugin|pjrt)|cupy(-cuda[0-9a-z]+|-rocm[0-9a-z-]+)?|paddlepaddle(-gpu)?|nvidia-[a-z0-9-]+)$"
)
# The recorded distributions that are GPU runtimes with their own CUDA/cuDNN needs.
RUNTIME = re.compile(
    r"^(onnxruntime-gpu|tensorflow|tensorflow-gpu|jaxlib|jax-cuda\d+-plugin|cupy-cuda[0-9a-z]+|paddlepaddle-gpu)$"
)
# Distributions that install the same `onnxruntime` import package as onnxruntime-gpu.
ONNXRUNTIME_FLAVOURS = ("onnxruntime", "onnxruntime-directml", "onnxruntime-openvino", "onnxruntime-qnn",
                        "onnxruntime-rocm", "onnxruntime-training")


# --- probe -------------------------------------------------------------------------------


_INSTALLED: Dict[tuple, Tuple[Dict[str, str], Dict[str, List[str]]]] = {}


def installed_packages(path: Optional[Sequence[str]] = None) -> Tuple[Dict[str, str], Dict[str, List[str]]]:
    """(name -> version, name -> nvidia-* Requires-Dist) of the GPU-stack distributions on `path`
    (default: sys.path).

    Metadata only: nothing is imported. Where one name is installed twice, the first on the
    path wins, as it does for import. Reading every distribution's metadata costs tens of
    milliseconds, so the answer is kept while no directory of the path changes (installing or
    removing a distribution changes its directory): a repeated `verify()` costs a few `stat`s.
    """
    entries = list(path) if path is not None else list(sys.path)
    version = tuple((entry, _modified(entry)) for entry in entries)
    if version not in _INSTALLED:
        _INSTALLED.clear()
        _INSTALLED[version] = _read_installed(path)
    packages, requires = _INSTALLED[version]
    return dict(packages), {name: list(found) for name, found in requires.items()}


def _modified(entry: str) -> Optional[int]:
    try:
        return os.stat(entry or ".").st_mtime_ns
    except OSError:
        return None


def _read_installed(path: Optional[Sequence[str]]) -> Tuple[Dict[str, str], Dict[str, List[str]]]:
    packages: Dict[str, str] = {}
    requires: Dict[str, List[str]] = {}
    for dist in importlib.metadata.distributions(**({"path": list(path)} if path is not None else {})):
        try:
            name = canonicalize_name(dist.metadata["Name"] or "")
            version = dist.version
        except Exception:  # a broken dist-info: skip it, the probe never raises
            continue
        if not name or not RECORDED.match(name) or name in packages or not isinstance(version, str):
            continue
        packages[name] = version
        if not name.startswith("nvidia-"):
            nvidia = [entry for entry in (dist.requires or []) if entry.lower().startswith("nvidia-")]
            if nvidia:
                requires[name] = nvidia
    return dict(sorted(packages.items())), dict(sorted(requires.items()))


def probe_runtimes(facts: Facts) -> None:
    """Fill the packages, their nvidia-* requirements, the loader's libraries and WSL; never raises."""
    from torchlint.doctor.loader import ld_cache_entries, running_on_wsl, scan_libraries

    try:
        facts.packages, facts.package_requires = installed_packages()
    except Exception as error:  # importlib.metadata over a damaged site-packages
        facts.unknown["packages"] = f"{type(error).__name__}: {error}"
    windows = sys.platform.startswith("win")
    site_dirs = [entry for entry in sys.path if entry and os.path.isdir(entry)]
    facts.package_builds = read_build_files(site_dirs)
    try:
        search = os.environ.get("PATH" if windows else "LD_LIBRARY_PATH", "")
        facts.libraries = scan_libraries(search, site_dirs, windows, [] if windows else ld_cache_entries())
    except Exception as error:
        facts.unknown["libraries"] = f"{type(error).__name__}: {error}"
    facts.wsl = sys.platform.startswith("linux") and running_on_wsl()


# --- checks ------------------------------------------------------------------------------


def torch_need(facts: Facts) -> Optional[Need]:
    """The CUDA and cuDNN this torch build uses (what it reports, else its wheel's metadata)."""
    version = facts.torch_version or facts.packages.get("torch")
    if version is None or facts.torch_build in ("cpu", "rocm"):
        return None
    from_metadata = runtime_needs("torch", version, facts.package_requires.get("torch", ()), facts.platform)
    cuda = facts.torch_cuda or (from_metadata.cuda if from_metadata else None)
    if cuda is None:
        return None
    cudnn = facts.cudnn_version or (from_metadata.cudnn if from_metadata else None)
    if cudnn is None:  # e.g. pasted collect_env text: torch's CUDA wheels depend on nvidia-cudnn-cu<major>
        cudnn = facts.packages.get(f"nvidia-cudnn-cu{version_major(cuda)}")
    return Need("torch", version, cuda, cudnn, "torch.version.cuda / torch.backends.cudnn.version()")


def runtime_needs_of(facts: Facts) -> List[Need]:
    """The needs of every co-installed GPU runtime (torch excluded), in name order."""
    needs = []
    for name, version in sorted(facts.packages.items()):
        if not RUNTIME.match(name):
            continue
        need = runtime_needs(name, version, facts.package_requires.get(name, ()), facts.platform,
                             facts.package_builds)
        if need is not None and (need.cuda or not need.gpu):
            needs.append(need)
    return needs


def provided_majors(facts: Facts, family: str) -> Dict[int, str]:
    """Majors of cuDNN (family 'cudnn') or CUDA ('cuda') this environment can load, and from where."""
    provided: Dict[int, str] = {}
    for library in facts.libraries or []:
        wanted = ("cudnn",) if family == "cudnn" else ("cudart", "cublas")
        if library.family in wanted and library.stem in wanted and library.major is not None:
            provided.setdefault(library.major, library.path)
    for name, version in facts.packages.items():
        match = NVIDIA_WHEEL.match(name)
        if not match:
            continue
        if family == "cudnn" and match.group("library") == "cudnn" and version_major(version) is not None:
            provided.setdefault(version_major(version), f"{name} {version}")
        elif family == "cuda" and match.group("library") in ("cuda-runtime", "cublas"):
            provided.setdefault(int(match.group("cuda")), f"{name} {version}")
    if family == "cuda":
        # From CUDA 13 these two wheels carry no -cuNN suffix; their version is the CUDA release.
        for name in ("nvidia-cuda-runtime", "nvidia-cublas"):
            major = version_major(facts.packages.get(name))
            if major is not None:
                provided.setdefault(major, f"{name} {facts.packages[name]}")
    torch = torch_need(facts)
    if torch is not None:
        major = torch.cudnn_major if family == "cudnn" else torch.cuda_major
        if major is not None:
            provided.setdefault(major, f"torch {torch.version}")
    return provided


def check_gpu_runtimes(facts: Facts, req: Requirements) -> List[CheckResult]:
    """Each co-installed runtime against torch and the others: FAIL when its CUDA/cuDNN cannot load."""
    needs = runtime_needs_of(facts)
    if not needs:
        return []
    torch = torch_need(facts)
    searched = facts.libraries is not None
    declared = {canonicalize_name(name) for name, _ in req.packages}
    results = []
    for need in needs:
        name = "gpu-runtimes"
        if not need.gpu:
            results.append(CheckResult(name, SKIP, need.describe(), "-",
                                       f"No GPU build of this release on this platform ({need.source})."))
            continue
        others = ([torch] if torch else []) + [other for other in needs if other is not need and other.gpu]
        expected = f"CUDA {torch.cuda_major}, cuDNN {torch.cudnn_major} (torch {torch.version})" if torch \
            else "the CUDA/cuDNN majors of the other GPU runtimes"
        # a runtime the project declares must load; one it does not may be unused here
        certain = searched or canonicalize_name(need.distribution) in declared
        status, advice = _judge(facts, need, others, certain)
        results.append(CheckResult(name, status, need.describe(), expected, advice, f"source: {need.source}"))
    return results


def _judge(facts: Facts, need: Need, others: List[Need], certain: bool) -> Tuple[str, str]:
    """PASS, or the worst problem and the advice; a library that cannot load is a FAIL when
    `certain` (the libraries were searched, or the project declares the runtime), else a WARN."""
    problems: List[Tuple[str, str]] = []
    labels = []
    for kind, mine in (("cudnn", need.cudnn_major), ("cuda", need.cuda_major)):
        label = "cuDNN" if kind == "cudnn" else "CUDA"
        theirs = [other for other in others if _major_of(other, kind) not in (None, mine)]
        if mine is None or not theirs:
            continue
        other = theirs[0]
        provided = provided_majors(facts, kind)
        if mine in provided and _major_of(other, kind) not in provided:
            continue  # only the other runtime is short of its library: its own row says so
        labels.append(label)
        if mine not in provided:
            problems.append((FAIL if certain else WARN,
                f"It needs {label} {mine} but this environment provides only {label} "
                f"{', '.join(map(str, sorted(provided))) or '(none found)'}, so it cannot load its {label} "
                f"next to {other.distribution} (expect \"Could not load library {_example_library(kind, mine)}\" "
                f"or a silent fall-back to CPU).{_one_wheel(kind, need, other)}"))
        else:
            problems.append((WARN,
                f"{label} {mine} ({provided[mine]}) and {label} {_major_of(other, kind)} (for "
                f"{other.distribution}) are both loadable, so the two share a process only by luck of load "
                f"order: whichever is imported first decides which {label} the other resolves."))
    if not problems:
        return PASS, ""
    worst = FAIL if any(status == FAIL for status, _ in problems) else WARN
    where = need.source if need.source.startswith("http") else "its install page"
    fix = (f"Install a release of {need.distribution} built for the same {' and '.join(labels)} major as "
           f"{others[0].distribution} ({where}), or run the two in separate processes.")
    return worst, " ".join(text for _, text in problems) + " " + fix


def _one_wheel(kind: str, need: Need, other: Need) -> str:
    # Two cuDNN majors for one CUDA major would both come from nvidia-cudnn-cu<N>: one version only.
    if kind != "cudnn" or need.cuda_major is None or need.cuda_major != other.cuda_major:
        return ""
    return (f" Both take cuDNN from nvidia-cudnn-cu{need.cuda_major}, which holds one version: the two cannot "
            "be satisfied in one environment.")


def _major_of(need: Need, kind: str) -> Optional[int]:
    return need.cudnn_major if kind == "cudnn" else need.cuda_major


def _example_library(kind: str, major: int) -> str:
    return f"libcudnn_cnn_infer.so.{major}" if kind == "cudnn" else f"libcublasLt.so.{major}"


def check_nvidia_wheel_majors(facts: Facts, req: Requirements) -> List[CheckResult]:
    """nvidia-<lib>-cu11 beside -cu12 (or -cu13): they share site-packages/nvidia/<lib>/."""
    by_library: Dict[str, List[Tuple[str, str, str]]] = {}
    for name, version in sorted(facts.packages.items()):
        match = NVIDIA_WHEEL.match(name)
        if match:
            by_library.setdefault(match.group("library"), []).append((match.group("cuda"), name, version))
    if not by_library:
        return []
    results = []
    for library, wheels in by_library.items():
        if len({cuda for cuda, _, _ in wheels}) < 2:
            continue
        shown = ", ".join(f"{name} {version}" for _, name, version in wheels)
        folder = library.replace("-", "_")  # nvidia-cuda-runtime-cu12 installs nvidia/cuda_runtime/
        # NVIDIA numbers these wheels by the library's own version, whose major is the
        # soname's: two wheels with one major ship the same file name (libnccl.so.2).
        majors = [version_major(version) for _, _, version in wheels]
        if len(set(majors)) < len(majors):
            results.append(CheckResult(
                "nvidia-wheel-majors", FAIL, shown, f"one CUDA major of nvidia-{library}",
                f"Both wheels install the same file into site-packages/nvidia/{folder}/ (same soname major "
                f"{majors[0]}): the one installed last overwrote the other, so one of the runtimes loads a "
                "library built for the wrong CUDA major, and uninstalling either breaks both. Keep one "
                f"CUDA major: `pip uninstall` the {wheels[0][1]} or {wheels[-1][1]} side and reinstall the "
                "runtime that needs the other."))
        else:
            results.append(CheckResult(
                "nvidia-wheel-majors", WARN, shown, f"one CUDA major of nvidia-{library}",
                f"Both wheels share site-packages/nvidia/{folder}/ (headers and __init__ overwrite each "
                "other; uninstalling one removes files of the other) and which library a runtime loads "
                "depends on load order. Prefer one CUDA major per environment."))
    return results


def check_onnxruntime_flavours(facts: Facts, req: Requirements) -> List[CheckResult]:
    """onnxruntime (CPU) or another flavour beside onnxruntime-gpu."""
    if "onnxruntime-gpu" not in facts.packages:
        return []
    others = [name for name in ONNXRUNTIME_FLAVOURS if name in facts.packages]
    if not others:
        return []
    shown = ", ".join(f"{name} {facts.packages[name]}" for name in ["onnxruntime-gpu", *others])
    owner = facts.package_builds.get("onnxruntime/capi/build_and_package_info.py", {}).get("package_name")
    which = (f"the files in place are {owner}'s" if owner
             else "`import onnxruntime` may load the CPU build")
    return [CheckResult(
        "onnxruntime-flavours", FAIL, shown, "onnxruntime-gpu alone",
        f"{' and '.join(others)} installs the same `onnxruntime` package as onnxruntime-gpu: the one "
        f"installed last overwrote the other's files, and {which} (get_available_providers() may lack "
        "CUDAExecutionProvider). Fix: `pip uninstall -y "
        f"{' '.join(others)} onnxruntime-gpu && pip install onnxruntime-gpu`.")]


def check_declared_packages(facts: Facts, req: Requirements) -> List[CheckResult]:
    """Runtime packages declared under [tool.torchlint.runtime] (e.g. onnxruntime-gpu = ">=1.19")."""
    results = []
    for name, spec in req.packages:
        found = facts.packages.get(canonicalize_name(name))
        check, expected = "declared-packages", f"{name} {spec}"
        if found is None:
            results.append(CheckResult(check, FAIL, f"{name} not installed", expected,
                                       f"`pip install \"{name}{spec}\"`."))
        elif not contains(spec, found):
            results.append(CheckResult(check, FAIL, f"{name} {found}", expected,
                                       f"Install a release of {name} matching {spec}."))
        else:
            results.append(CheckResult(check, PASS, f"{name} {found}", expected))
    return results


def loader_expectations(facts: Facts) -> List[Expectation]:
    """The sonames torch and the other runtimes will ask the loader for, with the minimum versions known."""
    expectations: List[Expectation] = []
    torch = torch_need(facts)
    if torch is not None:
        who = f"torch {torch.version}"
        pins = _pinned_versions(facts.package_requires.get("torch", ()))
        if torch.cudnn_major is not None:
            minimum = pins.get("cudnn") if version_major(pins.get("cudnn")) == torch.cudnn_major else None
            expectations.append(Expectation("cudnn", torch.cudnn_major, _two_parts(minimum), who))
        if torch.cuda_major is not None:
            expectations.append(Expectation("cublas", torch.cuda_major, None, who))
            expectations.append(Expectation("cudart", torch.cuda_major, None, who))
        if "nccl" in pins:
            expectations.append(Expectation("nccl", version_major(pins["nccl"]) or 2, _two_parts(pins["nccl"]), who))
    for need in runtime_needs_of(facts):
        if not need.gpu:
            continue
        who = f"{need.distribution} {need.version}"
        if need.cudnn_major is not None:
            minimum = need.cudnn if need.cudnn and "." in need.cudnn else None
            expectations.append(Expectation("cudnn", need.cudnn_major, minimum, who))
        if need.cuda_major is not None:
            expectations.append(Expectation("cublas", need.cuda_major, None, who))
    return _distinct(expectations)


def _pinned_versions(requires: Sequence[str]) -> Dict[str, str]:
    pins = {}
    for match, requirement in nvidia_requirements(requires):
        exact = [spec.version for spec in requirement.specifier if spec.operator == "=="]
        if exact:
            pins[match.group("library")] = exact[0]
    return pins


def _two_parts(version: Optional[str]) -> Optional[str]:
    return ".".join(version.split(".")[:2]) if version else None


def _distinct(expectations: List[Expectation]) -> List[Expectation]:
    seen = set()
    kept = []
    for expectation in expectations:
        key = (expectation.family, expectation.major)
        if key not in seen:
            seen.add(key)
            kept.append(expectation)
    return kept


def check_runtime_loader(facts: Facts, req: Requirements) -> List[CheckResult]:
    """The loader half of the runtime checks: the libraries the runtimes above will be given."""
    return check_loader(facts, req, loader_expectations(facts))


def library_context(name: str, facts: Facts) -> Optional[str]:
    """For explain: who in `facts` needs the CUDA library a log names, and where the loader finds it.

    `library_context("cudnn64_9.dll", facts)` -> "cudnn64_9.dll is cuDNN 9. torch 2.5.1+cu124
    (CUDA 12.4, cuDNN 9.1.0) uses cuDNN 9; ... Found: C:\\...\\cudnn64_9.dll (PATH)." None when
    `name` is not a cuDNN/cuBLAS/CUDA runtime/NCCL/driver library.
    """
    parsed = parse_library_name(name.replace("\\", "/").rsplit("/", 1)[-1])
    if parsed is None or parsed.major is None:
        return None
    kind = {"cudnn": "cudnn", "cublas": "cuda", "cudart": "cuda"}.get(parsed.family)
    label = {"cudnn": "cuDNN", "cublas": "CUDA", "cudart": "CUDA", "nccl": "NCCL", "cuda": "the driver API"}[
        parsed.family]
    sentences = [f"{name} is {label} {parsed.major}."]
    if kind is not None:
        for need in [torch_need(facts), *runtime_needs_of(facts)]:
            major = _major_of(need, kind) if need is not None else None
            if major is not None:
                sentences.append(f"{need.describe()} {'needs' if major == parsed.major else 'uses'} {label} {major}.")
    if facts.libraries is not None:
        found = [f"{lib.path} ({lib.source})" for lib in facts.libraries
                 if lib.family == parsed.family and lib.stem.lower() == parsed.stem.lower() and lib.major == parsed.major]
        sentences.append(f"Found: {', '.join(found)}." if found else "Not found on the loader's search path.")
    return " ".join(sentences)
