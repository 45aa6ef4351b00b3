"""The probe's record: plain facts about the Python/torch/CUDA environment, nothing judged.

The record round-trips through JSON (`torchlint doctor --probe-json` on one machine,
`torchlint doctor --facts FILE` on another). A fact that could not be read is None and
its reason is kept in `unknown`.
"""

from __future__ import annotations

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
    gpus = values.get("gpus", [])
    if not isinstance(gpus, list):
        raise FactsError("`gpus` must be a list")
    try:
        values["gpus"] = [Gpu(**gpu) for gpu in gpus]
    except TypeError as error:
        raise FactsError(f"`gpus` has an entry of the wrong shape: {error}") from None
    return Facts(**values)
