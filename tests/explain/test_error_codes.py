"""Coverage by enumeration: every status code NVIDIA's wheels document (torchlint/data/gpu_error_codes.json,
made by tools/gpu_error_codes.py) is recognised by `torchlint explain` as each framework prints it.

The wrappers are the frameworks' own formats, from their source: torch (c10 CUDA_CHECK, AT_CUDNN_CHECK,
TORCH_CUDABLAS_CHECK, TORCH_CUSOLVER_CHECK, TORCH_CUDASPARSE_CHECK, C10D_NCCL_CHECK, the cuFFT check),
ONNX Runtime (CudaCall: "<LIB> failure <n>: <text> ; GPU=..."), CTranslate2 (CUDA_CHECK, CUBLAS_CHECK),
TensorFlow/XLA stream_executor, Caffe's glog CHECK and ggml's CUDA_CHECK. A message is the library's own text for the code
(cudaGetErrorString, cusparseGetErrorString, ncclGetErrorString), or its name where the framework prints
the name.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from torchlint.explain.code_families import all_codes, code_table, family_of_codes, load_families

ASYNC = ("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
         "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n")
ORT = (" ; GPU=0 ; hostname=worker-1 ; file=/onnxruntime_src/onnxruntime/core/providers/cuda/cuda_call.cc ; "
       "line=129 ; expr={expr}; \n")
WRAPPERS = {
    "cuda-runtime": (
        ("torch", "Traceback (most recent call last):\n  File \"train.py\", line 40, in <module>\n    loss.backward()\n"
                  "RuntimeError: CUDA error: {message}\n" + ASYNC),
        ("torch-device-count", "/usr/lib/python3/site-packages/torch/cuda/__init__.py:128: UserWarning: CUDA "
                               "initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
                               "functions before calling NumCudaDevices() that might have already set an error? Error "
                               "{value}: {message} (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)\n"),
        ("onnxruntime", "onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : "
                        "CUDA failure {value}: {message}" + ORT.format(expr="cudaDeviceSynchronize()")),
        ("ctranslate2", "  File \"transcribe.py\", line 12, in <module>\n    segments = model.transcribe(audio)\n"
                        "RuntimeError: CUDA failed with error {message}\n"),
        ("tensorflow", "2024-03-01 10:00:00.000000: W tensorflow/core/common_runtime/gpu/gpu_device.cc:2256] "
                       "CUDA runtime implicit initialization on GPU:0 failed. Status: {message}\n"),
        ("caffe", "F0301 10:00:00.000000  4242 syncedmem.cpp:71] Check failed: error == cudaSuccess ({value} vs. 0)  "
                  "{message}\n*** Check failure stack trace: ***\n"),
        # ggml-cuda.cu's CUDA_CHECK before 2024 (llama.cpp, whisper.cpp): "CUDA error %d at %s:%d: %s"
        ("ggml", "ggml_init_cublas: found 1 CUDA devices:\n  Device 0: NVIDIA GeForce RTX 3060, compute capability 8.6\n"
                 "CUDA error {value} at /build/llama.cpp/ggml-cuda.cu:1835: {message}\n"),
        # xla/stream_executor/cuda/cuda_status.cc: "CUDA Runtime error: <detail>: <name>: <message>"
        ("xla", "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: CUDA Runtime error: Failed call to "
                "cudaMemcpyAsync: {name}: {message}\n"),
        # TensorRT 8+'s error recorder and TensorRT 7's runtime
        ("tensorrt", "[05/25/2023-20:44:13] [E] Error[1]: [executionContext.cpp::enqueueInternal::816] Error Code 1: "
                     "Cuda Runtime ({message})\n"),
        ("tensorrt-7", "[TensorRT] ERROR: ../rtSafe/cudaConvolutionRunner.cpp (457) - Cuda Error in execute: {value} ({message})\n"
                       "terminate called after throwing an instance of 'nvinfer1::CudaError'\n"),
        ("paddle", "  File \"train.py\", line 20, in <module>\n    loss.backward()\nOSError: (External) CUDA error({value}), "
                   "{message}. \n  [Hint: 'cudaErrorX'. ] (at /paddle/paddle/phi/backends/gpu/cuda/cuda_info.cc:259)\n"),
        ("opencv", "cv2.error: OpenCV(4.5.1) /tmp/opencv/modules/core/src/cuda/gpu_mat.cu:116: error: (-217:Gpu API "
                   "call) {message} in function 'allocate'\n"),
        ("mxnet", "mxnet.base.MXNetError: [10:00:00] src/storage/./pooled_storage_manager.h:157: Check failed: e == "
                  "cudaSuccess || e == cudaErrorCudartUnloading: CUDA: {message}\n"),
        ("pycuda", "pycuda._driver.LogicError: cuMemcpyDtoH failed: {message}\n"),
    ),
    "cuda-driver": (
        ("tensorflow", "2019-03-21 22:15:59.118132: E tensorflow/stream_executor/cuda/cuda_driver.cc:300] "
                       "failed call to cuInit: {name}\n"),
        # cuda_status.cc: "CUDA error: <detail>: <name>[: <cuGetErrorString text>]"
        ("jax", "E0301 10:00:00.000000 1234 cuda_platform.cc:52] failed call to cuInit: INTERNAL: CUDA error: "
                "Failed call to cuInit: {name}\n"),
        ("xla", "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: CUDA error: Failed to launch CUDA kernel: {name}\n"),
    ),
    "cudnn": (
        ("torch", "  File \"/usr/lib/python3/site-packages/torch/nn/modules/conv.py\", line 456, in _conv_forward\n"
                  "RuntimeError: cuDNN error: {name}\n"),
        # TensorFlow's handle-creation line is a signature of its own (memory growth first): it comes first unless
        # the code's family is more specific (a version mismatch, a missing sub-library, an old driver)
        ("tensorflow", "2020-01-01 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] "
                       "Could not create cudnn handle: {name}\n", "tensorflow-cudnn-init"),
        ("onnxruntime", "[E:onnxruntime:Default, cuda_call.cc:118 CudaCall] CUDNN failure {value}: {name}"
                        + ORT.format(expr="cudnnCreate(&cudnn_handle_)")),
    ),
    "cublas": (
        ("torch", "RuntimeError: CUDA error: {name} when calling `cublasCreate(handle)`\n"),
        ("tensorflow", "2020-01-01 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_blas.cc:226] "
                       "failed to create cublas handle: {name}\n"),
        ("onnxruntime", "[E:onnxruntime:Default, cuda_call.cc:118 CudaCall] CUBLAS failure {value}: {name}"
                        + ORT.format(expr="cublasCreate(&cublas_handle_)")),
        ("ctranslate2", "RuntimeError: cuBLAS failed with status {name}\n"),
    ),
    "cufft": (("torch", "    spec = torch.stft(x, n_fft=400, return_complex=True)\nRuntimeError: cuFFT error: {name}\n"),),
    "cusolver": (("torch", "RuntimeError: cusolver error: {name}, when calling `cusolverDnCreate(handle)`. If you keep "
                           "seeing this error, you may use `torch.backends.cuda.preferred_linalg_library()`\n"),),
    "cusparse": (("torch", "RuntimeError: CUDA error: {message} when calling `cusparseSpMM(handle, opA, opB)`\n"),),
    "nccl": (
        ("torch", "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                  "ProcessGroupNCCL.cpp:1970, {message}, NCCL version 2.21.5\n"),
        ("onnxruntime", "NCCL failure {value}: {message}" + ORT.format(expr="ncclAllReduce(...)")),
        ("name", "torch.distributed.DistBackendError: NCCL error: {name}\n"),
    ),
}
REPO = Path(__file__).resolve().parents[2]
_GROUP = {"cudnn-9": "cudnn", "cudnn-8": "cudnn"}
CODES = all_codes(code_table())
OWNERS = family_of_codes(load_families(), CODES)


def _wrapped(code):
    """(framework, log, the wrapper's own signature that may come first instead of the code's family, or None)."""
    for framework, template, *first in WRAPPERS[_GROUP.get(code.library, code.library)]:
        if "{message}" in template and (not code.message or code.library == "cuda-driver"):
            continue  # cuGetErrorString's texts are in libcuda, which no wheel ships
        log = template.format(name=code.name, value=code.value, message=code.message or code.name)
        yield framework, log, (first[0] if first else None)


def test_every_code_belongs_to_exactly_one_family():
    assert len(CODES) > 350
    assert {key: owners for key, owners in OWNERS.items() if len(owners) != 1} == {}


def test_cudnn_v8_names_are_all_known_to_v9():
    """cuDNN 9 keeps each v8 name (the removed ones as deprecated aliases), so a v8 log is read by v9 names."""
    libraries = {library["library"]: {code["name"] for code in library["codes"]} for library in code_table()["libraries"]}
    assert libraries["cudnn-8"] <= libraries["cudnn-9"]


@pytest.mark.parametrize("code", CODES, ids=[f"{code.library}:{code.name}" for code in CODES])
def test_each_code_as_each_framework_prints_it_names_its_family(code, run_explain):
    family = OWNERS[(code.library, code.name)][0]
    wrapped = list(_wrapped(code))
    assert wrapped
    for framework, log, first in wrapped:
        out = run_explain(["--format", "json"], stdin=log)
        found = [match["id"] for match in json.loads(out.stdout)["matches"]]
        assert found[:1] in ([family], [first]), f"{framework}: {log!r} -> {found}"
        assert family in found, f"{framework}: {log!r} -> {found}"


# each NCCL WARN format the table checked in libnccl, as NCCL logs it, and the family that answers it
NCCL_WARN_FAMILIES = {
    "Cuda failure %d '%s'": "nccl-unhandled-cuda-error",
    "Cuda failure '%s'": "nccl-unhandled-cuda-error",
    "Error while %s shared memory segment %s (size %ld), error: %s (%d)": "nccl-system-error",
    "NET/Socket : No usable listening interface found": "nccl-system-error",
    "Bootstrap : no socket interface found": "nccl-system-error",
    "Message truncated : received %d bytes instead of %d": "nccl-invalid-usage",
    "Failed to load libibverbs: %s": "nccl-system-error",
    "Could not enable P2P between dev %d(=%lx) and dev %d(=%lx)": "cuda-peer-access",
    "HINT: In many cases this error indicates that the GPU peer-mapping (BAR1 P2P) resources are exhausted, "
    "which can happen on nodes with more than 8 GPUs.": "cuda-peer-access",
}
_PRINTF = {"%d": "1", "%ld": "4194304", "%lx": "1a000", "%s": "creating"}


@pytest.mark.parametrize("warn_format", code_table()["nccl_warn"]["formats"])
def test_each_nccl_warn_line_names_its_family(warn_format, run_explain):
    line = warn_format
    for spec, value in _PRINTF.items():
        line = line.replace(spec, value)
    log = f"node1:2345:2390 [0] transport/shm.cc:114 NCCL WARN {line}\n"
    found = [match["id"] for match in json.loads(run_explain(["--format", "json"], stdin=log).stdout)["matches"]]
    assert found[:1] == [NCCL_WARN_FAMILIES[warn_format]], (log, found)


def test_the_docs_table_is_what_the_tool_renders():
    spec = importlib.util.spec_from_file_location("error_codes_doc", REPO / "tools" / "error_codes_doc.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    page = (REPO / "docs" / "gpu-error-codes.md").read_text(encoding="utf-8")
    assert page == tool.render(code_table(), list(load_families())), "run python tools/error_codes_doc.py"
    for code in CODES:
        assert f"`[{code.library}:{code.name}]`" in page


def test_a_family_that_holds_no_code_or_extends_with_foreign_fields_is_rejected():
    from torchlint.explain.code_families import CodeFamilyError, apply_families

    data = {"signature": [{"id": "known", "regex": "x", "anchors": ["x"], "workarounds": []}]}
    with pytest.raises(CodeFamilyError, match="holds no code"):
        apply_families(data, [{"id": "empty", "codes": ["CUDNN_STATUS_NO_SUCH_NAME"]}], CODES)
    with pytest.raises(CodeFamilyError, match="unexpected"):
        apply_families(data, [{"id": "known", "cuda": [700], "title": "a second title"}], CODES)
    extended = apply_families(data, [{"id": "known", "cuda": [700]}], CODES)["signature"][0]
    assert "cudaErrorIllegalAddress" in extended["regex"] and "CUDA error" in extended["anchors"]
    assert data["signature"][0]["regex"] == "x"  # the document it was given is left as it was
    twice = {"signature": data["signature"] * 2}
    with pytest.raises(CodeFamilyError, match="defined twice: known"):  # the second would silently replace the first
        apply_families(twice, [], CODES)


RUNTIME_CODES = [code for code in CODES if code.library == "cuda-runtime"]


@pytest.mark.parametrize("code", RUNTIME_CODES, ids=[code.name for code in RUNTIME_CODES])
def test_a_runtime_calls_printf_of_its_value_names_the_family(code, run_explain):
    """`printf("%s failed with error #%d", ...)` around a runtime call (NVIDIA DIGITS, Caffe's tools): the value alone."""
    log = f"cudaRuntimeGetVersion() failed with error #{code.value}\n"
    found = [match["id"] for match in json.loads(run_explain(["--format", "json"], stdin=log).stdout)["matches"]]
    assert found[:1] == [OWNERS[(code.library, code.name)][0]], (log, found)
