"""Families and causes written after the twenty-first to twenty-third held-out splits, from the sources'
own messages: Lightning's fork launcher, an extension missing one of its own functions, a bare bus error,
a retyped XGBoost message, a CUDA library of another major than torch's build; then nvcc missing as
distutils and setuptools quote it, accelerate's bf16 check, bitsandbytes' fallback behind an old driver,
the capability warning cut short, TensorRT 8's magic tag, TensorFlow's ops and the C++11 ABI, TensorFlow's
host allocator, JAX's platform registry, OpenCV's device count at initialisation, two releases of one CUDA
library, and a GPU newer than the CUDA of the build. Each log goes through the real CLI."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("log, expected", [
    ("RuntimeError: Lightning can't create new processes if CUDA is already initialized. Did you manually call "
     "`torch.cuda.*` functions, have moved the model to the device, or allocated memory on the GPU any other way?",
     ("cuda-fork-reinit", "lightning-fork-strategy", True)),
    ("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use "
     "the 'spawn' start method", ("cuda-fork-reinit", None, True)),
    ("ImportError: /usr/lib/python3/site-packages/mmcv/_ext.cpython-37m-x86_64-linux-gnu.so: undefined symbol: "
     "_Z27points_in_boxes_cpu_forwardN2at6TensorES0_S0_",
     ("extension-abi-mismatch", "extension-incomplete-build", False)),
    ("ImportError: /usr/lib/python3/site-packages/torch_scatter/_scatter_cuda.so: undefined symbol: "
     "_ZN3c1017RegisterOperatorsD1Ev", ("extension-abi-mismatch", None, False)),
    ("./run.sh: line 4: 31337 Bus error (core dumped) python train.py", ("dataloader-shm-exhausted", None, False)),
    ("xgboost.core.XGBoostError: XGBoost version not compile with GPU support.",
     ("library-cpu-only-build", None, True)),
    ("ImportError: libcudart.so.10.2: cannot open shared object file: No such file or directory\n"
     "    * torch version: 1.9.0+cu111", ("cuda-library-not-found", "cuda-major-mismatch", True)),
    ("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
     "    * torch version: 1.9.0+cu111", ("cuda-library-not-found", None, True)),
    ("unable to execute \"'/usr/local/cuda'/bin/nvcc\": No such file or directory", ("nvcc-not-found", None, False)),
    ("error: command '/usr/local/cuda/bin/nvcc' failed: No such file or directory", ("nvcc-not-found", None, False)),
    ("ValueError: bf16 mixed precision requires PyTorch >= 1.10 and a supported device.",
     ("bf16-unsupported", None, True)),
    ("UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11060).\n"
     "bitsandbytes/cextension.py:34: UserWarning: The installed version of bitsandbytes was compiled without GPU "
     "support. 8-bit optimizers, 8-bit multiplication, and GPU quantization are unavailable.",
     ("cuda-driver-too-old", None, True)),
    ("RuntimeError: NCCL Error 1: unhandled cuda error\nNVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not "
     "compatible with the current PyTorch ins", ("no-kernel-image", None, True)),
    ("ERROR: 1: [stdArchiveReader.cpp::StdArchiveReader::32] Error Code 1: Serialization (Serialization assertion "
     "magicTagRead == kMAGIC_TAG failed.Magic tag does not match)\nERROR: 4: [runtime.cpp::deserializeCudaEngine::65] "
     "Error Code 4: Internal Error (Engine deserialization failed.)",
     ("tensorrt-engine-incompatible", "not-an-engine-file", False)),
    ("[TensorRT] ERROR: ../rtSafe/coreReadArchive.cpp (38) - Serialization Error in verifyHeader: 0 (Magic tag does "
     "not match)", ("tensorrt-engine-incompatible", "other-tensorrt-version", True)),
    ("tensorflow.python.framework.errors_impl.NotFoundError: ops/correlation.so: undefined symbol: "
     "_ZN10tensorflow12OpDefBuilder4AttrENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
     ("extension-abi-mismatch", "cxx11-abi-flag", False)),
    ("ResourceExhaustedError: OOM when allocating tensor with shape[1024,98,98] and type float on "
     "/job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu", ("cuda-out-of-memory", "host-memory", False)),
    ("ResourceExhaustedError: OOM when allocating tensor with shape[1024,98,98] and type float on "
     "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc", ("cuda-out-of-memory", "working-set", True)),
    ("RuntimeError: Backend 'gpu' failed to initialize: NOT_FOUND: Could not find registered platform with name: "
     "\"cuda\". Available platform names are: Host Interpreter", ("jax-cuda-backend", "cpu-or-mismatched-jaxlib", True)),
    ("cv2.error: OpenCV(4.5.1) modules/core/src/cuda_info.cpp:62: error: (-217:Gpu API call) unknown error in "
     "function 'cv::cuda::getCudaEnabledDeviceCount'", ("cuda-unknown-error", "driver-state-after-suspend", True)),
    ("OSError: /envs/x/lib/libcublas.so.11: symbol free_gemm_select version libcublasLt.so.11 not defined in file "
     "libcublasLt.so.11 with link time reference", ("cuda-library-version-conflict", None, True)),
    ("ImportError: /usr/lib/python3/site-packages/nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: "
     "__nvJitLinkComplete_12_4, version libnvJitLink.so.12", ("cuda-library-version-conflict", None, True)),
    ("CUDA 9.0\nGPU: GeForce RTX 2080 Ti\nRuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED",
     ("cudnn-execution-failed", "gpu-newer-than-build", True)),
    ("CUDA 10.0\nGPU: GeForce RTX 2080 Ti\nRuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED",
     ("cudnn-execution-failed", None, True)),
])
def test_the_first_explanation_and_cause(log, expected, top_answer):
    assert top_answer(log) == expected
