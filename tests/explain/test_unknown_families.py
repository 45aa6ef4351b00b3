"""The error families issue 33 found unanswered, each written here from the message format its source
prints (torch/_inductor/exc.py, Triton's ptxas wrapper, torch's c10d watchdog frames, TensorFlow's
stream_executor, torch's THC "cuda runtime error (N)", Caffe's glog CHECK, ONNX Runtime's
CreateExecutionProviderInstance, CTranslate2's CUDA_CHECK), fed through the real CLI."""

from __future__ import annotations

import json

import pytest

CASES = {
    "triton-gpu-too-old": (
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "RuntimeError: Found Tesla P100-PCIE-16GB which is too old to be supported by the triton GPU compiler, "
        "which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but your device "
        "is of CUDA capability 6.0\n",
        "triton-gpu-too-old"),
    "ptxas-too-old-for-gpu": (
        "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n"
        "`ptxas` stderr:\nptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'\n",
        "cuda-ptx-jit/ptxas-older-than-target"),
    "ptx-unsupported-toolchain": (
        "RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.\n"
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n",
        "cuda-ptx-jit/driver-jit"),
    "cublas-handle-creation": (
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/nn/modules/linear.py\", line 114, in forward\n"
        "RuntimeError: CUDA error: CUBLAS_STATUS_INTERNAL_ERROR when calling `cublasCreate(handle)`\n",
        "cublas-internal-error/memory-taken"),
    "tensorflow-cublas-handle": (
        "2021-05-01 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_blas.cc:226] failed to create cublas "
        "handle: CUBLAS_STATUS_NOT_INITIALIZED\n",
        "cublas-not-initialized"),
    "nccl-watchdog-frames-only": (
        "terminate called after throwing an instance of 'c10::DistBackendError'\n"
        "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:565 (most recent call first):\n"
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f1 in /usr/lib/python3/site-packages/torch/lib/libc10.so)\n"
        "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x1d2 (0x7f2 in libtorch_cuda.so)\n"
        "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7f3 in libtorch_cuda.so)\n"
        "frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c (0x7f4 in libtorch_cuda.so)\n",
        "nccl-timeout"),
    "tensorflow-dnn-not-found": (
        "tensorflow.python.framework.errors_impl.FailedPreconditionError: Graph execution error:\n\n"
        "Detected at node 'model/conv2d/Conv2D' defined at (most recent call last):\n"
        "    File \"train.py\", line 30, in <module>\n      model.fit(ds, epochs=5)\n"
        "DNN library is not found.\n\t [[{{node model/conv2d/Conv2D}}]] [Op:__inference_train_function_1234]\n",
        "cudnn-library-not-found/tensorflow-cudnn-missing"),
    "unspecified-launch-failure-windows": (
        "  File \"C:\\Users\\me\\project\\train.py\", line 88, in <module>\n    loss.item()\n"
        "RuntimeError: CUDA error: unspecified launch failure\n",
        "cuda-unknown-error/display-watchdog"),
    "fork-error-3": (
        "RuntimeError: Caught RuntimeError in DataLoader worker process 0.\nOriginal Traceback (most recent call last):\n"
        "  File \"dataset.py\", line 20, in __getitem__\n    image = image.cuda()\n"
        "RuntimeError: cuda runtime error (3) : initialization error at /pytorch/aten/src/THC/THCGeneral.cpp:50\n",
        "cuda-initialization-error/fork"),
    "caffe-cudnn": (
        "I0605 12:00:00.000000  1234 net.cpp:255] Network initialization done.\n"
        "F0605 12:00:01.000000  1234 cudnn_conv_layer.cpp:53] Check failed: status == CUDNN_STATUS_SUCCESS "
        "(4 vs. 0)  CUDNN_STATUS_INTERNAL_ERROR\n*** Check failure stack trace: ***\n",
        "cudnn-internal-error"),
    "caffe-cuda-oom": (
        "F0605 12:00:01.000000  1234 syncedmem.cpp:71] Check failed: error == cudaSuccess (2 vs. 0)  out of memory\n"
        "*** Check failure stack trace: ***\n",
        "cuda-out-of-memory"),
    "onnxruntime-cuda-path": (
        "2024-05-01 10:00:00.0000000 [E:onnxruntime:Default, provider_bridge_ort.cc:1745 onnxruntime::TryGetProviderInfo_CUDA] "
        "D:\\a\\_work\\1\\s\\onnxruntime\\core\\session\\provider_bridge_ort.cc:1426 onnxruntime::ProviderLibrary::Get "
        "[ONNXRuntimeError] : 1 : FAIL : LoadLibrary failed with error 126 \"\"\n"
        "2024-05-01 10:00:00.0000000 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:965 "
        "onnxruntime::python::CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider. "
        "Please reference https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements\n",
        "onnxruntime-cuda-provider"),
    "onnxruntime-cuda-path-alone": (
        "RuntimeError: D:\\a\\_work\\1\\s\\onnxruntime\\python\\onnxruntime_pybind_state.cc:857 "
        "onnxruntime::python::CreateExecutionProviderInstance CUDA_PATH is set but CUDA wasnt able to be loaded. "
        "Please install the correct version of CUDA andcuDNN as mentioned in the GPU requirements page\n",
        "onnxruntime-cuda-provider"),
    "ctranslate2-oom": (
        "  File \"/usr/lib/python3/site-packages/faster_whisper/transcribe.py\", line 600, in __init__\n"
        "    self.model = ctranslate2.models.Whisper(model_path, device=device, compute_type=compute_type)\n"
        "RuntimeError: CUDA failed with error out of memory\n",
        "cuda-out-of-memory/ctranslate2-model-size"),
}


def _explain(run_explain, log):
    text = run_explain([], stdin=log).stdout
    data = json.loads(run_explain(["--format", "json"], stdin=log).stdout)
    return text, data


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_first_explanation_names_the_family(name, run_explain):
    log, expected = CASES[name]
    _, data = _explain(run_explain, log)
    assert data["matches"], name
    first = data["matches"][0]
    causes = first.get("causes") or []
    got = first["id"] + (f"/{causes[0]['id']}" if causes and "/" in expected else "")
    assert got == expected


@pytest.mark.parametrize("name", ["tensorflow-dnn-not-found", "tensorflow-cublas-handle", "caffe-cudnn", "caffe-cuda-oom",
                                  "ctranslate2-oom", "onnxruntime-cuda-path-alone"])
def test_a_log_of_another_framework_gets_no_torch_install_advice(name, run_explain):
    text, _ = _explain(run_explain, CASES[name][0])
    assert "pip install torch" not in text and "nvidia-cudnn-cu12==" not in text
    assert "torch.cuda" not in text and "torch.backends" not in text and "PYTORCH_" not in text


def test_a_tensorflow_log_lists_no_other_framework_as_a_cause(run_explain):
    _, data = _explain(run_explain, CASES["tensorflow-dnn-not-found"][0])
    assert [cause["id"] for cause in data["matches"][0]["causes"]][:1] == ["tensorflow-cudnn-missing"]
    assert not {"ctranslate2", "onnxruntime", "torch"} & {cause["id"] for cause in data["matches"][0]["causes"]}


# Triton's launcher (gpuAssert) prints "Triton Error [CUDA]: " + cuGetErrorString: the driver's texts, which
# no wheel ships; these are texts it is seen printing, each the runtime's text for the same value.
TRITON = {
    "an illegal memory access was encountered": "cuda-illegal-memory-access",
    "out of memory": "cuda-out-of-memory",
    "invalid argument": "cuda-invalid-argument",
    "operation not permitted": "cuda-not-supported-here",
    "invalid device context": "cuda-context-state",
}


@pytest.mark.parametrize("text", sorted(TRITON))
def test_triton_launcher_errors_name_the_family_of_their_code(text, run_explain):
    log = ("  File \"/usr/lib/python3/site-packages/triton/backends/nvidia/driver.py\", line 444, in __call__\n"
           f"    self.launch(*args, **kwargs)\nRuntimeError: Triton Error [CUDA]: {text}\n")
    _, data = _explain(run_explain, log)
    assert [match["id"] for match in data["matches"]][:1] == [TRITON[text]]
