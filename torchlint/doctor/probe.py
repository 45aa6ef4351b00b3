"""Collect facts about this machine's torch/CUDA/cuDNN environment. Never judges, never raises.

torch is imported here, inside `collect()`, and nowhere at module level: importing
torchlint must stay cheap. Anything unreadable becomes None with its reason in
`Facts.unknown`.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import warnings
from typing import Any, Callable, List, Optional

from torchlint.doctor.facts import RECORDED_ENV, Facts, Gpu

NVIDIA_SMI_TIMEOUT = 10.0


def collect() -> Facts:
    """Probe the current process's environment (imports torch if it is not yet imported)."""
    facts = Facts(
        python=platform.python_version(),
        platform=sys.platform,
        machine=platform.machine(),
        env={name: os.environ[name] for name in RECORDED_ENV if name in os.environ},
        cudnn_on_library_path=cudnn_on_library_path(os.environ.get("LD_LIBRARY_PATH", "")),
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _probe_torch(facts)
    facts.torch_warnings = _unique(str(w.message) for w in caught)
    _probe_driver(facts)
    from torchlint.doctor.runtimes import probe_runtimes

    probe_runtimes(facts)
    return facts


def cudnn_version_string(raw: int) -> str:
    """torch's integer cuDNN version as major.minor.patch: 8902 -> 8.9.2, 91002 -> 9.10.2.

    cuDNN 9 changed CUDNN_VERSION from major*1000+minor*100+patch to
    major*10000+minor*100+patch, so the two encodings are told apart by size.
    """
    if raw >= 90000:
        major, rest = divmod(raw, 10000)
    else:
        major, rest = divmod(raw, 1000)
    minor, patch = divmod(rest, 100)
    return f"{major}.{minor}.{patch}"


def cudnn_on_library_path(ld_library_path: str) -> List[str]:
    """Copies of libcudnn found on LD_LIBRARY_PATH (they can shadow the one torch ships)."""
    found: List[str] = []
    for directory in filter(None, ld_library_path.split(os.pathsep)):
        try:
            found.extend(sorted(glob.glob(os.path.join(glob.escape(directory), "libcudnn*.so*"))))
        except OSError:
            continue
    return found


def _probe_torch(facts: Facts) -> None:
    try:
        import torch
    except Exception as error:  # ImportError, or OSError from a broken shared library
        facts.unknown["torch"] = f"cannot import torch: {type(error).__name__}: {error}"
        return
    facts.torch_version = _read(facts, "torch_version", lambda: str(torch.__version__))
    facts.torch_cuda = _read(facts, "torch_cuda", lambda: torch.version.cuda)
    facts.torch_hip = _read(facts, "torch_hip", lambda: getattr(torch.version, "hip", None))
    if facts.torch_hip:
        facts.torch_build = "rocm"
    elif facts.torch_cuda:
        facts.torch_build = "cuda"
    elif "torch_cuda" not in facts.unknown:
        facts.torch_build = "cpu"
    facts.arch_list = _read(facts, "arch_list", lambda: _arch_list(torch))
    facts.cuda_available = _read(facts, "cuda_available", lambda: bool(torch.cuda.is_available()))
    if facts.cuda_available:
        facts.device_count = _read(facts, "device_count", lambda: int(torch.cuda.device_count()))
        for index in range(facts.device_count or 0):
            facts.gpus.append(_gpu(facts, torch, index))
    else:
        facts.device_count = 0
    raw = _read(facts, "cudnn_version", lambda: torch.backends.cudnn.version())
    if raw is not None:
        facts.cudnn_version_raw = int(raw)
        facts.cudnn_version = cudnn_version_string(int(raw))
    facts.cudnn_available = _read(facts, "cudnn_available", lambda: bool(torch.backends.cudnn.is_available()))
    facts.cudnn_enabled = _read(facts, "cudnn_enabled", lambda: bool(torch.backends.cudnn.enabled))


def _arch_list(torch: Any) -> List[str]:
    # torch.cuda.get_arch_list() returns [] whenever no GPU is visible; the compiled
    # flags are what the build carries, GPU or not.
    flags = getattr(torch._C, "_cuda_getArchFlags", None)
    if callable(flags):
        value = flags()
        return value.split() if value else []
    return list(torch.cuda.get_arch_list())


def _gpu(facts: Facts, torch: Any, index: int) -> Gpu:
    properties = _read(facts, f"gpu{index}", lambda: torch.cuda.get_device_properties(index))
    if properties is None:
        return Gpu(index=index)
    return Gpu(
        index=index,
        name=str(properties.name),
        capability=f"{properties.major}.{properties.minor}",
        memory_bytes=int(properties.total_memory),
    )


def _probe_driver(facts: Facts) -> None:
    smi = shutil.which("nvidia-smi")
    reasons = []
    if smi:
        try:
            completed = subprocess.run(
                [smi, "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=NVIDIA_SMI_TIMEOUT,
            )
            lines = [line.strip() for line in completed.stdout.splitlines() if line.strip()]
            if completed.returncode == 0 and lines:
                facts.driver_version, facts.driver_source = lines[0], "nvidia-smi"
                return
            message = _first_line(completed.stderr or completed.stdout)
            reasons.append(f"nvidia-smi exited {completed.returncode}: {message}")
        except (OSError, subprocess.SubprocessError) as error:
            reasons.append(f"nvidia-smi failed: {error}")
    else:
        reasons.append("nvidia-smi not found on PATH")
    if importlib.util.find_spec("pynvml") is not None:
        try:
            import pynvml

            pynvml.nvmlInit()
            try:
                version = pynvml.nvmlSystemGetDriverVersion()
            finally:
                pynvml.nvmlShutdown()
            facts.driver_version = version.decode() if isinstance(version, bytes) else str(version)
            facts.driver_source = "pynvml"
            return
        except Exception as error:  # pynvml raises NVMLError subclasses, or worse
            reasons.append(f"NVML failed: {type(error).__name__}: {error}")
    else:
        reasons.append("pynvml not installed")
    facts.unknown["driver_version"] = "; ".join(reasons)


def _read(facts: Facts, name: str, getter: Callable[[], Any]) -> Optional[Any]:
    try:
        return getter()
    except Exception as error:
        facts.unknown[name] = f"{type(error).__name__}: {_first_line(str(error))}"
        return None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _unique(messages) -> List[str]:
    return list(dict.fromkeys(messages))
