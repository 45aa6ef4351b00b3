"""The probe's record: plain facts about the Python/torch/CUDA environment, nothing judged.

The record round-trips through JSON (`torchlint doctor --probe-json` on one machine,
`torchlint doctor --facts FILE` on another). A fact that could not be read is None and
its reason is kept in `unknown`.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Dict, List, Mapping, Optional

FACTS_SCHEMA = 1

# Environment variables recorded verbatim when set.
RECORDED_ENV = (
    "CUDA_VISIBLE_DEVICES",
    "CUDA_LAUNCH_BLOCKING",
    "TORCH_USE_CUDA_DSA",
    "CUBLAS_WORKSPACE_CONFIG",
)


@dataclass
class Gpu:
    index: int
    name: Optional[str] = None
    capability: Optional[str] = None  # "major.minor", e.g. "9.0"
    memory_bytes: Optional[int] = None


@dataclass
class LibraryFile:
    """A CUDA library file the dynamic loader can find (read from its name, never loaded)."""

    path: str
    family: str  # "cudnn", "cublas", "cudart", "nccl" or "cuda" (the driver)
    stem: str  # e.g. "cudnn_cnn_infer", "cublasLt"
    major: Optional[int] = None  # the soname's major: libcudnn.so.8 -> 8, cudart64_110.dll -> 11
    version: Optional[str] = None  # the fullest version known (symlink target, header), e.g. "8.9.2"
    source: str = ""  # "LD_LIBRARY_PATH", "PATH", "site-packages" or "ld.so.cache"


@dataclass
class Facts:
    schema: int = FACTS_SCHEMA
    python: Optional[str] = None
    platform: Optional[str] = None  # sys.platform: "linux", "win32", "darwin"
    machine: Optional[str] = None
    torch_version: Optional[str] = None
    torch_build: str = "unknown"  # "cuda", "rocm", "cpu" or "unknown"
    torch_cuda: Optional[str] = None  # torch.version.cuda
    torch_hip: Optional[str] = None  # torch.version.hip
    cuda_available: Optional[bool] = None
    device_count: Optional[int] = None
    gpus: List[Gpu] = field(default_factory=list)
    arch_list: Optional[List[str]] = None
    cudnn_version: Optional[str] = None  # normalised, e.g. "9.10.2"
    cudnn_version_raw: Optional[int] = None  # as torch reports it, e.g. 91002
    cudnn_available: Optional[bool] = None
    cudnn_enabled: Optional[bool] = None
    driver_version: Optional[str] = None
    driver_source: Optional[str] = None  # "nvidia-smi" or "pynvml"
    env: Dict[str, str] = field(default_factory=dict)
    cudnn_on_library_path: List[str] = field(default_factory=list)
    torch_warnings: List[str] = field(default_factory=list)
    # installed distributions that matter to the GPU stack: normalised name -> version
    packages: Dict[str, str] = field(default_factory=dict)
    # the Requires-Dist entries naming nvidia-* wheels, per recorded distribution
    package_requires: Dict[str, List[str]] = field(default_factory=dict)
    # build records read from installed packages (onnxruntime/capi/build_and_package_info.py ...)
    package_builds: Dict[str, Dict[str, str]] = field(default_factory=dict)
    # CUDA libraries on the loader's search path, in search order; None: not searched
    libraries: Optional[List[LibraryFile]] = None
    wsl: Optional[bool] = None  # running under WSL2 (libcuda must come from /usr/lib/wsl/lib)
    unknown: Dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)

    @property
    def has_gpu(self) -> bool:
        return bool(self.cuda_available) and bool(self.gpus or self.device_count)


class FactsError(ValueError):
    """A facts record that does not have the shape `Facts` expects."""


_LIST_OF_STR = ("arch_list", "cudnn_on_library_path", "torch_warnings")
_DICT_OF_STR = ("env", "packages", "unknown")


def facts_from_dict(data: Mapping[str, Any]) -> Facts:
    """Rebuild a Facts record from its JSON form; keys it does not know are ignored."""
    if not isinstance(data, Mapping):
        raise FactsError("expected a JSON object")
    if "facts" in data and isinstance(data["facts"], Mapping):
        data = data["facts"]  # the whole `--format json` output
    known = {f.name for f in fields(Facts)}
    values = {key: value for key, value in data.items() if key in known}
    for key in _LIST_OF_STR:
        value = values.get(key)
        if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise FactsError(f"`{key}` must be a list of strings")
    for key in _DICT_OF_STR:
        value = values.get(key, {})
        if not (isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values())):
            raise FactsError(f"`{key}` must be an object of strings")
        values[key] = dict(value)
    for key, kinds in _SCALARS.items():
        _check_scalar(key, values.get(key), kinds)
    gpus = values.get("gpus", [])
    if not isinstance(gpus, list):
        raise FactsError("`gpus` must be a list")
    values["gpus"] = [_gpu_from_dict(position, gpu) for position, gpu in enumerate(gpus)]
    values.update(_loader_values(values))
    return Facts(**values)


# Hand-written records slip ("89", 8.9, an integer driver version): name the field.
_TEXT = (str,)
_SCALARS: Dict[str, tuple] = {
    "python": _TEXT, "platform": _TEXT, "machine": _TEXT, "torch_version": _TEXT, "torch_build": _TEXT,
    "torch_cuda": _TEXT, "torch_hip": _TEXT, "cudnn_version": _TEXT, "driver_version": _TEXT,
    "driver_source": _TEXT, "cuda_available": (bool,), "cudnn_available": (bool,), "cudnn_enabled": (bool,),
    "device_count": (int,), "cudnn_version_raw": (int,), "schema": (int,),
}
_EXAMPLES = {"driver_version": '"535.104.05"', "torch_cuda": '"12.1"', "cudnn_version": '"9.1.0"',
             "torch_version": '"2.4.1+cu121"'}
_CAPABILITY = re.compile(r"^\d+\.\d$")
_GPU_KEYS = {f.name for f in fields(Gpu)}


def _check_scalar(key: str, value: Any, kinds: tuple) -> None:
    if value is None or (isinstance(value, kinds) and not (kinds != (bool,) and isinstance(value, bool))):
        return
    kind = {str: "a string", bool: "true or false", int: "an integer"}[kinds[0]]
    example = f" such as {_EXAMPLES[key]}" if key in _EXAMPLES else ""
    raise FactsError(f"`{key}` must be {kind}{example}, not {value!r}")


def _gpu_from_dict(position: int, gpu: Any) -> Gpu:
    where = f"gpus[{position}]"
    if not isinstance(gpu, Mapping):
        raise FactsError(f"`{where}` must be an object")
    extra = sorted(set(gpu) - _GPU_KEYS)
    if extra:
        raise FactsError(f"`{where}` has unknown key `{extra[0]}` (known: {', '.join(sorted(_GPU_KEYS))})")
    if not isinstance(gpu.get("index"), int) or isinstance(gpu.get("index"), bool):
        raise FactsError(f"`{where}.index` must be an integer")
    _check_scalar(f"{where}.name", gpu.get("name"), _TEXT)
    _check_scalar(f"{where}.memory_bytes", gpu.get("memory_bytes"), (int,))
    capability = gpu.get("capability")
    if capability is not None and not (isinstance(capability, str) and _CAPABILITY.match(capability)):
        raise FactsError(f"`{where}.capability` must be \"major.minor\" such as \"8.9\", not {capability!r}")
    return Gpu(**gpu)


def _loader_values(values: Mapping[str, Any]) -> Dict[str, Any]:
    requires = values.get("package_requires", {})
    if not (isinstance(requires, Mapping) and all(
            isinstance(entries, list) and all(isinstance(e, str) for e in entries) for entries in requires.values())):
        raise FactsError("`package_requires` must be an object of lists of strings")
    builds = values.get("package_builds", {})
    if not (isinstance(builds, Mapping) and all(
            isinstance(info, Mapping) and all(isinstance(v, str) for v in info.values()) for info in builds.values())):
        raise FactsError("`package_builds` must be an object of objects of strings")
    wsl = values.get("wsl")
    if wsl is not None and not isinstance(wsl, bool):
        raise FactsError(f"`wsl` must be true or false, not {wsl!r}")
    checked: Dict[str, Any] = {"package_requires": dict(requires), "package_builds": dict(builds), "wsl": wsl}
    libraries = values.get("libraries")
    if libraries is None:
        return checked
    if not isinstance(libraries, list):
        raise FactsError("`libraries` must be a list")
    known = {f.name for f in fields(LibraryFile)}
    rebuilt = []
    for position, entry in enumerate(libraries):
        if not (isinstance(entry, Mapping) and set(entry) <= known and isinstance(entry.get("path"), str)
                and isinstance(entry.get("family"), str) and isinstance(entry.get("stem"), str)):
            raise FactsError(f"`libraries[{position}]` must be an object with path, family and stem strings")
        rebuilt.append(LibraryFile(**entry))
    return {**checked, "libraries": rebuilt}
