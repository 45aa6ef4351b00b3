"""Families and causes written after the twenty-sixth held-out split, from the sources' own messages: the CUDA
error NCCL names inside its "unhandled cuda error" (NCCL's CUDACHECK), tiny-cuda-nn's CUDA_CHECK_THROW, a CUDA
header missing when an extension compiles, PaddlePaddle's architecture check, a driver older than the kernel
(modpost's GPL-only symbol), GPU PhysX's buffers under an illegal memory access, a container without the NVIDIA
runtime reported as a driver too old, and NCCL's shared-memory transport named in its INFO lines. Each log goes
through the real CLI."""

from __future__ import annotations

import json

import pytest

NCCL = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
        "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
        "ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\n")


@pytest.mark.parametrize("log, expected", [
    (NCCL + "Cuda failure 'system not yet initialized'", ("cuda-driver-setup", "fabric-manager-not-running", True)),
    (NCCL + "Cuda failure 802 'system not yet initialized'", ("cuda-driver-setup", "fabric-manager-not-running", True)),
    (NCCL + "Cuda failure 'peer access is not supported between these two devices'", ("cuda-peer-access", None, True)),
    (NCCL + "Cuda failure 'out of memory'", ("cuda-out-of-memory", "working-set", True)),
    ("Uncaught exception: /src/instant-ngp/dependencies/tiny-cuda-nn/include/tiny-cuda-nn/gpu_memory.h:123 "
     "cudaMalloc(&rawptr, n_bytes+DEBUG_GUARD_SIZE*2) failed with error out of memory",
     ("cuda-out-of-memory", "working-set", True)),
    ("RuntimeError: /tcnn/src/gpu_memory.h:590 cudaMalloc(&rawptr, n_bytes) failed: out of memory",
     ("cuda-out-of-memory", "working-set", True)),
    ("csrc/fused_adam.cu:1:10: fatal error: cuda_runtime.h: No such file or directory\ncompilation terminated.",
     ("cuda-headers-missing", None, False)),
    ("C:\\torch\\include\\ATen/cuda/CUDAContext.h(6): fatal error C1083: Cannot open include file: 'cublas_v2.h': "
     "No such file or directory", ("cuda-headers-missing", None, False)),
    ("In file included from csrc/ops.cu:4:\n/usr/include/cusparse.h: fatal error: cusparse.h: No such file or "
     "directory", ("cuda-headers-missing", None, False)),
    ("RuntimeError: (PreconditionNotMet) Mismatched GPU Architecture: The installed PaddlePaddle package was compiled "
     "for 60 61 70 75 80 86, but your current GPU is 120", ("no-kernel-image", "paddle-build-architectures", True)),
    ("  MODPOST /var/lib/dkms/nvidia/470.223.02/build/Module.symvers\nFATAL: modpost: GPL-incompatible module "
     "nvidia.ko uses GPL-only symbol '__rcu_read_lock'",
     ("nvidia-driver-install-failed", "driver-older-than-kernel", True)),
    ("[Error] [carb.gym.plugin] Gym cuda error: an illegal memory access was encountered: ../../../source/plugins/"
     "carb/gym/impl/Gym/GymPhysX.cpp: 5993\nRuntimeError: CUDA error: an illegal memory access was encountered",
     ("cuda-illegal-memory-access", "physx-gpu-buffers", True)),
    ("$ docker compose up\nError: cudaGetDeviceCount failed: CUDA driver version is insufficient for CUDA runtime "
     "version", ("cuda-driver-too-old", "container-without-gpu-runtime", True)),
    ("node1:77:90 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\n"
     "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled system error, "
     "NCCL version 2.14.3", ("nccl-system-error", "shm", True)),
])
def test_the_log_names_its_family_and_cause(top_answer, log, expected):
    assert top_answer(log) == expected


@pytest.mark.parametrize("log, expected", [
    # NCCL with no inner CUDA error named stays NCCL's own answer
    (NCCL + "Cuda failure 'unknown error'", "nccl-unhandled-cuda-error"),
    # the driver's version is in the paste: the driver really is too old, container or not
    ("$ docker run --gpus all img\nNVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4\n"
     "RuntimeError: CUDA driver version is insufficient for CUDA runtime version", "cuda-driver-too-old"),
    # a header of the project itself is not the CUDA toolkit's
    ("src/kernels.cu:3:10: fatal error: my_kernels.h: No such file or directory", None),
])
def test_without_the_evidence_the_answer_stays_general(run_explain, log, expected):
    data = json.loads(run_explain(["--format", "json"], stdin=log + "\n").stdout)
    if expected is None:
        assert not any(m["id"] == "cuda-headers-missing" for m in data["matches"])
        return
    first = data["matches"][0]
    assert first["id"] == expected
    assert not (first.get("causes") or []) or first["causes"][0]["id"] != "container-without-gpu-runtime"


# written after the twenty-seventh held-out split
@pytest.mark.parametrize("log, expected", [
    ("W1204 10:11:12.123 gpu_resources.cc:119] The GPU compute capability in your current machine is 50, which is not "
     "supported by Paddle, it is recommended to install the corresponding wheel package according to the installation "
     "information on the official Paddle website.", ("no-kernel-image", "paddle-build-architectures", True)),
    ("W0101 gpu_resources.cc:96] The GPU architecture in your current machine is Pascal, which is not compatible with "
     "Paddle installation with arch: 70 75 80 86 , it is recommended to install the corresponding wheel package "
     "according to the installation information on the official Paddle website.",
     ("no-kernel-image", "paddle-build-architectures", True)),
    ("RuntimeError: Found cuDNN version 8600, but JAX was built against version 8904, which is newer. The copy of "
     "cuDNN that is installed must be at least as new as the version against which JAX was built.\n"
     "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed.",
     ("jax-cuda-backend", "libraries-too-old", True)),
    ("src/roi_align_cuda.cpp:5:23: error: 'AT_CHECK' was not declared in this scope; did you mean 'DCHECK'?",
     ("extension-uses-removed-torch-api", None, False)),
    ('csrc/nms.cu(12): error: identifier "THCudaCheck" is undefined', ("extension-uses-removed-torch-api", None, False)),
    ("src/nms_kernel.cu:2:10: fatal error: THC/THC.h: No such file or directory",
     ("extension-uses-removed-torch-api", None, False)),
])
def test_written_after_held_out_27(top_answer, log, expected):
    assert top_answer(log) == expected


def test_a_jax_backend_warning_in_a_torch_programs_log_is_not_its_failure(run_explain):
    log = ("CUDA backend failed to initialize: Found cuDNN version 8700, but JAX was built against version 8904, which "
           "is newer. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n"
           "Traceback (most recent call last):\n  File \"/usr/local/lib/python3.10/dist-packages/torch/nn/modules/"
           "module.py\", line 1501, in _call_impl\nKeyError: 'caption'\n")
    data = json.loads(run_explain(["--format", "json"], stdin=log).stdout)
    assert not data["matches"]
    jax_only = log.split("Traceback")[0]
    assert json.loads(run_explain(["--format", "json"], stdin=jax_only).stdout)["matches"][0]["id"] == "jax-cuda-backend"


# written after the twenty-eighth held-out split (from its failing families and the sources' own messages)
@pytest.mark.parametrize("log, expected", [
    ("OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading "
     '"C:\\env\\lib\\site-packages\\torch\\lib\\cublas64_12.dll" or one of its dependencies.',
     ("windows-paging-file-too-small", None, False)),
    ("torch 2.4.0+cpu\nAttributeError: module 'torch._C' has no attribute '_cuda_setDevice'",
     ("torch-not-compiled-with-cuda", "cpu-build", True)),
    ("RuntimeError: Cannot initialize CUDA without ATen_cuda library. PyTorch splits its backend into two shared "
     "libraries: a CPU library and a CUDA library", ("torch-not-compiled-with-cuda", "cpu-build", True)),
    ("  File \"utils/torch_utils.py\", line 60, in select_device\n"
     "AssertionError: CUDA unavailable, invalid device 0 requested", ("torch-not-compiled-with-cuda", "cpu-build", True)),
    ("slurmstepd: error: task 0 launch\nRuntimeError: Attempting to deserialize object on a CUDA device but "
     "torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with "
     "map_location=torch.device('cpu') to map your storages to the CPU.",
     ("torch-not-compiled-with-cuda", "no-gpu-allocated", True)),
    ("$ sbatch train.sh\nAssertionError: Torch not compiled with CUDA enabled",
     ("torch-not-compiled-with-cuda", "cpu-build", True)),
    ("docker: Error response from daemon: create nvidia_driver_375.26: VolumeDriver.Create: internal error, check "
     "logs for details.", ("container-gpu-runtime", "nvidia-docker-v1-plugin", True)),
    ("$ docker exec -it trainer nvidia-smi\nFailed to initialize NVML: Unknown Error",
     ("container-gpu-runtime", "devices-lost", True)),
    ("docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].",
     ("container-gpu-runtime", "toolkit-missing", True)),
    ("ggml-cuda/mmq.cuh:2422: ERROR: CUDA kernel mul_mat_q has no device code compatible with CUDA arch 600. "
     "ggml-cuda.cu was compiled for: 520,610,700", ("no-kernel-image", "ggml-build-architectures", True)),
    ("MemoryError: std::bad_alloc: CUDA error at: /opt/conda/include/rmm/mr/device/cuda_memory_resource.hpp:70: "
     "cudaErrorMemoryAllocation out of memory", ("cuda-out-of-memory", "rmm-pool", True)),
    ("UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names.Available "
     "providers: 'AzureExecutionProvider,\n CPUExecutionProvider'", ("onnxruntime-cuda-provider", "cpu-only-package", True)),
    (">>> onnxruntime.get_device()\n'CPU'\n[W:onnxruntime:Default, onnxruntime_pybind_state.cc:965 "
     "CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider.",
     ("onnxruntime-cuda-provider", "cpu-only-package", True)),
    ("nvidia-cudnn-cu12 9.1.0.70\n[E:onnxruntime:Default, provider_bridge_ort.cc:1745 TryGetProviderLibrary] Failed "
     "to load library libonnxruntime_providers_cuda.so with error: libcudnn.so.8: cannot open shared object file: "
     "No such file or directory", ("cudnn-library-not-found", "onnxruntime", True)),
])
def test_written_after_held_out_28(top_answer, log, expected):
    assert top_answer(log) == expected


def test_another_frameworks_library_error_is_not_explained_by_the_torch_beside_it(run_explain):
    onnx = ("torch 2.1.0+cu121\n[E:onnxruntime:Default, provider_bridge_ort.cc:1480 TryGetProviderLibrary] Failed to "
            "load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot open shared object "
            "file: No such file or directory\n")
    data = json.loads(run_explain(["--format", "json"], stdin=onnx).stdout)
    assert data["top"] == "onnxruntime-cuda-provider/cuda-major"
    assert not any("torch" in diagnosis["text"] for diagnosis in data.get("diagnoses", []))


@pytest.mark.parametrize("smi_driver, expected_cause", [
    ("550.54.14", "container-without-gpu-runtime"),  # runs CUDA 12.x: the driver is not what is too old
    ("470.82.01", None),  # too old for CUDA 12: the message may be right
])
def test_a_stated_driver_new_enough_for_the_stated_cuda_points_at_the_container(top_answer, smi_driver, expected_cause):
    log = (f"| NVIDIA-SMI {smi_driver}   Driver Version: {smi_driver}   CUDA Version: 12.4 |\n$ docker run app\n"
           "torch 2.3.0+cu121\nRuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA "
           "runtime version")
    assert top_answer(log) == ("cuda-driver-too-old", expected_cause, True)


def test_rmm_logs_get_no_torch_advice(run_explain):
    log = ("MemoryError: std::bad_alloc: out_of_memory: CUDA error at: /opt/conda/include/rmm/mr/device/"
           "cuda_memory_resource.hpp:70: cudaErrorMemoryAllocation out of memory\n")
    data = json.loads(run_explain(["--format", "json"], stdin=log).stdout)
    assert data["top"] == "cuda-out-of-memory/rmm-pool"
    advice = json.dumps(data["matches"][0].get("workarounds", []))
    assert "torch" not in advice.lower() and "rmm.reinitialize" in advice


# written after the twenty-ninth held-out split (from its failing families and the sources' own messages)
@pytest.mark.parametrize("log, expected", [
    ('time=2025-01-02T10:00:00 level=INFO source=gpu.go:630 msg="unable to load cuda driver library" '
     'library=/usr/lib/x86_64-linux-gnu/libcuda.so.570.124.06 error="cuda driver library init failure: 3"',
     ("cuda-initialization-error", "driver-state", True)),
    ('level=INFO source=gpu.go:630 msg="unable to load cudart" error="cudart init failure: 999"',
     ("cuda-unknown-error", "driver-state-after-suspend", True)),
    ("W tensorflow/core/common_runtime/bfc_allocator.cc:419] Allocator (GPU_0_bfc) ran out of memory trying to "
     "allocate 1.21GiB (rounded to 1296000000).  Current allocation summary follows.",
     ("cuda-out-of-memory", "working-set", True)),
    ("tensorflow.python.framework.errors_impl.InternalError: Dst tensor is not initialized.",
     ("cuda-out-of-memory", "working-set", True)),
    ("subprocess.CalledProcessError: Command '['/usr/bin/python3', 'train.py']' died with <Signals.SIGKILL: 9>.",
     ("host-out-of-memory-killed", None, False)),
    ("Process finished with exit code 137 (interrupted by signal 9: SIGKILL)", ("host-out-of-memory-killed", None, False)),
    ("/usr/lib/ollama/libggml-cuda.so: undefined symbol: ggml_backend_cuda_reg\n"
     "Error: llama runner process has terminated: exit status 127", ("ollama-runner-terminated", "stale-libraries", True)),
    ("OSError: /usr/local/cuda/lib64/libcublas.so.12: version `libcublasLt.so.12' not found (required by "
     "/usr/local/cuda/lib64/libcublas.so.12)", ("cuda-library-version-conflict", None, True)),
    ("ImportError: /opt/venv/lib/python3.11/site-packages/nvidia/cusolver/lib/libcusolver.so.11: undefined symbol: "
     "cublasLtGetVersion, version libcublasLt.so.12", ("cuda-library-version-conflict", None, True)),
])
def test_written_after_held_out_29(top_answer, log, expected):
    assert top_answer(log) == expected


def test_a_fork_still_leads_for_a_python_program(top_answer):
    log = ("RuntimeError: DataLoader worker (pid 123) exited unexpectedly\n"
           "RuntimeError: CUDA error: initialization error")
    assert top_answer(log) == ("cuda-initialization-error", "fork", True)


# written after the thirtieth held-out split (from its failing families and the sources' own messages)
@pytest.mark.parametrize("log, expected", [
    ("ValueError: Unknown CUDA arch (8.6) or GPU not supported", ("nvcc-older-than-build", "torch-arch-table", True)),
    ("nvcc fatal   : Value 'sm_89' is not defined for option 'gpu-code'", ("nvcc-older-than-build", None, True)),
    ("E tensorflow/stream_executor/cuda/cuda_dnn.cc:221] Loaded cudnn library: 6021 but source was compiled against "
     "6500. If using a binary install, upgrade your cudnn library to match.", ("cudnn-version-mismatch", None, True)),
    ("_catboost.CatBoostError: catboost/libs/train_lib/train_model.cpp:1165: Environment for task type [GPU] not found",
     ("library-cpu-only-build", None, True)),
    ("PS C:\\Users\\me> docker run --gpus all ubuntu nvidia-smi\nServer: Docker Desktop 4.1.0 (69386)\n"
     "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].",
     ("container-gpu-runtime", "wsl2-gpu-support", True)),
    ("../aten/src/ATen/native/cuda/Loss.cu:240: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [5,0,0] "
     "Assertion `t >= 0 && t < n_classes` failed.\nRuntimeError: CUDA error: device-side assert triggered",
     ("device-side-assert", "index-out-of-range", False)),
    ('  File "/usr/lib/python3.6/site-packages/torch/nn/modules/loss.py", line 601, in forward\n'
     "    return F.cross_entropy(input, target, weight=self.weight)\nRuntimeError: cuda runtime error (59) : "
     "device-side assert triggered at /pytorch/torch/lib/THC/generic/THCStorage.c:32",
     ("device-side-assert", "targets-or-token-ids", False)),
    ("RuntimeError: CUDA error: device-side assert triggered", ("device-side-assert", None, True)),
])
def test_written_after_held_out_30(top_answer, log, expected):
    assert top_answer(log) == expected


# written after the thirty-second held-out split (from its failing families and the sources' own messages)
@pytest.mark.parametrize("log, expected", [
    ("OSError: [WinError 126] The specified module could not be found. Error loading "
     '\\"C:\\\\Users\\\\me\\\\venv\\\\lib\\\\site-packages\\\\torch\\\\lib\\\\fbgemm.dll\\" or one of its dependencies.',
     ("torch-windows-dll-load", None, False)),
    ("/usr/bin/ld: cannot find -lcudart: No such file or directory\ncollect2: error: ld returned 1 exit status",
     ("cuda-library-not-found", None, True)),
    ("/usr/bin/ld: cannot find -lcuda: No such file or directory", ("libcuda-not-found", None, True)),
    ("W external/tsl/tsl/framework/bfc_allocator.cc:485] Allocator (GPU_0_bfc) ran out of memory trying to allocate "
     "1.00GiB (rounded to 1073741824)requested by op", ("cuda-out-of-memory", "working-set", True)),
    ("#SBATCH --partition=cpu\nRuntimeError: No CUDA GPUs are available",
     ("no-cuda-gpus-available", "no-gpu-allocated", True)),
    ("srun python run.py\ncudaErrorNoDevice: no CUDA-capable device is detected",
     ("cuda-driver-init-failed", "no-gpu-allocated", True)),
    ("glfw.GLFWError: (65544) b'X11: The DISPLAY environment variable is missing'",
     ("headless-opengl-rendering", None, True)),
    ("ImportError: Cannot initialize a EGL device display. This likely means that your EGL driver does not support "
     "the PLATFORM_DEVICE extension, which is required for creating a headless rendering context.",
     ("headless-opengl-rendering", None, True)),
])
def test_written_after_held_out_32(top_answer, log, expected):
    assert top_answer(log) == expected


# written after the thirty-third held-out split (from its failing families and the sources' own messages)
@pytest.mark.parametrize("log, expected", [
    ("RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA versions. PyTorch has "
     "CUDA Version=11.1 and torchvision has CUDA Version=10.2. Please reinstall the torchvision that matches your "
     "PyTorch install.",
     ("extension-cuda-version-mismatch", "torchvision-build-mismatch", True)),
    ("RuntimeError: Detected that PyTorch and torch_sparse were compiled with different CUDA versions. PyTorch has "
     "CUDA version 11.3 and torch_sparse has CUDA version 10.2. Please reinstall the torch_sparse that matches your "
     "PyTorch install.",
     ("extension-cuda-version-mismatch", "pyg-wheel-for-other-cuda", True)),
    ("RuntimeError: No such operator torchvision::nms", ("torchvision-torch-mismatch", None, True)),
    ("RuntimeError: operator torchvision::nms does not exist", ("torchvision-torch-mismatch", None, True)),
    ("CUDA SETUP: CUDA detection failed! Possible reasons:\n1. CUDA driver not installed\n2. CUDA not installed\n"
     "3. You have multiple conflicting CUDA libraries\n4. Required library not pre-compiled for this bitsandbytes "
     "release!", ("bitsandbytes-cuda-setup", None, True)),
    ("CUDA SETUP: Problem: The main issue seems to be that the main CUDA runtime library was not detected.",
     ("bitsandbytes-cuda-setup", None, True)),
    ("UserWarning: Failed to load custom C++ ops. Running on CPU mode Only!\n"
     "NameError: name '_C' is not defined",
     ("extension-built-without-gpu", "gpu-not-visible-at-build", True)),
    ("IRuntime::deserializeCudaEngine: Error Code 1: Serialization (Serialization assertion "
     "plan->header.magicTag == rt::kPLAN_MAGIC_TAG failed.)",
     ("tensorrt-engine-incompatible", "other-tensorrt-version", True)),
    ("W tensorflow/compiler/xla/stream_executor/gpu/asm_compiler.cc:115] *** WARNING *** You are using ptxas "
     "10.1.243, which is older than 11.1. ptxas before 11.1 is known to miscompile XLA code, leading to incorrect "
     "results or invalid-address errors.",
     ("xla-ptxas-version-warning", None, True)),
])
def test_written_after_held_out_33(top_answer, log, expected):
    assert top_answer(log) == expected


# written after the thirty-fourth held-out split (from its failing families and the sources' own messages)
@pytest.mark.parametrize("log, expected", [
    ("Got cutlass error: Error Internal at: 93\ncudaGetDeviceCount returned 35\n", ("cuda-driver-too-old", None, True)),
    ("cudaGetDeviceCount returned 100\nResult = FAIL", ("cuda-driver-init-failed", "no-driver", True)),
    ("onnxruntime.capi.onnxruntime_pybind11_state.EPFail: [ONNXRuntimeError] : 11 : EP_FAIL : TensorRT EP could not "
     "deserialize engine from cache: /srv/trt_cache/TensorrtExecutionProvider_TRTKernel_graph_main_0_0_sm86.engine",
     ("tensorrt-engine-incompatible", "onnxruntime-engine-cache", True)),
])
def test_written_after_held_out_34(top_answer, log, expected):
    assert top_answer(log) == expected


# written after the thirty-fifth held-out split (from its failing families and the sources' own messages)
@pytest.mark.parametrize("log, expected", [
    ("OSError: Could not find compatible tinycudann extension for compute capability 86.",
     ("tinycudann-no-kernels-for-gpu", None, True)),
    ("[Error] [omni.physx.plugin] PhysX error: Patch buffer overflow detected, please increase its size to at least "
     "503808 in the scene desc!", ("physx-gpu-buffer-overflow", None, True)),
    ("[TensorRT] ERROR: Internal error: could not find any implementation for node (Unnamed Layer* 0) [Convolution], "
     "try increasing the workspace size with IBuilder::setMaxWorkspaceSize()",
     ("tensorrt-out-of-memory", "workspace-size", True)),
    ("modules.devices.NansException: A tensor with all NaNs was produced in Unet. This could be either because "
     "there's not enough precision to represent the picture, or because your video card does not support half type.",
     ("fp16-nan-output", "sd-webui-half-precision", False)),
    ('ValueError: Failed to initialize Pyglet window with an OpenGL >= 3+ context. If you\'re logged in via SSH, '
     'ensure that you\'re running your script with vglrun (i.e. VirtualGL). The internal error message was ""',
     ("headless-opengl-rendering", None, True)),
])
def test_written_after_held_out_35(top_answer, log, expected):
    assert top_answer(log) == expected


# written after the thirty-sixth held-out split (from its failing families and the sources' own messages)
@pytest.mark.parametrize("log, expected", [
    ('  File "/srv/ComfyUI/execution.py", line 327, in execute\ntorch.OutOfMemoryError: Allocation on device \n\n'
     "Got an OOM, unloading all loaded models.", ("cuda-out-of-memory", "comfyui-vram", True)),
    ("torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\n"
     "Currently allocated     : 9.43 GiB\nRequested               : 640.00 MiB", ("cuda-out-of-memory", "working-set", True)),
    ("ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is "
     "needed, which is larger than the available KV cache memory (10.12 GiB).", ("cuda-out-of-memory", "vllm-kv-cache", True)),
    ("ValueError: Free memory on device cuda:0 (12.18/23.56 GiB) on startup is less than desired GPU memory utilization "
     "(0.92, 21.67 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
     ("cuda-out-of-memory", "vllm-gpu-shared", True)),
    ("AssertionError: Error in memory profiling. Initial free memory 20.1 GiB, current free memory 22.3 GiB.",
     ("cuda-out-of-memory", "vllm-gpu-shared", True)),
    ("PxgCudaDeviceMemoryAllocator fail to allocate memory 339738624 bytes!! Result = 2\n[Error] [carb.gym.plugin] Gym "
     "cuda error: an illegal memory access was encountered: ../../../source/plugins/carb/gym/impl/Gym/GymPhysX.cpp: 4210",
     ("cuda-out-of-memory", "physx-environments", True)),
    ('level=INFO source=gpu.go:300 msg="unable to load cuda driver library" error="cuda driver library init failure: 804"',
     ("cuda-driver-setup", None, True)),
    ('level=INFO source=gpu.go:300 msg="error looking up nvidia GPU memory" error="nvml vram init failure: Driver Not '
     'Loaded (9)"', ("driver-not-loaded", "kernel-module-not-built", True)),
    ("pynvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.",
     ("nvml-driver-mismatch", None, True)),
    ('  File "/w/groundingdino/models/GroundingDINO/ms_deform_attn.py", line 53, in forward\n'
     "NameError: name '_C' is not defined", ("extension-built-without-gpu", "gpu-not-visible-at-build", True)),
])
def test_written_after_held_out_36(top_answer, log, expected):
    assert top_answer(log) == expected


# written after the thirty-seventh held-out split (from its failing families and the sources' own messages)
@pytest.mark.parametrize("log, expected", [
    ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
     "port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use",
     ("distributed-port-in-use", None, False)),
    ("[W socket.cpp:663] [c10d] The server socket has failed to bind to [kubernetes.docker.internal]:29500 (system "
     "error: 10048 - Only one usage of each socket address (protocol/network address/port) is normally permitted.).",
     ("distributed-port-in-use", None, False)),
    ("[W socket.cpp:601] [c10d] The IPv6 network addresses of (node-3, 44685) cannot be retrieved (gai error: -2 - "
     "Name or service not known).\ntorch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. "
     "1/2 clients joined.", ("distributed-host-unresolved", None, False)),
    ("ValueError: host not found: Name or service not known", ("distributed-host-unresolved", None, False)),
    ("[TensorRT] ERROR: ../rtSafe/cublas/cublasLtWrapper.cpp (279) - Assertion Error in getCublasLtHeuristic: 0 "
     "(cublasStatus == CUBLAS_STATUS_SUCCESS)", ("tensorrt-cublaslt-heuristic", None, True)),
    ("RuntimeError: jaxlib is version 0.1.55, but this version of jax requires version >= 0.1.69.",
     ("jax-jaxlib-version-skew", None, False)),
    ("openmm.OpenMMException: Illegal value for DeviceIndex: 3", ("invalid-device-ordinal", None, True)),
])
def test_written_after_held_out_37(top_answer, log, expected):
    assert top_answer(log) == expected


# written after the thirty-eighth held-out split (from its failing families and the sources' own messages:
# torch/serialization.py, jax_plugins/cuda/__init__.py, Triton's code generator on pre-Volta GPUs, and the CUDA
# runtime's own texts as a program's own check prints them)
@pytest.mark.parametrize("log, expected", [
    ("RuntimeError: Attempting to deserialize object on CUDA device 1 but torch.cuda.device_count() is 1. Please use "
     "torch.load with map_location to map your storages to an existing device.",
     ("invalid-device-ordinal", "checkpoint-device", True)),
    ("RuntimeError: Internal Triton PTX codegen error:\nptxas /tmp/tmpk2_1, line 297; error   : Feature 'mma' "
     "requires .target sm_70 or higher", ("triton-gpu-too-old", "tensor-core-instructions", True)),
    ("LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32",
     ("triton-gpu-too-old", "pascal-warp-shuffle", True)),
    ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nRuntimeError: Found Tesla P40 which is too "
     "old to be supported by the triton GPU compiler, which is used as the backend. Triton only supports devices of "
     "CUDA Capability >= 7.0, but your device is of CUDA capability 6.1", ("triton-gpu-too-old", "inductor-check", True)),
    ("RuntimeError: Unable to use CUDA because of the following issues with CUDA components:\nOutdated cuDNN "
     "installation found.\nVersion JAX was built against: 90800\nMinimum supported: 90800\nInstalled version: 90100\n"
     "The local installation version must be no lower than 90800.", ("jax-cuda-backend", "libraries-too-old", True)),
    ("RuntimeError: Unable to load cuSPARSE. Is it installed?", ("jax-cuda-backend", "ld-library-path", True)),
    ("RuntimeError: cuDNN 9.10.0 had a binary backward-compatibility issue due to reordered enum values affecting "
     "block-scale datatypes. Found runtime version 91000 and build version 90800. Please upgrade to 9.10.1 or above.",
     ("jax-cuda-backend", "cudnn-9-10-defect", True)),
    ("GPUassert: the provided PTX was compiled with an unsupported toolchain. kernel.cu 42",
     ("cuda-ptx-jit", "driver-jit", True)),
    ("Error: a PTX JIT compilation failed", ("cuda-ptx-jit", "driver-jit", True)),
])
def test_written_after_held_out_38(top_answer, log, expected):
    assert top_answer(log) == expected


# written after the thirty-ninth held-out split (from its failing families and the sources' own messages:
# c10's CUDAMallocAsyncAllocator.cpp, cupy/_environment.py, Warp's cuda_util.cpp, enroot's NVIDIA hook, PyG's
# extensions' CUDA checks and TensorRT's initialisation message)
@pytest.mark.parametrize("log, expected", [
    ("RuntimeError: cudaMallocAsync does not yet support checkPoolLiveAllocations. If you need it, please file an issue "
     "describing your use case.", ("cuda-malloc-async-unsupported", None, True)),
    ("RuntimeError: cudaMallocAsync does not yet support shareIpcHandle. If you need it, please file an issue "
     "describing your use case.", ("cuda-malloc-async-unsupported", None, True)),
    ("UserWarning: CUDA path could not be detected. Set CUDA_PATH environment variable if CuPy fails to load.\n"
     "RuntimeError: CuPy failed to load nvrtc64_120_0.dll: FileNotFoundError: Could not find module "
     "'nvrtc64_120_0.dll' (or one of its dependencies).", ("cupy-cuda-libraries", "cuda-path", True)),
    ("Warp CUDA error: Failed to get driver entry point 'cuDeviceGetUuid' (CUDA error 34)\n"
     "Warp CUDA error 36: API call is not supported in the installed CUDA driver",
     ("warp-driver-entry-point", None, True)),
    ("pyxis: importing docker image: nvcr.io#nvidia/pytorch:24.05-py3\nslurmstepd: error: pyxis: container start "
     "failed with error code: 1\nslurmstepd: error: pyxis:     [ERROR] Command not found: nvidia-container-cli, see "
     "https://github.com/NVIDIA/libnvidia-container", ("container-gpu-runtime", "toolkit-missing", True)),
    ('  File "/opt/venv/lib/python3.10/site-packages/torch_cluster/fps.py", line 70, in fps\n'
     "    out = torch.ops.torch_cluster.fps(src, ptr, r, random_start)\nRuntimeError: Not compiled with CUDA support",
     ("library-cpu-only-build", "pyg-cpu-wheel", True)),
    ("[TRT] [E] 6: CUDA initialization failure with error: 35. Please check your CUDA installation: "
     "http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html", ("cuda-driver-too-old", None, True)),
])
def test_written_after_held_out_39(top_answer, log, expected):
    assert top_answer(log) == expected


# written after the fortieth held-out split (from its failing families and the sources' own messages: NCCL's
# shmutils.cc, CUDA's crt/host_config.h and nvcc, Paddle's dynamic_loader.cc, libNVVM's nvvmResult, the container
# toolkit's CDI mode and enroot's NVIDIA hook, EXLA's client options, the ELF loader's symbol versions)
@pytest.mark.parametrize("log, expected", [
    ("host:1:9 [0] misc/shmutils.cc:70 NCCL WARN Error: failed to extend /dev/shm/nccl-q2ZJ6y to 9637892 bytes, "
     "error: No space left on device (28)", ("nccl-system-error", "shm", True)),
    ("nvcc fatal : Unsupported NVHPC compiler found. nvc++ is the only NVHPC compiler that is supported.",
     ("nvcc-unsupported-host-compiler", None, False)),
    ("nvcc fatal   : Host compiler targets unsupported OS.", ("nvcc-unsupported-host-compiler", None, False)),
    ("Error: Failed to find dynamic library: libcublas.so ( libcublas.so: cannot open shared object file: No such "
     "file or directory )\n Please specify its path correctly using following ways: ",
     ("paddle-library-not-configured", None, True)),
    ("numba.cuda.cudadrv.nvvm.NvvmError: Failed to compile\n\n<unnamed>:11:24: parse expected comma after load's "
     "type\nNVVM_ERROR_COMPILATION", ("nvvm-compilation-error", None, True)),
    ("cuda.bindings.nvvm.nvvmError: ERROR_INVALID_IR (6)", ("nvvm-compilation-error", None, True)),
    ("Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all",
     ("container-gpu-runtime", "cdi-spec", True)),
    ("pyxis: importing docker image: python:3.11\nRuntimeError: Found no NVIDIA driver on your system. Please check "
     "that you have an NVIDIA GPU and installed a driver", ("cuda-driver-init-failed", "enroot-gpu-not-injected", True)),
    ("** (RuntimeError) DNN library initialization failed. Look at the errors above for more details.\n"
     "    (exla 0.6.0) lib/exla/executable.ex:56: EXLA.Executable.unwrap!/1",
     ("tensorflow-cudnn-init", "exla-preallocation", True)),
    ("Could not load library libcudnn_ops_infer.so.8. Error: /usr/lib/x86_64-linux-gnu/libcudnn_ops_infer.so.8: "
     "version `libcudnn_ops_infer.so.8' not found (required by /venv/lib/python3.10/site-packages/torch/lib/"
     "libcudnn_cnn_infer.so.8)", ("cudnn-version-mismatch", None, True)),
    ("    import causal_conv1d_cuda\nModuleNotFoundError: No module named 'causal_conv1d_cuda'",
     ("cuda-extension-not-built", None, False)),
    ("    out, x, *rest = selective_scan_cuda_oflex.fwd(u, delta, A, B, C, D, delta_bias, delta_softplus, 1)\n"
     "NameError: name 'selective_scan_cuda_oflex' is not defined", ("cuda-extension-not-built", None, False)),
])
def test_written_after_held_out_40(top_answer, log, expected):
    assert top_answer(log) == expected


def test_a_missing_module_is_an_extension_only_by_its_compiled_name(top_answer, run_explain):
    for plain in ("pandas", "torch._C"):  # torch._C: torch imported from its source tree, not an extension's build
        log = f"ModuleNotFoundError: No module named '{plain}'\n"
        assert not json.loads(run_explain(["--format", "json"], stdin=log).stdout)["matches"]
    assert top_answer("ModuleNotFoundError: No module named 'mmcv._ext'")[0] == "mmcv-ops-not-built"


def test_cupys_missing_cuda_path_alone_ranks_below_the_error_that_follows(top_answer):
    warning = "UserWarning: CUDA path could not be detected. Set CUDA_PATH environment variable if CuPy fails to load."
    assert top_answer(warning)[0] == "cupy-cuda-libraries"
    assert top_answer(warning + "\ncupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInsufficientDriver: "
                      "CUDA driver version is insufficient for CUDA runtime version")[0] == "cuda-driver-too-old"


def test_a_runtime_text_needs_its_own_line_or_a_label_to_be_read_bare(top_answer, run_explain):
    assert top_answer("an illegal instruction was encountered")[0] == "cuda-illegal-instruction"
    prose = "We saw that the provided PTX was compiled with an unsupported toolchain"
    assert not json.loads(run_explain(["--format", "json"], stdin=prose + "\n").stdout)["matches"]


def test_a_tensorflow_warning_that_ptxas_did_not_run_names_it_without_a_gpu_claim(top_answer):
    warning = ("W tensorflow/stream_executor/gpu/asm_compiler.cc:63] Running ptxas --version returned 256\n"
               "Relying on driver to perform ptx compilation.\nModify $PATH to customize ptxas location.")
    assert top_answer(warning) == ("xla-ptxas-not-found", None, False)
    out_of_memory = warning + "\ntensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor"
    assert top_answer(out_of_memory)[0] != "xla-ptxas-not-found"


def test_a_torch_release_older_than_the_gpu_is_read_from_its_version_alone(run_explain):
    log = "torch 0.4.1\nGPU: GeForce RTX 3090\nRuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n"
    data = json.loads(run_explain(["--format", "json"], stdin=log).stdout)
    assert data["top"] == "diag:kernels"
    newer = log.replace("0.4.1", "2.1.0")  # its builds for CUDA 11.8 and 12.1 know the RTX 3090
    assert json.loads(run_explain(["--format", "json"], stdin=newer).stdout)["top"] != "diag:kernels"
