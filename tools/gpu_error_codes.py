"""Enumerate the error codes of CUDA and its libraries from NVIDIA's own wheels: torchlint/data/gpu_error_codes.json.

    python tools/gpu_error_codes.py [--wheels DIR] [--out PATH]

For each library below: `pip download --no-deps` its pinned wheel into DIR (default /tmp/codes33; never
committed), read the status enum from the header the wheel ships (every name, its value, the doc comment
NVIDIA wrote for it), and load the wheel's shared library with ctypes to ask the library's own
message function (cudaGetErrorString, cudnnGetErrorString, cublasGetStatusString, ncclGetErrorString)
for the text it returns for each value: the text torch, ONNX Runtime and CTranslate2 print. None of these
functions needs a GPU. NCCL's `NCCL WARN` lines are printf formats compiled into libnccl: the ones listed
in NCCL_WARN_FORMATS are checked to be present in the library's strings (`strings libnccl.so.2`).

The driver API's CUresult comes from cuda.h, which the runtime wheel ships; its message function,
cuGetErrorString, lives in libcuda (the driver, in no wheel): its entries carry the header's doc text only.
cuBLASLt returns cublasStatus_t (cublasLt.h declares no enum of its own): its messages are asked of
cublasLtGetStatusString and recorded when they differ from cuBLAS's.

A tool for refreshing the data file; torchlint never imports it.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "torchlint" / "data" / "gpu_error_codes.json"


@dataclass(frozen=True)
class Source:
    library: str  # the key the knowledge base uses
    requirement: str  # what `pip download` fetches
    header: str  # path inside the wheel
    enum: str  # the typedef (or enum tag) that names the status type
    shared: Optional[str] = None  # the library whose message function is asked, path inside the wheel
    message: Optional[str] = None  # its name
    extra: Tuple[str, ...] = ()  # more files of the same wheel the shared library needs loaded first
    needs: Tuple[Tuple[str, str], ...] = ()  # (requirement, file) of other wheels it needs loaded first


SOURCES = (
    Source("cuda-runtime", "nvidia-cuda-runtime-cu12==12.9.79", "nvidia/cuda_runtime/include/driver_types.h",
           "cudaError", "nvidia/cuda_runtime/lib/libcudart.so.12", "cudaGetErrorString"),
    Source("cuda-driver", "nvidia-cuda-runtime-cu12==12.9.79", "nvidia/cuda_runtime/include/cuda.h", "CUresult"),
    Source("cudnn-9", "nvidia-cudnn-cu12==9.28.0.42", "nvidia/cudnn/include/cudnn_graph.h", "cudnnStatus_t",
           "nvidia/cudnn/lib/libcudnn.so.9", "cudnnGetErrorString", ("nvidia/cudnn/lib/libcudnn_graph.so.9",)),
    Source("cudnn-8", "nvidia-cudnn-cu11==8.9.6.50", "nvidia/cudnn/include/cudnn_ops_infer.h", "cudnnStatus_t",
           "nvidia/cudnn/lib/libcudnn_ops_infer.so.8", "cudnnGetErrorString"),
    Source("cublas", "nvidia-cublas-cu12==12.9.3.13", "nvidia/cublas/include/cublas_api.h", "cublasStatus_t",
           "nvidia/cublas/lib/libcublas.so.12", "cublasGetStatusString", ("nvidia/cublas/lib/libcublasLt.so.12",)),
    Source("cufft", "nvidia-cufft-cu12==11.4.1.4", "nvidia/cufft/include/cufft.h", "cufftResult"),
    Source("cusolver", "nvidia-cusolver-cu12==11.7.5.82", "nvidia/cusolver/include/cusolver_common.h", "cusolverStatus_t"),
    Source("cusparse", "nvidia-cusparse-cu12==12.5.10.65", "nvidia/cusparse/include/cusparse.h", "cusparseStatus_t",
           "nvidia/cusparse/lib/libcusparse.so.12", "cusparseGetErrorString",
           needs=(("nvidia-nvjitlink-cu12==12.9.86", "nvidia/nvjitlink/lib/libnvJitLink.so.12"),)),
    Source("nccl", "nvidia-nccl-cu12==2.32.3", "nvidia/nccl/include/nccl.h", "ncclResult_t",
           "nvidia/nccl/lib/libnccl.so.2", "ncclGetErrorString"),
)
LIBNCCL = "nvidia/nccl/lib/libnccl.so.2"
# The WARN formats users paste most (socket and shared-memory set-up, CUDA failures inside NCCL,
# InfiniBand completions, duplicate GPUs, truncated messages); each must be in libnccl's strings.
NCCL_WARN_FORMATS = (
    "Cuda failure %d '%s'",
    "Cuda failure '%s'",
    "Error while %s shared memory segment %s (size %ld), error: %s (%d)",
    "NET/Socket : No usable listening interface found",
    "Bootstrap : no socket interface found",
    "Message truncated : received %d bytes instead of %d",
    "Failed to load libibverbs: %s",
    "Could not enable P2P between dev %d(=%lx) and dev %d(=%lx)",
    "HINT: In many cases this error indicates that the GPU peer-mapping (BAR1 P2P) resources are exhausted, which can happen on nodes with more than 8 GPUs.",
)
# one token of an enum body: a doc comment after its enumerator (`/**< ... */`), one before it, another
# comment, or an enumerator `NAME [ATTRIBUTE] = VALUE` (VALUE a number or an earlier name)
_TOKEN = re.compile(r"/\*\*<(?P<after>.*?)\*/|/\*\*(?P<before>.*?)\*/|/\*.*?\*/|//[^\n]*"
                    r"|(?P<name>[A-Za-z_]\w*)(?:\s+[A-Z_]+)?\s*=\s*(?P<value>[^,/}]+)", re.S)


def wheel_file(wheels: Path, requirement: str) -> Path:
    name, version = requirement.split("==")
    stem = f"{name.replace('-', '_')}-{version}-"
    found = sorted(wheels.glob(stem + "*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels), requirement],
                       check=True)
        found = sorted(wheels.glob(stem + "*.whl"))
    return found[0]


def enum_body(header: str, enum: str) -> str:
    """The text between the braces of `typedef enum ... { } ENUM;` or `enum ... ENUM { };`."""
    closing = re.search(r"\}\s*" + re.escape(enum) + r"\s*;", header)
    if closing:
        opening = header.rfind("{", 0, closing.start())
        return header[opening + 1:closing.start()]
    opening = re.search(r"enum\s+(?:__device_builtin__\s+)?" + re.escape(enum) + r"\s*\{", header)
    if opening is None:
        raise SystemExit(f"enum {enum} not found")
    return header[opening.end():header.index("};", opening.end())]


def _clean(doc: str) -> str:
    lines = [line.strip().lstrip("*").strip() for line in doc.splitlines()]
    text = " ".join(line for line in lines if line)
    text = re.sub(r"\s*@since [^@]*$", "", text).replace("::", "")
    return text.strip()


def parse_enum(body: str) -> List[Dict[str, object]]:
    """Each enumerator: name, value (an alias resolved to its value and named), the doc comment NVIDIA wrote for it."""
    entries: List[Dict[str, object]] = []
    values: Dict[str, int] = {}
    pending = ""
    for token in _TOKEN.finditer(body):
        if token.group("after") is not None and entries:
            entries[-1]["doc"] = _clean(token.group("after"))
        elif token.group("before") is not None:
            pending = token.group("before")
        elif token.group("name"):
            expression = " ".join(token.group("value").split())
            entry: Dict[str, object] = {"name": token.group("name"), "doc": _clean(pending)}
            if expression in values:
                entry["value"], entry["alias_of"] = values[expression], expression
            else:
                entry["value"] = int(expression, 0)
            values[token.group("name")] = int(entry["value"])  # type: ignore[arg-type]
            entries.append(entry)
            pending = ""
    return entries


def messages(library: Path, function: str, values: List[int]) -> Dict[int, str]:
    handle = ctypes.CDLL(str(library))
    call = getattr(handle, function)
    call.restype = ctypes.c_char_p
    call.argtypes = [ctypes.c_int]
    return {value: call(value).decode("utf-8", "replace") for value in values}


def extract(wheel: Path, member: str, into: Path) -> Path:
    with zipfile.ZipFile(wheel) as archive:
        archive.extract(member, into)
    return into / member


def library_entry(source: Source, wheels: Path) -> Dict[str, object]:
    wheel = wheel_file(wheels, source.requirement)
    with zipfile.ZipFile(wheel) as archive:
        header = archive.read(source.header).decode("utf-8", "replace")
    body = enum_body(header, source.enum)
    codes = parse_enum(body)
    if source.shared and source.message:
        for requirement, member in source.needs:
            other = wheel_file(wheels, requirement)
            ctypes.CDLL(str(extract(other, member, wheels / "x" / other.name.split("-py3")[0])), mode=ctypes.RTLD_GLOBAL)
        into = wheels / "x" / wheel.name.split("-py3")[0]
        for member in source.extra:
            extract(wheel, member, into)
            ctypes.CDLL(str(into / member), mode=ctypes.RTLD_GLOBAL)
        texts = messages(extract(wheel, source.shared, into), source.message, [int(c["value"]) for c in codes])
        for code in codes:
            code["message"] = texts[int(code["value"])]
        if source.library == "cublas":
            lt = messages(into / source.extra[0], "cublasLtGetStatusString", [int(c["value"]) for c in codes])
            for code in codes:
                if lt[int(code["value"])] != code["message"]:
                    code["cublaslt_message"] = lt[int(code["value"])]
    name, version = source.requirement.split("==")
    return {"library": source.library, "type": source.enum, "wheel": name, "version": version,
            "file": wheel.name, "header": source.header, "message_function": source.message or "",
            "codes": codes}


def nccl_warn_lines(wheels: Path) -> Dict[str, object]:
    requirement = next(s.requirement for s in SOURCES if s.library == "nccl")
    wheel = wheel_file(wheels, requirement)
    library = extract(wheel, LIBNCCL, wheels / "x" / wheel.name.split("-py3")[0])
    strings = set(subprocess.run(["strings", "-n", "6", str(library)], capture_output=True, text=True,
                                 check=True).stdout.splitlines())
    missing = [line for line in NCCL_WARN_FORMATS if line not in strings]
    if missing:
        raise SystemExit(f"not in {LIBNCCL}: {missing}")
    prefixes = [line for line in ("[%d] %s:%d (%s) NCCL WARN %s", "[%d] %s:%d NCCL WARN %s") if line in strings]
    return {"wheel": requirement, "file": wheel.name, "log_prefix": prefixes, "formats": list(NCCL_WARN_FORMATS)}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheels", type=Path, default=Path("/tmp/codes33"))
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    args.wheels.mkdir(parents=True, exist_ok=True)
    data = {
        "generated_by": "tools/gpu_error_codes.py",
        "libraries": [library_entry(source, args.wheels) for source in SOURCES],
        "nccl_warn": nccl_warn_lines(args.wheels),
    }
    args.out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for library in data["libraries"]:
        print(f"{library['library']}: {len(library['codes'])} codes from {library['file']}")
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    os._exit(status)  # the loaded NVIDIA libraries' exit handlers crash the interpreter's normal shutdown
