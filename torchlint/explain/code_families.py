"""Every documented status code of CUDA and its libraries, grouped into families of the knowledge base.

torchlint/data/gpu_error_codes.json (made by tools/gpu_error_codes.py from NVIDIA's wheels) lists each code:
its library, name, value, NVIDIA's doc text and the message the library's own function returns for it.
code_families.toml groups the codes into families: a family either names an existing signature of
signatures.toml (its codes then extend that signature's pattern) or is a signature of its own. From
the codes a family holds, its pattern is built: the code names as frameworks print them
(`CUDNN_STATUS_BAD_PARAM`, `cudaErrorIllegalAddress`, `CUDA_ERROR_NO_DEVICE`, `ncclSystemError`) and each
message text after the prefixes frameworks wrap it in (torch's `CUDA error: `, ONNX Runtime's
`CUDA failure 700: `, CTranslate2's `CUDA failed with error `, Caffe's `Check failed: error == cudaSuccess`).
Every pattern is alternations of escaped literals behind bounded prefixes: linear in the text it reads.
Building the families costs O(families x codes) once per process (about 50 x 370), when the knowledge
base is loaded.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Dict, Iterable, List, Mapping, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

FAMILIES_FILE = "code_families.toml"
CODES_FILE = "data/gpu_error_codes.json"
CUDA_LIBRARIES = ("cuda-runtime", "cuda-driver")
# How frameworks print a library's message text (not its name). Each alternative starts with a literal,
# its anchor. cuGetErrorString (driver API: torch's "CUDA driver error", Triton) is in no wheel; the
# runtime's texts, which the driver shares for the same values, are matched after those prefixes too.
MESSAGE_PREFIXES: Mapping[str, Tuple[Tuple[str, str], ...]] = {
    "cuda-runtime": (
        ("CUDA error", r"CUDA error:[ \t]?"),  # torch c10 CUDA_CHECK
        # the C/C++ idiom `fprintf(stderr, "CUDA error %d at %s:%d: %s\n", ...)` (ggml's CUDA_CHECK before 2024)
        ("CUDA error", r"CUDA error \d{1,6} at [^\n]{0,300}?:\d{1,7}: "),
        # CTranslate2 CUDA_CHECK; pastes retype its prefix in other letter case ("Cuda failed with error")
        ("failed with error", r"(?i:cuda) failed with error "),
        ("CUDA failure", r"CUDA failure \d{1,6}: "),  # ONNX Runtime CUDA_CALL
        # NCCL's CUDACHECK: WARN("Cuda failure '%s'") and, from 2.19, WARN("Cuda failure %d '%s'")
        ("Cuda failure", r"Cuda failure (?:\d{1,6} )?'"),
        ("CUDA driver error", r"CUDA driver error: "),  # torch AT_CUDA_DRIVER_CHECK
        ("Triton Error", r"Triton Error \[CUDA\]: "),  # Triton's driver launcher
        ("cuda runtime error", r"cuda runtime error \(\d{1,6}\) : "),  # torch < 1.0 (THC)
        ("THCudaCheck FAIL", r"THCudaCheck FAIL file=[^\n]{0,300}? error=\d{1,6} : "),  # THC's check (Lua Torch, torch < 1.0)
        ("Status:", r"Status: "),  # TensorFlow "... failed. Status: <text>"
        ("Check failed: error == cudaSuccess", r"Check failed: error == cudaSuccess \(\d{1,6} vs\. 0\)[ \t]{1,2}"),  # Caffe
        ("failed to initialize CUDA", r"failed to initialize CUDA: "),  # ggml_cuda_init (llama.cpp, whisper.cpp)
        # a driver API call named before cuGetErrorString's text (hashcat: "cuLinkAddData(): <text>")
        ("(): ", r"\bcu[A-Z]\w{2,40}\(\): "),
        ("Error ", r"Error \d{1,6}: "),  # torch's "Unexpected error from cudaGetDeviceCount() ... Error 802: <text>"
        # bitsandbytes' CUDA_CHECK_RETURN: fprintf(stderr, "Error %s at line %d in file %s\n", cudaGetErrorString(...))
        ("Error ", r"\bError (?=[^\n]{1,160}? at line \d{1,7} in file )"),
        # a C++ exception torch did not catch: "terminate called after throwing an instance of 'c10::CUDAError'
        # what():  CUDA error: <text>", pasted with the what() line run together
        ("c10::CUDAError", r"c10::CUDAError\S{0,40}[ \t]{1,4}"),
        # TensorRT's error recorder ("Error Code 1: Cuda Runtime (<text>)", "Cuda Driver (<text>)") and its
        # TensorRT 7 form ("Cuda Error in allocate: 2 (<text>)")
        ("Cuda Runtime (", r"Cuda Runtime \("),
        ("Cuda Driver (", r"Cuda Driver \("),
        ("Cuda Error in ", r"Cuda Error in \w{1,60}: \d{1,6} \("),
        ("CUDA error(", r"CUDA error\(\d{1,6}\), "),  # PaddlePaddle's PADDLE_ENFORCE_GPU_SUCCESS
        ("Gpu API call", r"\(-217:Gpu API call\) "),  # OpenCV's cudaSafeCall (cv::Error::GpuApiCallError)
        ("CUDA: ", r"\bCUDA: "),  # MXNet's and mshadow's CUDA_CALL: CHECK(...) << "CUDA: " << cudaGetErrorString(e)
        # PyCUDA's driver calls ("pycuda._driver.MemoryError: cuMemAlloc failed: out of memory")
        (" failed: ", r"\bcu[A-Z]\w{2,40} failed: "),
        # tiny-cuda-nn's CUDA_CHECK_THROW (instant-ngp, its torch bindings): "<file>:<line> cudaMalloc(&rawptr,
        # n_bytes) failed: <text>", before 2023 "... failed with error <text>"
        (") failed", r"\bcuda[A-Z]\w{2,40}\([^\n]{0,200}?\) failed(?::| with error) "),
    ),
    "cusparse": (("CUDA error", r"CUDA error:[ \t]?"),),  # torch TORCH_CUDASPARSE_CHECK
    "nccl": (
        ("NCCL error in:", r"NCCL error in: [^\n]{0,300}?, "),  # torch C10D_NCCL_CHECK
        ("NCCL failure", r"NCCL failure \d{1,3}: "),  # ONNX Runtime NCCL_CALL
        ("NCCL error:", r"NCCL error: "),
    ),
}
# How frameworks print a CUDA value with neither name nor text: the checkCudaErrors idiom of NVIDIA's "Accelerated
# Ray Tracing in One Weekend in CUDA" (`std::cerr << "CUDA error = " << static_cast<unsigned int>(result)`)
# and the `printf("%s failed with error #%d", ...)` idiom around a runtime call (NVIDIA DIGITS, Caffe's tools:
# "cudaRuntimeGetVersion() failed with error #35"), and the CUDA samples' deviceQuery
# (`printf("cudaGetDeviceCount returned %d\n-> %s\n", ...)`, its text on the next line), and ollama's GPU discovery
# (discover/gpu_info_nvcuda.c, gpu_info_cudart.c: "cuda driver library init failure: %d" with cuInit's CUresult,
# "cudart init failure: %d" with the runtime's cudaError_t), and TensorRT's builder and runtime ("CUDA initialization
# failure with error: 35. Please check your CUDA installation")
VALUE_PREFIXES: Tuple[Tuple[str, str], ...] = (("CUDA error = ", r"CUDA error = "),
                                               ("() failed with error", r"\bcuda[A-Z]\w{2,40}\(\) failed with error #?"),
                                               (" returned ", r"\bcuda[A-Z]\w{2,40} returned "),
                                               (" init failure: ", r"\b(?:cuda driver library|cudart|nvcuda) init failure: "),
                                               ("CUDA initialization failure", r"CUDA initialization failure with error:? "))
# The CUDA runtime's longer texts (five words or more: "the provided PTX was compiled with an unsupported toolchain")
# name their error without a framework's prefix: a program's own check prints them after any label
# ("GPUassert: ", "Error: ") or alone on a line; the short ones ("out of memory") need a prefix
DISTINCT_MESSAGE_WORDS = 5
_BARE_PREFIX = r"(?:(?m:^)[ \t]{0,8}|: )"
# a message is matched only where it ends (the line, ONNX Runtime's " ; GPU=", THC's " at <file>",
# OpenCV's " in function", punctuation): "operation not permitted" is not "operation not permitted when stream is capturing"
_MESSAGE_END = {"cusparse": r" when calling `"}
_LINE_END = r"(?=[ \t]{0,4}(?:$|[;.,:()'\"\]`]|at\b|in function\b))"  # OpenCV: "<text> in function '...'"
# every name of a library starts with one of these: the names' anchors
NAME_HEADS = ("cudaError", "CUDA_ERROR_", "CUDNN_STATUS_", "CUBLAS_STATUS_", "CUFFT_", "CUSOLVER_STATUS_",
              "CUSPARSE_STATUS_", "nccl")


@dataclass(frozen=True)
class Code:
    library: str
    name: str
    value: int
    message: str
    doc: str


class CodeFamilyError(ValueError):
    """code_families.toml or the code table is malformed (a packaging bug, caught by the tests)."""


@lru_cache(maxsize=1)
def code_table() -> Dict[str, Any]:
    """torchlint/data/gpu_error_codes.json, parsed once."""
    return json.loads(resources.files("torchlint").joinpath(CODES_FILE).read_text("utf-8"))


def all_codes(table: Mapping[str, Any]) -> List[Code]:
    """Every error code of the table (success values left out), one per library and name."""
    return [Code(library["library"], code["name"], code["value"], code.get("message", ""), code["doc"])
            for library in table["libraries"] for code in library["codes"] if not _success(code["name"])]


def _success(name: str) -> bool:
    return name.endswith(("Success", "_SUCCESS")) or name == "ncclNumResults"


@lru_cache(maxsize=1)
def load_families() -> Tuple[Mapping[str, Any], ...]:
    text = resources.files("torchlint.explain").joinpath(FAMILIES_FILE).read_text("utf-8")
    return tuple(tomllib.loads(text).get("family", []))


def family_codes(family: Mapping[str, Any], codes: Iterable[Code]) -> List[Code]:
    """The codes a family holds: CUDA values (runtime and driver alike) and other libraries' names."""
    values = set(family.get("cuda", []))
    names = set(family.get("codes", []))
    return [code for code in codes
            if (code.library in CUDA_LIBRARIES and code.value in values)
            or (code.library not in CUDA_LIBRARIES and code.name in names)]


def code_pattern(held: List[Code], phrases: Iterable[str] = ()) -> Tuple[str, List[str]]:
    """The regex that finds any of `held` as frameworks print it, and its anchors."""
    names = sorted({code.name for code in held}, key=lambda name: (-len(name), name))
    parts, anchors = [], []
    if names:
        # a name compared in a check's expression (MXNet's `e == cudaErrorCudartUnloading`) is not the error
        parts.append(r"(?<![A-Za-z0-9_])(?<!== )(?:" + "|".join(map(re.escape, names)) + r")(?![A-Za-z0-9_])")
        anchors += [head for head in NAME_HEADS if any(name.startswith(head) for name in names)]
    for library, prefixes in MESSAGE_PREFIXES.items():
        texts = sorted({code.message for code in held if code.message and _library_group(code.library) == library
                        and code.message != code.name}, key=lambda text: (-len(text), text))
        if not texts:
            continue
        end = _MESSAGE_END.get(library, _LINE_END)
        parts.append("(?:" + "|".join(regex for _, regex in prefixes) + ")(?:"
                     + "|".join(map(re.escape, texts)) + ")" + end)
        anchors += [literal for literal, _ in prefixes]
    distinct = sorted({code.message.rstrip(".") for code in held if code.library in CUDA_LIBRARIES
                       and len(code.message.split()) >= DISTINCT_MESSAGE_WORDS}, key=lambda text: (-len(text), text))
    if distinct:
        parts.append(_BARE_PREFIX + "(?:" + "|".join(map(re.escape, distinct)) + ")" + _LINE_END)
        anchors += distinct
    values = sorted({code.value for code in held if code.library in CUDA_LIBRARIES})
    if values:
        parts.append("(?:" + "|".join(regex for _, regex in VALUE_PREFIXES) + ")(?:"
                     + "|".join(map(str, values)) + r")(?!\d)")
        anchors += [literal for literal, _ in VALUE_PREFIXES]
    phrases = list(phrases)
    if phrases:
        parts.append("|".join(map(re.escape, phrases)))
        anchors += phrases
    return "|".join(parts), list(dict.fromkeys(anchors))


def _library_group(library: str) -> str:
    return "cuda-runtime" if library in CUDA_LIBRARIES else library


_EXTENSION_KEYS = {"id", "cuda", "codes", "phrases", "cause", "workarounds"}
_FAMILY_ONLY_KEYS = ("cuda", "codes", "phrases")


def apply_families(data: Dict[str, Any], families: Iterable[Mapping[str, Any]], codes: List[Code]) -> Dict[str, Any]:
    """The knowledge document `data` with each family applied: an existing signature's pattern and anchors
    extended by its codes (and its causes and workarounds by the family's), or a new signature added."""
    signatures = {entry["id"]: dict(entry) for entry in data.get("signature", [])}
    counts = Counter(entry["id"] for entry in data.get("signature", []))
    twice = sorted(name for name, count in counts.items() if count > 1)
    if twice:  # keyed by id, the second definition would silently replace the first
        raise CodeFamilyError(f"signatures defined twice: {', '.join(twice)}")
    added = []
    for family in families:
        held = family_codes(family, codes)
        if not held and not family.get("phrases"):
            raise CodeFamilyError(f"family {family.get('id')}: holds no code of the table")
        regex, anchors = code_pattern(held, family.get("phrases", []))
        existing = signatures.get(family["id"])
        if existing is not None:
            unknown = set(family) - _EXTENSION_KEYS
            if unknown:
                raise CodeFamilyError(f"family {family['id']} extends a signature: unexpected {sorted(unknown)}")
            existing["regex"] = f"(?:{existing['regex']})|{regex}"
            existing["anchors"] = list(dict.fromkeys(list(existing["anchors"]) + anchors))
            existing["cause"] = list(existing.get("cause", [])) + list(family.get("cause", []))
            existing["workarounds"] = list(existing["workarounds"]) + list(family.get("workarounds", []))
        else:
            entry = {key: value for key, value in family.items() if key not in _FAMILY_ONLY_KEYS}
            entry.update(regex=regex, anchors=anchors)
            entry.setdefault("rules", [])
            entry.setdefault("doctor_checks", [])
            added.append(entry)
    return {**data, "signature": list(signatures.values()) + added}


def family_of_codes(families: Iterable[Mapping[str, Any]], codes: List[Code]) -> Dict[Tuple[str, str], List[str]]:
    """(library, name) of each code -> the ids of the families that hold it (the docs table and the tests)."""
    owners: Dict[Tuple[str, str], List[str]] = {(code.library, code.name): [] for code in codes}
    for family in families:
        for code in family_codes(family, codes):
            owners[(code.library, code.name)].append(family["id"])
    return owners
