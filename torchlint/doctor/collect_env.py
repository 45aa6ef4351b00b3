"""Read the text of `python -m torch.utils.collect_env` into a Facts record.

The report users paste into issues has labelled lines ("PyTorch version: 2.1.0+cu121",
"GPU models and configuration: ...", "Nvidia driver version: ...") and a list of
installed packages. What the text does not say stays unknown (None, with the reason
in `Facts.unknown`), so the checks can tell "not judged" from "failed".

Two values are deliberately not taken as torch's: "CUDA runtime version" and
"cuDNN version" describe the system toolkit and library that collect_env finds, not the
runtime and cuDNN bundled with the torch wheel.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from torchlint.doctor.facts import Facts, Gpu
from torchlint.doctor.gpu_names import capability_of
from torchlint.doctor.results import NOT_IN_EVIDENCE

# Values are stripped in Python: a lazy `(.*?)\s*$` is quadratic in a line of spaces.
_FIELD = re.compile(r"^([A-Za-z][A-Za-z0-9 _./()-]{1,60}?):(.*)")
_GPU_LINE = re.compile(r"^\s*GPU\s+(\d{1,4})\s*:(.*)")
_PACKAGE_LINE = re.compile(r"^\s*\[(?:pip\d?|conda)\]\s+(\S+?)(?:==|\s+)(\S+)")
# torch's warnings printed above or inside the report ("UserWarning: CUDA initialization: The NVIDIA driver on
# your system is too old (found version 11040)"): kept as torch_warnings, which the checks read as the probe's.
_WARNING_MARKS = ("CUDA initialization:", "driver on your system is too old")
_NOTHING = ("n/a", "none", "could not collect", "", "no cuda")
# Labels that start a field; any of them ends a multi-line GPU list.
MARKERS = ("PyTorch version:", "CUDA used to build PyTorch:", "Is CUDA available:")


def looks_like_collect_env(text: str) -> bool:
    """True when `text` carries at least two of collect_env's labelled lines."""
    return sum(marker in text for marker in MARKERS) >= 2


def _fields(lines: List[str]) -> Tuple[Dict[str, str], List[Tuple[int, str]], Dict[str, str]]:
    fields: Dict[str, str] = {}
    gpus: List[Tuple[int, str]] = []
    packages: Dict[str, str] = {}
    in_gpu_list = False
    for line in lines:
        package = _PACKAGE_LINE.match(line)
        if package:
            packages[_normalise(package.group(1))] = package.group(2)
            continue
        gpu = _gpu(line)
        if gpu and in_gpu_list:
            gpus.append(gpu)
            continue
        field = _FIELD.match(line)
        if field is None:
            if line.strip():  # a blank line may separate the GPU list from its label; text ends it
                in_gpu_list = False
            continue
        label, value = field.group(1).strip().lower(), field.group(2).strip()
        fields.setdefault(label, value)
        in_gpu_list = label == "gpu models and configuration"
        inline = _gpu(value)
        if in_gpu_list and inline:
            gpus.append(inline)
        elif in_gpu_list and value and value.lower() not in _NOTHING:
            gpus.append((0, value))  # old format: "GPU models and configuration: GeForce GTX 1080"
    return fields, gpus, packages


def _torch_warnings(lines: List[str]) -> List[str]:
    found: List[str] = []
    for line in lines:
        if not any(mark in line for mark in _WARNING_MARKS):
            continue
        message = line.split("UserWarning:", 1)[-1].strip()
        if message not in found:
            found.append(message)
    return found


def _gpu(line: str) -> Optional[Tuple[int, str]]:
    """(index, name) of a `GPU 0: NVIDIA H100` line, or None."""
    found = _GPU_LINE.match(line)
    name = found.group(2).strip() if found else ""
    return (int(found.group(1)), name) if found and name else None


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _bool(value: Optional[str]) -> Optional[bool]:
    lowered = (value or "").strip().lower()
    if lowered in ("true", "yes"):
        return True
    if lowered in ("false", "no"):
        return False
    return None


def _platform(os_line: str, python_platform: str) -> Optional[str]:
    text = f"{os_line} {python_platform}".lower()
    if "windows" in text:
        return "win32"
    if "macos" in text or "mac os" in text or "darwin" in text:
        return "darwin"
    if "linux" in text or "ubuntu" in text or "centos" in text or "debian" in text:
        return "linux"
    return None


def parse_collect_env(text: str) -> Facts:
    """The facts a collect_env report states; everything else is unknown."""
    lines = text.splitlines()
    fields, gpus, packages = _fields(lines)
    facts = Facts(packages=packages, torch_warnings=_torch_warnings(lines))
    unknown = facts.unknown

    torch_version = fields.get("pytorch version", "")
    if torch_version and torch_version.lower() not in _NOTHING:
        facts.torch_version = torch_version.split()[0]
    else:
        unknown["torch"] = "collect_env could not import torch" if torch_version else NOT_IN_EVIDENCE

    built_cuda = fields.get("cuda used to build pytorch")
    built_rocm = fields.get("rocm used to build pytorch")
    if built_cuda and built_cuda.lower() not in _NOTHING:
        facts.torch_build, facts.torch_cuda = "cuda", ".".join(built_cuda.split()[0].split(".")[:2])
    elif built_rocm and built_rocm.lower() not in _NOTHING:
        facts.torch_build, facts.torch_hip = "rocm", built_rocm.split()[0]
    elif built_cuda is not None and facts.torch_version:
        facts.torch_build = "cpu"
    else:
        unknown["torch_build"] = NOT_IN_EVIDENCE

    facts.cuda_available = _bool(fields.get("is cuda available"))
    if facts.cuda_available is None:
        unknown["cuda_available"] = NOT_IN_EVIDENCE
    facts.gpus = [Gpu(index=index, name=name, capability=capability_of(name)) for index, name in gpus]
    facts.device_count = len(gpus) if gpus else None
    if not gpus:
        unknown["gpus"] = NOT_IN_EVIDENCE

    driver = fields.get("nvidia driver version", "")
    if driver and driver.lower() not in _NOTHING:
        facts.driver_version, facts.driver_source = driver.split()[0], "collect_env"
    else:
        unknown["driver_version"] = NOT_IN_EVIDENCE

    python = fields.get("python version", "")
    facts.python = python.split()[0] if python else None
    facts.platform = _platform(fields.get("os", ""), fields.get("python platform", ""))
    facts.machine = fields.get("python platform") or None
    unknown["arch_list"] = NOT_IN_EVIDENCE
    unknown["cudnn_version"] = "collect_env reports the system cuDNN, not the one torch loads"
    return facts
