"""What each release of a GPU runtime is built for: CUDA and cuDNN, with where that comes from.

`runtime_needs` reads, in order of trust: the build record inside the installed package
(onnxruntime/capi/build_and_package_info.py, tensorflow/python/platform/build_info.py, read
as text), the wheel's nvidia-* Requires-Dist, a CUDA tag in the version, the cited table in
torchlint/data/gpu_runtimes.toml (one source URL per row), the CUDA major in the name.
Pure, apart from reading that table and, in `read_build_files`, the build records.
"""

from __future__ import annotations

import os
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Iterator, Mapping, NamedTuple, Optional, Sequence, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

TABLE_PATH = Path(__file__).resolve().parent.parent / "data" / "gpu_runtimes.toml"
WHEEL_METADATA = "the wheel's Requires-Dist"
VERSION_TAG = "the version's CUDA tag"
NVIDIA_WHEEL = re.compile(r"^nvidia-(?P<library>[a-z0-9-]+?)-cu(?P<cuda>\d+)$")
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
        return version_major(self.cuda)

    @property
    def cudnn_major(self) -> Optional[int]:
        return version_major(self.cudnn)

    def describe(self) -> str:
        parts = [f"CUDA {self.cuda}" if self.cuda else "", f"cuDNN {self.cudnn}" if self.cudnn else ""]
        built = ", ".join(part for part in parts if part) or "no CUDA"
        return f"{self.distribution} {self.version} ({built})"


def version_major(text: Optional[str]) -> Optional[int]:
    """'12.4' -> 12, '9' -> 9; None for None or a non-numeric head."""
    if not text:
        return None
    head = text.split(".")[0]
    return int(head) if head.isdigit() else None


# --- the cited table ---------------------------------------------------------------------


@lru_cache(maxsize=1)
def table() -> Dict[str, Any]:
    """torchlint/data/gpu_runtimes.toml, parsed once."""
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
    for match, requirement in nvidia_requirements(requires):
        cuda = cuda or match.group("cuda")
        if match.group("library") == "cudnn":
            cudnn = cudnn or _lowest_release(requirement.specifier)
            evidence.append(f"{requirement.name}{requirement.specifier}")
    if cuda is None:
        return None
    source = f"{WHEEL_METADATA}: {', '.join(evidence)}" if evidence else f"{WHEEL_METADATA} (nvidia-*-cu{cuda})"
    return Need(name, version, cuda, cudnn, source)


def nvidia_requirements(requires: Sequence[str]) -> Iterator[Tuple["re.Match[str]", Requirement]]:
    """The nvidia-<library>-cu<N> entries of a Requires-Dist list, parsed."""
    for text in requires:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        match = NVIDIA_WHEEL.match(canonicalize_name(requirement.name))
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
    for row in table().get("cuda-build", []):
        if row["distribution"] != name or row["cuda"] not in (cuda, cuda.split(".")[0]):
            continue
        if "versions" not in row or contains(SpecifierSet(row["versions"]), version):
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
    for row in table().get("release", []):
        if row["distribution"] != name or not platform.startswith(row.get("platform", "")):
            continue
        if SpecifierSet(row["versions"]).contains(release, prereleases=True):
            cuda = row.get("cuda")
            return Need(name, version, cuda, row.get("cudnn"), row["source"], gpu=cuda is not None)
    return None


def _from_name(name: str, version: str, requires: Sequence[str], platform: str) -> Optional[Need]:
    for row in table().get("name", []):
        match = re.match(row["pattern"], name)
        if match:
            digits = match.group("cuda")
            cuda = digits if match.groupdict().get("family") else _dotted(digits)  # cupy-cuda12x: any 12.x
            return Need(name, version, cuda, None, row["source"])
    return None


def contains(spec: SpecifierSet, version: str) -> bool:
    """`version` is in `spec` (pre-releases count); False for an unparseable version."""
    try:
        return spec.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False
