"""The other GPU runtimes installed beside torch, and whether they can share one process.

Probe half: `installed_packages` reads distribution versions (and their nvidia-* requirements)
with importlib.metadata, never importing a package (importing TensorFlow alone takes seconds).

Check half (pure): `runtime_needs` says which CUDA and cuDNN a release of ONNX Runtime,
TensorFlow, JAX, CuPy or PaddlePaddle is built for, from its wheel metadata, its version
tag, its name or the cited table in torchlint/data/gpu_runtimes.toml; the checks compare
those needs with torch's and with each other, and with what the environment provides.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

from torchlint.doctor.facts import Facts
from torchlint.doctor.loader import Expectation, check_loader, parse_library_name
from torchlint.doctor.requirements import Requirements
from torchlint.doctor.results import FAIL, PASS, SKIP, WARN, CheckResult

TABLE_PATH = Path(__file__).resolve().parent.parent / "data" / "gpu_runtimes.toml"
WHEEL_METADATA = "the wheel's Requires-Dist"
VERSION_TAG = "the version's CUDA tag"

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
_NVIDIA_WHEEL = re.compile(r"^nvidia-(?P<library>[a-z0-9-]+?)-cu(?P<cuda>\d+)$")
_JAXLIB_TAG = re.compile(r"^cuda(?P<cuda>\d+)(?:\.cudnn(?P<cudnn>\d+))?$")
_TORCH_TAG = re.compile(r"^cu(?P<cuda>\d+)$")


class Need(NamedTuple):
    """What one installed GPU runtime needs at load time."""

    distribution: str
    version: str
    cuda: Optional[str]  # "12", "11.8"
    cudnn: Optional[str]  # "9", "8.9"; None: documents none or loads cuDNN only on demand
    source: str  # where the need comes from: a URL, or the wheel metadata / version tag
    gpu: bool = True  # False: this release has no GPU support on this platform

    @property
    def cuda_major(self) -> Optional[int]:
        return _major(self.cuda)

    @property
    def cudnn_major(self) -> Optional[int]:
        return _major(self.cudnn)

    def describe(self) -> str:
        parts = [f"CUDA {self.cuda}" if self.cuda else "", f"cuDNN {self.cudnn}" if self.cudnn else ""]
        built = ", ".join(part for part in parts if part) or "no CUDA"
        return f"{self.distribution} {self.version} ({built})"


def _major(text: Optional[str]) -> Optional[int]:
    if not text:
        return None
    head = text.split(".")[0]
    return int(head) if head.isdigit() else None


# --- the cited table ---------------------------------------------------------------------


@lru_cache(maxsize=1)
def _table() -> Dict[str, Any]:
    with open(TABLE_PATH, "rb") as handle:
        return tomllib.load(handle)


def runtime_needs(distribution: str, version: str, requires: Sequence[str] = (),
                  platform: Optional[str] = None, builds: Mapping[str, Mapping[str, str]] = {}) -> Optional[Need]:
    """The CUDA and cuDNN a release of a GPU runtime is built for, or None when unknown.

    Evidence in order of trust: the build record inside the installed package (`builds`,
    see `read_build_files`), the wheel's nvidia-* Requires-Dist (`requires`), a CUDA tag in
    its version (jaxlib "+cuda12.cudnn89", paddlepaddle-gpu ".post118", torch "+cu121"), the
    cited release table, the CUDA major in its name (cupy-cuda12x). Also for explain:
    `runtime_needs("onnxruntime-gpu", "1.18.0")` -> CUDA 11.8, cuDNN 8, with the source URL.
    """
    name = canonicalize_name(distribution)
    built = _from_build_file(name, version, builds)
    if built is not None:
        # build records give cuDNN as a bare major ("9"); the wheel's pin may say 9.3
        pinned = _from_requires(name, version, requires, platform or sys.platform)
        if pinned and pinned.cudnn and built.cudnn_major == pinned.cudnn_major and "." not in (built.cudnn or "."):
            built = built._replace(cudnn=pinned.cudnn, source=f"{built.source}; {pinned.source}")
        return built
    for derive in (_from_requires, _from_version_tag, _from_release_table, _from_name):
        need = derive(name, version, requires, platform or sys.platform)
        if need is not None:
            return need
    return None


def _from_requires(name: str, version: str, requires: Sequence[str], platform: str) -> Optional[Need]:
    cuda = cudnn = None
    evidence = []
    for match, requirement in _nvidia_requirements(requires):
        cuda = cuda or match.group("cuda")
        if match.group("library") == "cudnn":
            cudnn = cudnn or _lowest_release(requirement.specifier)
            evidence.append(f"{requirement.name}{requirement.specifier}")
    if cuda is None:
        return None
    source = f"{WHEEL_METADATA}: {', '.join(evidence)}" if evidence else f"{WHEEL_METADATA} (nvidia-*-cu{cuda})"
    return Need(name, version, cuda, cudnn, source)


def _nvidia_requirements(requires: Sequence[str]) -> Iterator[Tuple["re.Match[str]", Requirement]]:
    """The nvidia-<library>-cu<N> entries of a Requires-Dist list, parsed."""
    for text in requires:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        match = _NVIDIA_WHEEL.match(canonicalize_name(requirement.name))
        if match:
            yield match, requirement


def _lowest_release(specifier: SpecifierSet) -> Optional[str]:
    """The lowest major.minor a specifier admits: '==9.3.0.75' -> '9.3', '>=9.1,<10' -> '9.1'."""
    bounds = []
    for spec in specifier:
        if spec.operator in ("==", "===", ">=", "~=", ">"):
            try:
                bounds.append(Version(spec.version.rstrip(".*")).release[:2])
            except InvalidVersion:
                continue
    return ".".join(map(str, min(bounds))) if bounds else None


def _from_version_tag(name: str, version: str, requires: Sequence[str], platform: str) -> Optional[Need]:
    try:
        parsed = Version(version)
    except InvalidVersion:
        return None
    if name == "jaxlib" and parsed.local:
        match = _JAXLIB_TAG.match(parsed.local)
        if match:
            cudnn = match.group("cudnn")
            return Need(name, version, _dotted(match.group("cuda")), _dotted(cudnn) if cudnn else None, VERSION_TAG)
    if name == "torch" and parsed.local:
        match = _TORCH_TAG.match(parsed.local)
        if match:
            return Need(name, version, _dotted(match.group("cuda")), None, VERSION_TAG)
    if name == "paddlepaddle-gpu" and parsed.post:
        cuda = _dotted(str(parsed.post))
        row = _cuda_build_row(name, version, cuda)
        return Need(name, version, cuda, row.get("cudnn") if row else None, row["source"] if row else VERSION_TAG)
    return None


def _cuda_build_row(name: str, version: str, cuda: str) -> Optional[Dict[str, Any]]:
    """The cited cuDNN row of a CUDA build: `cuda` equal, or a bare major matching every minor."""
    for row in _table().get("cuda-build", []):
        if row["distribution"] != name or row["cuda"] not in (cuda, cuda.split(".")[0]):
            continue
        if "versions" not in row or _contains(SpecifierSet(row["versions"]), version):
            return row
    return None


# Files inside installed packages that record how the binary was built (read as text, never imported),
# keyed by path relative to site-packages, with the distribution they describe.
BUILD_FILES = {
    "onnxruntime/capi/build_and_package_info.py": "onnxruntime-gpu",
    "tensorflow/python/platform/build_info.py": "tensorflow",
}
# `cuda_version = '12.2'`, `"cuda_version": "12.3"`, `build_info["cudnn_version"] = "8"`, `('cuda_version', '12.3')`
_BUILD_VALUE = re.compile(r"""\b(package_name|cuda_version|cudnn_version)\b['"]?\]?\s*[:=,]\s*['"]([^'"]*)['"]""")


def _from_build_file(name: str, version: str, builds: Mapping[str, Mapping[str, str]]) -> Optional[Need]:
    for path, described in BUILD_FILES.items():
        info = builds.get(path, {})
        owner = canonicalize_name(info.get("package_name") or described)
        if described != name or owner != name or not info.get("cuda_version"):
            continue
        cuda, cudnn, source = info["cuda_version"], info.get("cudnn_version"), f"{path} in the installed package"
        if not cudnn:
            row = _cuda_build_row(name, version, cuda)
            cudnn = row.get("cudnn") if row else None
            source += f"; cuDNN: {row['source']}" if row else ""
        return Need(name, version, cuda, cudnn or None, source)
    return None


def read_build_files(site_dirs: Sequence[str]) -> Dict[str, Dict[str, str]]:
    """The build records (BUILD_FILES) of the installed packages; the first on the path wins, as for import."""
    builds: Dict[str, Dict[str, str]] = {}
    for relative in BUILD_FILES:
        for site in site_dirs:
            try:
                with open(os.path.join(site, relative), encoding="utf-8", errors="replace") as handle:
                    text = handle.read(65536)
            except OSError:
                continue
            builds[relative] = {key: value for key, value in _BUILD_VALUE.findall(text)}
            break
    return builds


def _dotted(digits: str) -> str:
    """CUDA tags drop the dot: '121' -> '12.1', '118' -> '11.8', '92' -> '9.2', '12' -> '12'."""
    if len(digits) == 3:
        return f"{digits[:2]}.{digits[2]}"
    if len(digits) == 2 and digits[0] != "1":
        return f"{digits[0]}.{digits[1]}"
    return digits


def _from_release_table(name: str, version: str, requires: Sequence[str], platform: str) -> Optional[Need]:
    try:
        parsed = Version(version)
    except InvalidVersion:
        return None
    release = Version(parsed.base_version)
    for row in _table().get("release", []):
        if row["distribution"] != name or not platform.startswith(row.get("platform", "")):
            continue
        if SpecifierSet(row["versions"]).contains(release, prereleases=True):
            cuda = row.get("cuda")
            return Need(name, version, cuda, row.get("cudnn"), row["source"], gpu=cuda is not None)
    return None


def _from_name(name: str, version: str, requires: Sequence[str], platform: str) -> Optional[Need]:
    for row in _table().get("name", []):
        match = re.match(row["pattern"], name)
        if match:
            digits = match.group("cuda")
            cuda = digits if match.groupdict().get("family") else _dotted(digits)  # cupy-cuda12x: any 12.x
            return Need(name, version, cuda, None, row["source"])
    return None


# --- probe -------------------------------------------------------------------------------


def installed_packages(path: Optional[Sequence[str]] = None) -> Tuple[Dict[str, str], Dict[str, List[str]]]:
    """(name -> version, name -> nvidia-* Requires-Dist) of the GPU-stack distributions on `path`.

    Metadata only: nothing is imported. Where one name is installed twice, the first on the
    path wins, as it does for import.
    """
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
        cudnn = facts.packages.get(f"nvidia-cudnn-cu{_major(cuda)}")
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
        match = _NVIDIA_WHEEL.match(name)
        if not match:
            continue
        if family == "cudnn" and match.group("library") == "cudnn" and _major(version) is not None:
            provided.setdefault(_major(version), f"{name} {version}")
        elif family == "cuda" and match.group("library") in ("cuda-runtime", "cublas"):
            provided.setdefault(int(match.group("cuda")), f"{name} {version}")
    if family == "cuda":
        # From CUDA 13 these two wheels carry no -cuNN suffix; their version is the CUDA release.
        for name in ("nvidia-cuda-runtime", "nvidia-cublas"):
            major = _major(facts.packages.get(name))
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
        status, advice = _judge(facts, need, others, searched)
        results.append(CheckResult(name, status, need.describe(), expected, advice, f"source: {need.source}"))
    return results


def _judge(facts: Facts, need: Need, others: List[Need], searched: bool) -> Tuple[str, str]:
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
            problems.append((FAIL if searched else WARN,
                f"It needs {label} {mine} but this environment provides only {label} "
                f"{', '.join(map(str, sorted(provided))) or '(none found)'}, so it cannot load its {label} "
                f"next to {other.distribution} (expect \"Could not load library {_example_library(kind, mine)}\" "
                "or a silent fall-back to CPU)."))
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


def _major_of(need: Need, kind: str) -> Optional[int]:
    return need.cudnn_major if kind == "cudnn" else need.cuda_major


def _example_library(kind: str, major: int) -> str:
    return f"libcudnn_cnn_infer.so.{major}" if kind == "cudnn" else f"libcublasLt.so.{major}"


def _fix(need: Need, other: Need, label: str) -> str:
    return (f"Install a {need.distribution} release built for the same {label} major as {other.distribution} "
            f"(see {need.source if need.source.startswith('http') else 'its install page'}), or run the two in "
            "separate processes.")


def check_nvidia_wheel_majors(facts: Facts, req: Requirements) -> List[CheckResult]:
    """nvidia-<lib>-cu11 beside -cu12 (or -cu13): they share site-packages/nvidia/<lib>/."""
    by_library: Dict[str, List[Tuple[str, str, str]]] = {}
    for name, version in sorted(facts.packages.items()):
        match = _NVIDIA_WHEEL.match(name)
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
        majors = [_major(version) for _, _, version in wheels]
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
        elif not _contains(spec, found):
            results.append(CheckResult(check, FAIL, f"{name} {found}", expected,
                                       f"Install a release of {name} matching {spec}."))
        else:
            results.append(CheckResult(check, PASS, f"{name} {found}", expected))
    return results


def _contains(spec: SpecifierSet, version: str) -> bool:
    try:
        return spec.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False


def loader_expectations(facts: Facts) -> List[Expectation]:
    """The sonames torch and the other runtimes will ask the loader for, with the minimum versions known."""
    expectations: List[Expectation] = []
    torch = torch_need(facts)
    if torch is not None:
        who = f"torch {torch.version}"
        pins = _pinned_versions(facts.package_requires.get("torch", ()))
        if torch.cudnn_major is not None:
            minimum = pins.get("cudnn") if _major(pins.get("cudnn")) == torch.cudnn_major else None
            expectations.append(Expectation("cudnn", torch.cudnn_major, _two_parts(minimum), who))
        if torch.cuda_major is not None:
            expectations.append(Expectation("cublas", torch.cuda_major, None, who))
            expectations.append(Expectation("cudart", torch.cuda_major, None, who))
        if "nccl" in pins:
            expectations.append(Expectation("nccl", _major(pins["nccl"]) or 2, _two_parts(pins["nccl"]), who))
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
    for match, requirement in _nvidia_requirements(requires):
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
