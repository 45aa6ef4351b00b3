"""Families written from the message each library's source prints, after the third held-out split showed
them unanswered or answered by a neighbour: vLLM's KV-cache allocator, flash-attn's device check, ONNX
Runtime's provider list, nvcc's architecture and standard options, JAX's CPU fallback, CTranslate2's compute
types, THC's check macro, cuBLAS's ARCH_MISMATCH, cudnnCreate, Triton's loader, numba's driver binding and
torch's own import; then, after the fourth split, NCCL's topology files, cuFFT's missing forward
compatibility, the extension builders' toolkit checks, XLA's libdevice search, WSL1's kernel and jaxlib's
vendored TensorFlow paths; then, after the fifth, vLLM's context check, cublasCreate, MPS's allocator, training
loops' NaN line, THC's cuBLAS texts, nvidia-container-cli's requirement check, Paddle's loader, TensorRT's
libraries, XLA's ptxas search, nvidia-smi without its kernel module, xFormers' dispatcher and TensorFlow's
preallocation; then, after the sixth, DataLoader workers killed by a signal, TensorRT's engine check, ggml's
CUDA check, XLA's ptxas warning, MXNet's pooled allocator, TensorFlow's BFC allocator, bitsandbytes before
Windows support, cuDNN's fused kernels, a kernel launched on the current device, an uncaught c10::CUDAError,
NVML's mismatch behind the container runtime and tensorboardX's NaN warning; then, after the seventh, torch's
C++ symbols missing from an extension, apex without its extensions, CUDA_HOME and nvcc for builds, NVRTC's
architecture option, ATen's kernel asserts, ONNX Runtime's arena, ollama's driver check, driver files baked
into an image, a CUDA library of another major than the stated CUDA, a watchdog in the first collectives, and
CTranslate2's float16 on a pre-Volta GPU; then, after the eighth, torch's own libraries mixed from two installs,
ptxas rejecting bf16 below sm_80, Python.h for Triton's launcher, gloo's transport timeout, jaxlib's cuSolver
handle, TensorRT's unsupported SM, TensorRT's own libraries off the loader path, NGC containers' driver check,
CPU-only builds, cuda-compat on an unsupported GPU, ollama's AVX check, the toolkit's stub libcuda and
nvidia-smi's message retyped; then, after the ninth, torch.compile importing another Triton, DGL's and MXNet's
CPU builds, a worker gone in a container, THC's cuBLAS allocation text, bitsandbytes' WindowsPath bug,
Paddle's cuDNN loader, cuDNN 8's zlibwapi.dll, TensorFlow preallocating beside JAX, Kubernetes' device plugin
without NVML, Docker Desktop on WSL2, a CUDA runtime of another release before CUDA 11, and the NVIDIA driver
installer; then, after the tenth, extensions built without GPU support (detectron2's ops), Lightning's DDP
unused-parameters message, a retyped DataLoader line, the driver's own ptxas behind cuLinkAddData, FFmpeg's
NVENC API and libraries, OpenCV's CPU wheels and its DNN architecture check, nvcc's gpu-architecture
option, TensorFlow skipping a GPU below its minimum capability and its native-Windows CPU build,
PaddlePaddle's BadAlloc and MXNet's device id check; then, after the eleventh, CUDA_HOME set as a list, a
symbol wrapped over two lines, DGL's older wording, SIGILL on a CPU without AVX, a Triton module name pasted
with a space, apex's own wording, OpenCV's DNN fallback, forward compatibility refused, Paddle's cuDNN
header check, DKMS built with another gcc, the driver's ptxas behind numba's linker, TensorFlow listing no
GPU on Windows, JAX's plugin without its wheels' libraries, NVENC's preset version, OpenCL without a device,
DALI's libnvcuvid and RAPIDS' minimum capability; then, after the twelfth, DataLoader's bus-error sentence in any
case, torch.compile without Triton (on Windows too), TensorFlow's "possibly insufficient driver version", TensorRT's
minimum SM and its out-of-memory messages (the builder's workspace, ONNX Runtime's provider), MXNet's older
USE_CUDA wording, XLA's wrapped out-of-memory line, and CTranslate2's compute type on an old GPU or on the CPU
(which makes no GPU claim); then, after the thirteenth, an extension missing a library of torch (a torch 1.x build,
a CPU torch, an import before torch), torch.distributed's store on a port in use or timing out, the scheduler's
warning under GradScaler, TensorFlow's missing /dev/nvidia0, NVRTC asked for an architecture the toolkit dropped,
and no framework's advice for software with GPU code of its own (XGBoost, OpenMM, FFmpeg, CuPy, numba); then,
after the fourteenth, nvcc's host-compiler check, torchrun's workers ended by a signal, MPS operators without a
kernel, NVRTC's builtins library, glibc and libstdc++ older than a binary, loss scalers skipping a step, the
driver's Xid reports, a CUDA value printed without its name, and CatBoost's GPU allocator; then, after the
fifteenth, torch's DLLs on Windows, NVENC's session errors, Blender's Cycles devices, XLA's ptxas version
warning, OpenBLAS on ARM, CPU-only builds of LightGBM and XGBoost, Triton's libcuda search, CTranslate2's
shorter wording, CuPy's pool limit, and llama.cpp's server and RAPIDS' cuGraph named as their software; then,
after the sixteenth, xFormers built for another torch, DeepSpeed's launcher reporting a signal, cuDNN's loader
missing libcuda, ldd's "not found", NVRTC's invalid option, bitsandbytes' check macro and server wheels on a
Jetson, cuDNN's DLL missing under ONNX Runtime, numba's NVVM, NaN outputs of a float16 model, and torch's
allocator and ops naming torch; then, after the seventeenth, an operator without a kernel for the device
(torchvision's), MMCV without its ops, Lightning without GPUs, OpenMM's blow-up, TensorRT's FP16 warning, the NVML
stub, kernels without the tensor's dtype, CUDA's system not ready (the Fabric Manager), rocBLAS without the GPU's
kernels, Kubernetes nodes without GPUs, LightGBM's OpenCL, MXNet's storage without CUDA, torch's newer
capability warning, and OpenCV named as its software; then, after the eighteenth, torch's BLAS library missing
(Jetson wheels), a retyped SIGILL line, XLA's blocklisted ptxas, apex's toolkit check, LightGBM's GPU bin size,
LLVM out of host memory, nvcc without its host compiler, TensorFlow's driver-not-running line, RMM's pool
maximum, devices unavailable under WSL, and Darknet named as its software; then, after the nineteenth, torch
without NCCL, NCCL given CPU tensors, cuDNN without a valid algorithm, nvcc asked for a dropped architecture,
and DDP's unused parameters as no GPU claim; then, after the twentieth, DataLoader workers out of file
descriptors, a loss that became NaN or infinite, Darknet's out-of-memory line and mini-batch, CuPy's older
out-of-memory message, nvidia-smi's lost GPU as an Unknown Error, and TensorRT's magic-tag check. Each log is fed
through the real CLI."""

from __future__ import annotations

import json
import re

import pytest

TORCH_IMPORT = (
    "  File \"/usr/lib/python3/site-packages/torch/__init__.py\", line 79, in <module>\n"
    "    from torch._C import *\n"
    "ImportError: libcudart.so.9.0: cannot open shared object file: No such file or directory\n"
)
JAX_FALLBACK = "WARNING:jax._src.xla_bridge:No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n"
TRITON_LOAD = (
    "  File \"/usr/lib/python3/site-packages/triton/compiler/compiler.py\", line 285, in _init_handles\n"
    "    self.module, self.function, self.n_regs, self.n_spills = driver.utils.load_binary(\n"
    "RuntimeError: Triton Error [CUDA]: device kernel image is invalid\n"
)
CASES = {
    "vllm-kv-cache": (
        "  File \"/usr/lib/python3/site-packages/vllm/engine/llm_engine.py\", line 321, in _initialize_kv_caches\n"
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
        "initializing the engine.\n",
        "cuda-out-of-memory/vllm-kv-cache"),
    "flash-attention-gpu": (
        "  File \"/usr/lib/python3/site-packages/flash_attn/flash_attn_interface.py\", line 51, in _flash_attn_forward\n"
        "RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n",
        "flash-attention-unsupported-gpu"),
    "onnxruntime-cpu-build": (
        "/usr/lib/python3/site-packages/onnxruntime/capi/onnxruntime_inference_collection.py:69: UserWarning: "
        "Specified provider 'CUDAExecutionProvider' is not in available provider names.Available providers: "
        "'CPUExecutionProvider'\n",
        "onnxruntime-cuda-provider/cpu-only-package"),
    "nvcc-architecture": (
        "building 'fused_adam' extension\n"
        "/usr/local/cuda/bin/nvcc -I/usr/lib/python3/site-packages/torch/include -c csrc/adam/multi_tensor_adam.cu "
        "-gencode=arch=compute_90,code=sm_90 -std=c++17\n"
        "nvcc fatal   : Unsupported gpu architecture 'compute_90'\n"
        "error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1\n",
        "nvcc-older-than-build"),
    "nvcc-standard": (
        "/usr/local/cuda/bin/nvcc -c kernels.cu -o kernels.o -std=c++17\n"
        "nvcc fatal   : Value 'c++17' is not defined for option 'std'\n",
        "nvcc-older-than-build"),
    "jax-cpu-fallback": (JAX_FALLBACK, "jax-cpu-fallback/cpu-only-jaxlib"),
    "ctranslate2-float16": (
        "  File \"/usr/lib/python3/site-packages/faster_whisper/transcribe.py\", line 130, in __init__\n"
        "    self.model = ctranslate2.models.Whisper(\n"
        "ValueError: Requested float16 compute type, but the target device or backend do not support efficient "
        "float16 computation.\n",
        "ctranslate2-compute-type/model-on-cpu"),
    "thc-check": (
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingHostAllocator.cpp line=265 error=77 : "
        "an illegal memory access was encountered\n",
        "cuda-illegal-memory-access"),
    "cublas-arch-mismatch": (
        "terminate called after throwing an instance of 'std::runtime_error'\n"
        "  what():  CUDA runtime error: CUBLAS_STATUS_ARCH_MISMATCH /src/gemm.cu:171\n",
        "library-arch-mismatch"),
    "cudnn-create": (
        "[ONNXRuntimeError] : 1 : FAIL : CUDNN failure 4: CUDNN_STATUS_INTERNAL_ERROR ; GPU=0 ; hostname=box ; "
        "file=/onnxruntime_src/onnxruntime/core/providers/cuda/cuda_stream_handle.cc ; line=53 ; "
        "expr=cudnnCreate(&cudnn_handle_);\n",
        "cudnn-internal-error/handle-out-of-memory"),
    "triton-kernel-image": (TRITON_LOAD, "no-kernel-image/triton-stale-cache"),
    "triton-kernel-image-old-driver": (
        TRITON_LOAD + "\n| NVIDIA-SMI 470.182.03   Driver Version: 470.182.03   CUDA Version: 11.4     |\n",
        "no-kernel-image/triton-driver-too-old"),
    "numba-driver-path": (
        "numba.cuda.cudadrv.error.CudaDriverError: driver missing function: cuInit.\n",
        "libcuda-not-found/driver-path-not-libcuda"),
    "torch-import": (TORCH_IMPORT, "cuda-library-not-found/stale-torch-install"),
    "nccl-topology-file": (
        "host:1:2 [0] NCCL INFO NCCL_TOPO_FILE set by environment to /opt/vm/topo.xml\n"
        "host:1:2 [0] graph/search.cc:719 NCCL WARN XML Import Channel : dev 3 not found.\n"
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n",
        "nccl-system-error/topology-or-graph-file"),
    "cufft-internal": (
        ">>> torch.fft.fft(torch.randn(64, device='cuda'))\nRuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR\n",
        "cufft-error/cufft-older-than-gpu"),
    "cpp-extension-toolkit": (
        "RuntimeError:\nThe detected CUDA version (12.2) mismatches the version that was used to compile\n"
        "PyTorch (11.8). Please make sure to use the same CUDA versions.\n".replace("compile\nPyTorch", "compile PyTorch"),
        "extension-cuda-toolkit-mismatch"),
    "deepspeed-toolkit": (
        "deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed CUDA version "
        "11.8 does not match the version torch was compiled with 12.1, unable to compile cuda/cpp extensions "
        "without a matching cuda version.\n",
        "extension-cuda-toolkit-mismatch"),
    "xla-libdevice": (
        "W external/xla/xla/service/gpu/llvm_gpu_backend/gpu_backend_lib.cc:543] Can't find libdevice directory "
        "${CUDA_DIR}/nvvm/libdevice. This may result in compilation or runtime failures\n",
        "xla-cuda-toolkit-not-found"),
    "cudnn-contiguous": ("RuntimeError: cuDNN requires contiguous input tensor\n", "cudnn-not-supported/layout-or-size"),
    "vllm-max-model-len": (
        "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored "
        "in KV cache (7344). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
        "initializing the engine.\n",
        "cuda-out-of-memory/vllm-kv-cache"),
    "cublas-create": (
        "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`\n",
        "cublas-not-initialized/handle-out-of-memory"),
    "cublas-create-after-index-fault": (
        "the first batch raised IndexError: index out of range in self on the CPU; on the GPU:\n"
        "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`\n",
        "cublas-not-initialized/earlier-fault"),
    "cublas-create-after-device-assert": (
        "../aten/src/ATen/native/cuda/Indexing.cu:1146: indexSelectLargeIndex: block: [0,0,0], thread: [0,0,0] "
        "Assertion `srcIndex < srcSelectDimSize` failed.\n"
        "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`\n",
        "device-side-assert/index-out-of-range"),
    "mps-out-of-memory": (
        "RuntimeError: MPS backend out of memory (MPS allocated: 8.89 GB, other allocations: 172.98 MB, max allowed: "
        "9.07 GB). Tried to allocate 6.25 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable "
        "upper limit for memory allocations (may cause system failure).\n",
        "cuda-out-of-memory/mps-high-watermark"),
    "nan-loss-line": (
        "Epoch: [3]  [ 100/500]  loss: 0.4120 (0.4300)\nLoss is nan, stopping training\n",
        "autograd-anomaly-nan/numerics"),
    "nan-loss-line-fp16": (
        "python main_finetune.py --amp --batch_size 64\nLoss is nan, stopping training\n",
        "autograd-anomaly-nan/fp16-overflow"),
    "thc-cublas-old-toolkit": (
        "RuntimeError: cublas runtime error : the GPU program failed to execute at "
        "/opt/conda/conda-bld/pytorch_1556653183467/work/aten/src/THC/THCBlas.cu:450\n"
        "GPU: TITAN RTX, CUDA 9.0, pytorch 1.1.0\n",
        "cublas-execution-failed/toolkit-older-than-gpu"),
    "initialization-error-in-workers": (
        "`RuntimeError: CUDA error: initialization error` in `sample_neighbors()` when num_workers > 0\n",
        "cuda-initialization-error/fork"),
    "lowercase-oom": ("train fails with cuda out of memory at batch size 1\n", "cuda-out-of-memory/working-set"),
    "unknown-error-at-init": (
        "  File \"/usr/lib/python3/site-packages/torch/cuda/__init__.py\", line 172, in _lazy_init\n"
        "    torch._C._cuda_init()\n"
        "RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env "
        "variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero.\n",
        "cuda-unknown-error/driver-state-after-suspend"),
    "container-requirement": (
        "docker: Error response from daemon: OCI runtime create failed: container init caused: Running hook #0:: "
        "error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: requirement error: unsatisfied "
        "condition: cuda>=12.2, please update your driver to a newer version, or use an earlier cuda container: "
        "unknown.\n",
        "container-gpu-runtime/driver-older-than-image"),
    "paddle-loader": (
        "RuntimeError: (PreconditionNotMet) The third-party dynamic library (cudnn64_8.dll) that Paddle depends on "
        "is not configured correctly. (error code is 126)\n",
        "paddle-library-not-configured"),
    "tensorrt-libraries": (
        "EP Error /onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1193 [ONNXRuntimeError] : 1 : "
        "FAIL : Failed to load library libonnxruntime_providers_tensorrt.so with error: libnvinfer.so.8: cannot "
        "open shared object file: No such file or directory\n",
        "cuda-library-not-found/tensorrt-loader-path"),
    "xla-ptxas": (
        "W external/xla/xla/stream_executor/gpu/asm_compiler.cc:77] Couldn't get ptxas version string: Internal: "
        "Couldn't invoke ptxas --version\n",
        "xla-cuda-toolkit-not-found"),
    "nvidia-smi-no-module": (
        "$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that "
        "the latest NVIDIA driver is installed and running.\n",
        "driver-not-loaded/kernel-module-not-built"),
    "nvidia-smi-secure-boot": (
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
        "NVIDIA driver is installed and running.\n$ sudo modprobe nvidia\n"
        "modprobe: ERROR: could not insert 'nvidia': Required key not available\n",
        "driver-not-loaded/secure-boot"),
    "xformers-build": (
        "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
        "     query       : shape=(8, 3349, 16, 64) (torch.float16)\n"
        "`cutlassF-pt` is not supported because:\n    xFormers wasn't build with CUDA support\n",
        "xformers-no-operator"),
    "driver-too-old-and-not-available": (
        "RuntimeError: The NVIDIA driver on your system is too old (found version 10010). Please update your GPU "
        "driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx\n"
        "torch.cuda.is_available() returns False.\n",
        "cuda-driver-too-old"),
    "tensorflow-cudnn-handle": (
        "E tensorflow/stream_executor/cuda/cuda_dnn.cc:334] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n",
        "tensorflow-cudnn-init/tensorflow-preallocation"),
    "bitsandbytes-libcuda": (
        "CUDA SETUP: WARNING! libcuda.so not found! Do you have a CUDA driver installed? If you are on a cluster, "
        "make sure you are on a CUDA machine!\n",
        "libcuda-not-found"),
    "numba-libnvvm": (
        "  File \"/usr/lib/python3/site-packages/numba/cuda/cudadrv/libs.py\", line 64, in open_cudalib\n"
        "OSError: libnvvm.so: cannot open shared object file: No such file or directory\n",
        "numba-nvvm-not-found"),
    "dataloader-worker-killed": (
        "  File \"/usr/lib/python3/site-packages/torch/utils/data/_utils/signal_handling.py\", line 66, in handler\n"
        "    _error_if_any_worker_fails()\n"
        "RuntimeError: DataLoader worker (pid 4176) is killed by signal: Killed.\n",
        "dataloader-worker-killed/host-memory-oom-kill"),
    "dataloader-worker-segfault": (
        "ERROR: Unexpected segmentation fault encountered in worker.\n"
        "RuntimeError: DataLoader worker (pid 93) is killed by signal: Segmentation fault.\n",
        "dataloader-worker-killed/native-crash-in-worker"),
    "tensorrt-engine-version": (
        "[05/02/2024-10:00:00] [TRT] [E] 6: The engine plan file is not compatible with this version of TensorRT, "
        "expecting library version 8.6.1.6 got 8.5.3.1, please rebuild.\n"
        "[05/02/2024-10:00:00] [TRT] [E] 2: [engine.cpp::deserializeEngine::951] Error Code 2: Internal Error "
        "(Engine deserialization failed.)\n",
        "tensorrt-engine-incompatible/other-tensorrt-version"),
    "tensorrt-engine-serialization-tag": (
        "[TRT] [E] 1: [stdArchiveReader.cpp::StdArchiveReader::32] Error Code 1: Serialization (Serialization "
        "assertion magicTagRead == kMAGIC_TAG failed.Version tag does not match.)\n",
        "tensorrt-engine-incompatible/other-tensorrt-version"),
    "tensorrt-engine-gpu": (
        "[TRT] [E] 6: The engine plan file is generated on an incompatible device, expecting compute 8.6 got "
        "compute 7.5, please rebuild.\n",
        "tensorrt-engine-incompatible/other-gpu"),
    "ggml-cuda-check": (
        "ggml_init_cublas: found 1 CUDA devices:\n  Device 0: NVIDIA GeForce RTX 3060, compute capability 8.6\n"
        "CUDA error 222 at /build/llama.cpp/ggml-cuda.cu:6951: the provided PTX was compiled with an unsupported "
        "toolchain.\n",
        "cuda-ptx-jit/driver-jit"),
    "xla-ptxas-older-than-gpu": (
        "W external/xla/xla/stream_executor/gpu/asm_compiler.cc:231] Falling back to the CUDA driver for PTX "
        "compilation; ptxas does not support CC 9.0\n"
        "E external/xla/xla/stream_executor/cuda/cuda_driver.cc:860] failed to load PTX text as a module: "
        "CUDA_ERROR_INVALID_IMAGE: device kernel image is invalid\n"
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to load PTX text as a module\n",
        "cuda-ptx-jit/xla-ptxas-too-old"),
    "mxnet-pooled-allocator": (
        "mxnet.base.MXNetError: [10:00:00] src/storage/./pooled_storage_manager.h:161: cudaMalloc retry failed: "
        "out of memory\n",
        "cuda-out-of-memory/mxnet-memory-pool"),
    "tensorflow-bfc-allocator": (
        "W tensorflow/core/common_runtime/bfc_allocator.cc:441] Ran out of memory trying to allocate 1.50GiB "
        "(rounded to 1610612736)requested by op MatMul\n",
        "cuda-out-of-memory/working-set"),
    "bitsandbytes-windows": (
        "The following directories listed in your path were found to be non-existent: "
        "{WindowsPath('C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8/bin')}\n"
        "CUDA_SETUP: WARNING! libcudart.so not found in any environmental path. Searching in backup paths...\n",
        "bitsandbytes-cuda-setup/windows-before-0.43"),
    "bitsandbytes-no-runtime": (
        "CUDA_SETUP: WARNING! libcudart.so not found in any environmental path. Searching in backup paths...\n"
        "DEBUG: Possible options found for libcudart.so: set()\n",
        "bitsandbytes-cuda-setup"),
    "cudnn-fused-kernel": (
        "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a "
        "non-contiguous input.\n  File \"model.py\", line 40, in forward\n    y = fused_conv_bias_relu(x, w, b)\n",
        "cudnn-not-supported/fusion-cudnn-version"),
    "illegal-access-second-gpu": (
        "model = Net().to(\"cuda:1\")\n"
        "RuntimeError: CUDA error: an illegal memory access was encountered\n",
        "cuda-illegal-memory-access/current-device"),
    "uncaught-cuda-error-in-worker": (
        "terminate called after throwing an instance of 'c10::CUDAError' initialization error\n"
        "RuntimeError: DataLoader worker (pid(s) 1201) exited unexpectedly\n",
        "cuda-initialization-error/fork"),
    "nvml-behind-container-runtime": (
        "docker: Error response from daemon: failed to create task for container: OCI runtime create failed: "
        "runc create failed: unable to start container process: error during container init: error running hook #0: "
        "error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: nvml "
        "error: driver/library version mismatch: unknown.\n",
        "nvml-driver-mismatch"),
    "tensorboard-nan-under-amp": (
        "Training with torch.cuda.amp.autocast, epoch 12\nWARNING:tensorboardX.x2num:NaN or Inf found in input tensor.\n",
        "autograd-anomaly-nan/fp16-overflow"),
    "extension-abi": (
        "  File \"/usr/lib/python3/site-packages/torch_scatter/__init__.py\", line 16, in <module>\n"
        "    torch.ops.load_library(spec.origin)\n"
        "OSError: /usr/lib/python3/site-packages/torch_scatter/_scatter_cuda.so: undefined symbol: "
        "_ZNK3c1010TensorImpl36is_contiguous_nondefault_policy_implENS_12MemoryFormatE\n",
        "extension-abi-mismatch"),
    "apex-without-extensions": (
        "  File \"/usr/lib/python3/site-packages/apex/amp/_amp_state.py\", line 12, in <module>\n"
        "    import amp_C\nModuleNotFoundError: No module named 'amp_C'\n",
        "apex-extension-not-built"),
    "cuda-home-for-build": (
        "  File \"/usr/lib/python3/site-packages/torch/utils/cpp_extension.py\", line 2416, in _join_cuda_home\n"
        "    raise OSError('CUDA_HOME environment variable is not set. '\n"
        "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n",
        "nvcc-not-found"),
    "nvrtc-architecture": (
        "cupy.cuda.compiler.CompileException: nvrtc: error: invalid value for --gpu-architecture (-arch)\n",
        "nvrtc-older-than-gpu/toolkit-older-than-gpu"),
    "aten-index-assert": (
        "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [0,0,0], thread: [32,0,0] "
        "Assertion `index >= -sizes[i] && index < sizes[i] && \"index out of bounds\"` failed.\n",
        "device-side-assert/index-out-of-range"),
    "onnxruntime-arena": (
        "onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : "
        "Non-zero status code returned while running Conv node. Name:'Conv_12' Status Message: "
        "/onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::"
        "AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) "
        "Failed to allocate memory for requested buffer of size 2147483648\n",
        "cuda-out-of-memory/onnxruntime-arena"),
    "ollama-driver-check": (
        "time=2024-05-01T10:00:00.000Z level=INFO source=gpu.go:101 msg=\"Detecting GPUs\"\n"
        "time=2024-05-01T10:00:00.000Z level=WARN source=gpu.go:228 msg=\"unable to load cudart\" "
        "error=\"your nvidia driver is too old or missing.  If you have a CUDA GPU please upgrade to run ollama\"\n",
        "cuda-driver-too-old"),
    "driver-files-in-image": (
        "docker: Error response from daemon: failed to create task for container: OCI runtime create failed: "
        "error running hook #0: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: mount "
        "error: file creation failed: /var/lib/docker/overlay2/0f3c/merged/usr/lib/x86_64-linux-gnu/libcuda.so.1: "
        "file exists: unknown.\n",
        "container-gpu-runtime/driver-libs-in-image"),
    "cuda-major-of-the-library": (
        "$ nvcc --version\nCuda compilation tools, release 11.8, V11.8.89\nCUDA Version: 11.8\n"
        "Could not load library libcublasLt.so.12. Error: libcublasLt.so.12: cannot open shared object file: "
        "No such file or directory\n",
        "cuda-library-not-found/cuda-major-mismatch"),
    "watchdog-in-the-first-collectives": (
        "[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600094 "
        "milliseconds before timing out.\n",
        "nccl-timeout/long-step"),
    "ctranslate2-float16-pascal": (
        "Running on a GeForce GTX 1080 Ti\n"
        "ValueError: Requested float16 compute type, but the target device or backend do not support efficient "
        "float16 computation.\n",
        "ctranslate2-compute-type/gpu-without-fast-float16"),
    "bitsandbytes-cpu-library": (
        "AttributeError: /usr/lib/python3/site-packages/bitsandbytes/libbitsandbytes_cpu.so: undefined symbol: "
        "cquantize_blockwise_fp16_nf4\n",
        "bitsandbytes-cuda-setup"),
    "torch-import-mixed-installs": (
        "  File \"/home/me/.local/lib/python3.8/site-packages/torch/__init__.py\", line 197, in <module>\n"
        "    from torch._C import *  # noqa: F403\n"
        "ImportError: /home/me/.local/lib/python3.8/site-packages/torch/lib/libtorch_cpu.so: undefined symbol: "
        "_ZTIN3c1013intrusive_ptr_targetE\n",
        "extension-abi-mismatch/stale-torch-install"),
    "ptxas-bf16-below-ampere": (
        "ptxas /tmp/compile-ptx-src-1a2b3c, line 120; error   : Feature '.bf16' requires .target sm_80 or higher\n"
        "ptxas fatal   : Ptx assembly aborted due to errors\n",
        "bf16-unsupported"),
    "triton-launcher-python-headers": (
        "C:\\Users\\me\\AppData\\Local\\Temp\\tmpa1b2\\main.c:5: error: include file 'Python.h' not found\n"
        "Failed to compile. cc_cmd: ['D:\\ComfyUI_windows_portable\\python_embeded\\Lib\\site-packages\\triton\\"
        "runtime\\tcc\\tcc.exe', 'main.c']\n",
        "python-headers-missing/embedded-python"),
    "extension-build-python-headers": (
        "csrc/ops.cpp:1:10: fatal error: Python.h: No such file or directory\n    1 | #include <Python.h>\n"
        "compilation terminated.\nerror: command '/usr/bin/gcc' failed with exit code 1\n",
        "python-headers-missing"),
    "gloo-transport-timeout": (
        "RuntimeError: [/opt/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer\n"
        "[E] [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv "
        "operation to complete\n",
        "nccl-timeout/ranks-diverged"),
    "jaxlib-cusolver-handle": (
        "jax._src.source_info_util.JaxStackTraceBeforeTransformation: RuntimeError: jaxlib/gpu/solver_kernels.cc:45: "
        "operation gpusolverDnCreate(&handle) failed: cuSolver internal error\n",
        "cusolver-error/jax-pip-wheel-skew"),
    "tensorrt-unsupported-sm": (
        "[TRT] [F] Assertion failed: Unsupported SM: 0x900\n../rtSafe/cuda/caskUtils.cpp:111\nAborting...\n",
        "tensorrt-too-old-for-gpu"),
    "tensorrt-own-library-off-path": (
        "[TRT] [E] Load libnvinfer.so failed - libnvinfer_plugin.so.8: cannot open shared object file: No such file "
        "or directory\n",
        "cuda-library-not-found/tensorrt-loader-path"),
    "ngc-container-driver-check": (
        "== PyTorch ==\nNVIDIA Release 23.05 (build 60708168)\n"
        "ERROR: This container was built for NVIDIA Driver Release 530.30 or later, but\n"
        "       version 470.182.03 was detected and compatibility mode is UNAVAILABLE.\n",
        "cuda-driver-too-old"),
    "ctranslate2-cpu-only-build": (
        "  File \"/usr/lib/python3/site-packages/faster_whisper/transcribe.py\", line 145, in __init__\n"
        "    self.model = ctranslate2.models.Whisper(\n"
        "ValueError: This CTranslate2 package was not compiled with CUDA support\n",
        "library-cpu-only-build/ctranslate2-platform"),
    "forward-compat-on-geforce": (
        "export LD_LIBRARY_PATH=/usr/local/cuda-12.4/compat:$LD_LIBRARY_PATH\n"
        "RuntimeError: CUDA error: system has unsupported display driver / cuda driver combination\n",
        "cuda-driver-setup/forward-compat-on-unsupported-gpu"),
    "ggml-init-message": (
        "ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected\n",
        "cuda-driver-init-failed/visible-devices"),
    "ollama-avx-check": (
        "time=2024-06-01T10:00:00.000Z level=WARN source=gpu.go:225 msg=\"CPU does not have minimum vector extensions, "
        "GPU inference disabled\" required=avx detected=\"no vector extensions\"\n",
        "cpu-without-avx"),
    "toolkit-stub-libcuda": (
        "numba.cuda.cudadrv.driver.CudaAPIError: [34] Call to cuInit results in CUDA_ERROR_STUB_LIBRARY\n"
        "LD_LIBRARY_PATH=/usr/local/cuda-12.1/lib64/stubs:/usr/local/cuda-12.1/lib64\n"
        "AttributeError: /usr/local/cuda-12.1/lib64/stubs/libcuda.so: undefined symbol: cuInit\n",
        "libcuda-not-found/stub-library"),
    "nvidia-smi-retyped": (
        "NVIDIA-SMI has failed because it couldn’t communicate with the NVIDIA driver. Make sure that the latest "
        "NVIDIA driver is installed and running.\n",
        "driver-not-loaded/kernel-module-not-built"),
    "inductor-imports-another-triton": (
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "ImportError: cannot import name 'AttrsDescriptor' from 'triton.compiler.compiler' "
        "(/usr/lib/python3/site-packages/triton/compiler/compiler.py)\n",
        "triton-version-mismatch"),
    "dgl-cpu-package": (
        "dgl._ffi.base.DGLError: [10:00:00] /opt/dgl/src/runtime/c_runtime_api.cc:82: Check failed: allow_missing: "
        "Device API cuda is not enabled. Please install the cuda version of dgl.\n",
        "library-cpu-only-build/dgl-cpu-package"),
    "mxnet-cpu-package": (
        "[10:00:00] src/imperative/./imperative_utils.h:92: GPU support is disabled. Compile MXNet with USE_CUDA=1 to "
        "enable GPU support.\nterminate called after throwing an instance of 'dmlc::Error'\n",
        "library-cpu-only-build/mxnet-cpu-package"),
    "worker-gone-in-a-container": (
        "$ docker run --gpus all -it trainer:latest python train.py\n"
        "RuntimeError: DataLoader worker (pid(s) 118) exited unexpectedly\n",
        "dataloader-worker-killed/container-shm"),
    "thc-cublas-allocation": (
        "RuntimeError: cublas runtime error : resource allocation failed at "
        "/opt/conda/conda-bld/pytorch_1544199946412/work/aten/src/THC/THCGeneral.cpp:250\n",
        "cuda-out-of-memory/working-set"),
    "bitsandbytes-windows-path-bug": (
        "  File \"C:\\kohya\\venv\\lib\\site-packages\\bitsandbytes\\cuda_setup\\main.py\", line 111, in "
        "extract_candidate_paths\nTypeError: argument of type 'WindowsPath' is not iterable\n",
        "bitsandbytes-cuda-setup/windows-before-0.43"),
    "paddle-cudnn-loader": (
        "Error: Cannot load cudnn shared library. Cannot invoke method cudnnGetVersion at "
        "(/paddle/paddle/fluid/platform/dynload/cudnn.cc:63)\n",
        "cudnn-library-not-found/paddle"),
    "cudnn8-zlibwapi": (
        "Could not locate zlibwapi.dll. Please make sure it is in your library path!\n",
        "cudnn-library-not-found/zlibwapi-missing"),
    "tensorflow-beside-jax": (
        "import tensorflow_datasets as tfds\nimport jax\n"
        "RuntimeError: UNKNOWN: Failed to determine best cudnn convolution algorithm: INTERNAL: All algorithms tried "
        "for %cudnn-conv failed. DNN library is not found.\n",
        "cudnn-library-not-found/tensorflow-preallocation"),
    "kubernetes-device-plugin-nvml": (
        "kubectl logs -n kube-system nvidia-device-plugin-daemonset-x2v9k\nLoading NVML\n"
        "Failed to initialize NVML: could not load NVML library.\n",
        "container-gpu-runtime/kubernetes-default-runtime"),
    "docker-desktop-wsl2": (
        "Running Docker Desktop with the WSL2 backend on Windows 10\n"
        "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared "
        "object file: no such file or directory: unknown.\n",
        "container-gpu-runtime/wsl2-gpu-support"),
    "cudart-minor-before-cuda-11": (
        "I have CUDA 9.1 installed\nOSError: libcudart.so.9.0: cannot open shared object file: No such file or directory\n",
        "cuda-library-not-found/cuda-major-mismatch"),
    "windows-dll-of-the-stated-cuda": (
        "CUDA 9.2 is installed\nW tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic "
        "library 'cudart64_92.dll'; dlerror: cudart64_92.dll not found\n",
        "cuda-library-not-found/tensorflow-cpu-fallback"),
    "windows-dll-of-another-cuda": (
        "CUDA 10.0 is installed\nW tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic "
        "library 'cudart64_92.dll'; dlerror: cudart64_92.dll not found\n",
        "cuda-library-not-found/cuda-major-mismatch"),
    "driver-installer-nouveau": (
        "ERROR: The Nouveau kernel driver is currently in use by your system.  This driver is incompatible with the "
        "NVIDIA driver, and must be disabled before proceeding.\n",
        "nvidia-driver-install-failed/nouveau"),
    "ops-built-without-gpu": (
        "RuntimeError: Not compiled with GPU support (ROIAlign_forward at detectron2/layers/csrc/ROIAlign/ROIAlign.h:71)\n",
        "extension-built-without-gpu/gpu-not-visible-at-build"),
    "lightning-ddp-unused-parameters": (
        "RuntimeError: It looks like your LightningModule has parameters that were not used in producing the loss "
        "returned by training_step. If this is intentional, you must enable the detection of unused parameters in "
        "DDP, either by setting the string value `strategy='ddp_find_unused_parameters_true'`\n",
        "ddp-unused-parameters"),
    "driver-jit-behind-culinkadddata": (
        "cuLinkAddData(): the provided PTX was compiled with an unsupported toolchain.\n"
        "ptxas application ptx input, line 9; fatal   : Unsupported .version 7.8; current version is '7.4'\n",
        "cuda-ptx-jit/driver-jit"),
    "ffmpeg-nvenc-api": (
        "[h264_nvenc @ 0x55d0c1a2b3c0] Driver does not support the required nvenc API version. Required: 12.1 Found: 11.1\n"
        "[h264_nvenc @ 0x55d0c1a2b3c0] The minimum required Nvidia driver for nvenc is 530.41.03 or newer\n",
        "cuda-driver-too-old"),
    "ffmpeg-nvenc-library": (
        "[h264_nvenc @ 0x5601] Cannot load libnvidia-encode.so.1\n"
        "[h264_nvenc @ 0x5601] The minimum required Nvidia driver for nvenc is (unknown) or newer\n",
        "video-codec-library-not-found/driver-capabilities"),
    "opencv-pypi-wheel": (
        "cv2.error: OpenCV(4.8.0) /io/opencv/modules/core/include/opencv2/core/private.cuda.hpp:106: error: "
        "(-216:No CUDA support) The library is compiled without CUDA support in function 'throw_no_cuda'\n",
        "library-cpu-only-build/opencv-pypi"),
    "opencv-dnn-architectures": (
        "cv2.error: OpenCV(4.5.5) /opencv/modules/dnn/src/dnn.cpp:2413: error: (-216:No CUDA support) OpenCV was not "
        "built to work with the selected device. Please check CUDA_ARCH_PTX or CUDA_ARCH_BIN in your build "
        "configuration. in function 'initCUDABackend'\n",
        "no-kernel-image"),
    "nvcc-gpu-architecture-option": (
        "nvcc fatal   : Value 'sm_89' is not defined for option 'gpu-architecture'\n",
        "nvcc-older-than-build"),
    "tensorflow-minimum-capability": (
        "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1700] Ignoring visible gpu device (device: 0, name: "
        "GeForce GTX 760, pci bus id: 0000:01:00.0, compute capability: 3.0) with Cuda compute capability 3.0. The "
        "minimum required Cuda capability is 3.5.\n",
        "gpu-below-minimum-capability"),
    "tensorflow-native-windows": (
        "Windows 11, TensorFlow 2.12\n>>> tf.test.is_built_with_cuda()\nFalse\n",
        "library-cpu-only-build/tensorflow-native-windows"),
    "paddle-bad-alloc": (
        "paddle::memory::allocation::BadAlloc\nOut of memory error on GPU 0. Cannot allocate 2.500000GB memory on GPU 0, "
        "available memory is only 512.000000MB.\n",
        "cuda-out-of-memory/working-set"),
    "mxnet-device-id": (
        "mxnet.base.MXNetError: [10:00:00] src/engine/threaded_engine.cc:331: Check failed: exec_ctx.dev_id < "
        "device_count_ (2 vs. 2) Invalid GPU Id: 2, Valid device id should be less than device_count: 2\n",
        "invalid-device-ordinal"),
    "cuda-home-as-a-list": (
        "unable to execute '/usr/local/cuda-11.8:/bin/nvcc': No such file or directory\n"
        "error: command '/usr/local/cuda-11.8:/bin/nvcc' failed with exit status 1\n",
        "nvcc-not-found/cuda-home-list"),
    "symbol-wrapped": (
        "ImportError: xformers/_C.so: undefined\n symbol: _ZN3c104cuda20CUDACachingAllocator9allocatorE\n",
        "extension-abi-mismatch"),
    "cpu-without-avx-sigill": (
        "$ python -c 'import torch; torch.rand(3)'\nIllegal instruction (core dumped)\n",
        "cpu-without-avx"),
    "opencv-dnn-cpu-fallback": (
        "[ WARN:0@1.2] global net_impl.cpp:174 cv::dnn::dnn4_v20231225::Net::Impl::setUpNet DNN module was not built "
        "with CUDA backend; switching to CPU\n",
        "library-cpu-only-build/opencv-pypi"),
    "forward-compat-refused": (
        "ggml_cuda_init: failed to initialize CUDA: forward compatibility was attempted on non supported HW\n",
        "cuda-driver-setup/forward-compat-on-unsupported-gpu"),
    "paddle-cudnn-header": (
        "Check failed: (cudnn_cuh_major < 4 && cudnn_dso_major < 4) || (cudnn_cuh_major == cudnn_dso_major) [cudnn "
        "init] libcudnn v8 with header v7 unmatched!\n",
        "cudnn-version-mismatch"),
    "dkms-other-gcc": (
        "DKMS make.log for nvidia-550.54.14 for kernel 6.5.0-14-generic (x86_64)\n"
        "warning: the compiler differs from the one used to build the kernel\n"
        "gcc: error: unrecognized command-line option '-ftrivial-auto-var-init=zero'\n",
        "nvidia-driver-install-failed/compiler-mismatch"),
    "numba-linker-driver-jit": (
        "numba.cuda.cudadrv.driver.LinkerError: [222] Call to cuLinkAddData results in CUDA_ERROR_UNSUPPORTED_PTX_VERSION\n"
        "ptxas application ptx input, line 9; fatal   : Unsupported .version 8.3; current version is '8.1'\n",
        "cuda-ptx-jit/driver-jit"),
    "tensorflow-lists-no-gpu-on-windows": (
        "Windows 10, tensorflow 2.13\n>>> tf.config.list_physical_devices('GPU')\n[]\n",
        "library-cpu-only-build/tensorflow-native-windows"),
    "jax-plugin-library-not-found": (
        "ERROR:jax._src.xla_bridge:Jax plugin configuration error: Exception when calling "
        "jax_plugins.xla_cuda12.initialize()\nRuntimeError: jaxlib/cuda/versions_helpers.cc:45: operation "
        "cudnnGetVersion() failed: The cuDNN library was not found.\n",
        "jax-cuda-backend/ld-library-path"),
    "nvenc-preset-version": (
        "[hevc_nvenc @ 0x600002f4c000] Cannot get the preset configuration: invalid version (15)\n",
        "cuda-driver-too-old"),
    "opencl-no-device": (
        "hashcat (v6.2.6) starting\nclGetDeviceIDs(): CL_DEVICE_NOT_FOUND\n",
        "opencl-no-device"),
    "dali-nvcuvid": (
        "Assert on \"lib_handle_\" failed: Failed to load libnvcuvid.so, needed by the VideoReader operator.\n",
        "video-codec-library-not-found/driver-capabilities"),
    "rapids-minimum-capability": (
        "RuntimeError: This cuDF installation is missing the necessary PTX files that are <=60.\n",
        "gpu-below-minimum-capability"),
    # written after the twelfth split, from the libraries' own messages
    "dataloader-bus-error-lower-case": (
        "RuntimeError: DataLoader worker exited unexpectedly: unexpected bus error encountered in worker. This might "
        "be caused by insufficient shared memory (shm).\n",
        "dataloader-shm-exhausted"),
    "triton-not-installed-linux": (
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nRuntimeError: Cannot find a working "
        "triton installation. Either the package is not installed or it is too old. More information on installing "
        "Triton can be found at: https://github.com/triton-lang/triton\n",
        "triton-not-installed/not-installed"),
    "triton-not-installed-windows": (
        "  File \"C:\\Users\\me\\venv\\Lib\\site-packages\\torch\\_inductor\\scheduler.py\", line 2750, in "
        "create_backend\nRuntimeError: Cannot find a working triton installation. More information on installing "
        "Triton can be found at https://github.com/openai/triton\n",
        "triton-not-installed/windows"),
    "tensorflow-insufficient-driver": (
        "E tensorflow/stream_executor/cuda/cuda_dnn.cc:385] could not create cudnn handle: "
        "CUDNN_STATUS_NOT_INITIALIZED\nE tensorflow/stream_executor/cuda/cuda_dnn.cc:393] possibly insufficient "
        "driver version: 390.87.0\n",
        "cuda-driver-too-old"),
    "tensorrt-minimum-capability": (
        "[TRT] [E] IBuilder::buildSerializedNetwork: Error Code 9: API Usage Error (Target GPU SM 61 is not "
        "supported by this TensorRT release.)\n",
        "gpu-below-minimum-capability"),
    "mxnet-use-cuda": (
        "mxnet.base.MXNetError: [12:00:00] src/storage/storage.cc:143: Compile with USE_CUDA=1 to enable GPU usage\n",
        "library-cpu-only-build/mxnet-cpu-package"),
    "xla-resource-exhausted-wrapped": (
        "E external/org_tensorflow/tensorflow/compiler/xla/python/local_client.cc:672] Execution of replica 0 failed: "
        "Resource exhausted: Out\nof memory while trying to allocate 2147483648 bytes.\njax version 0.1.39\n",
        "cuda-out-of-memory/jax-preallocation"),
    "tensorrt-builder-out-of-memory": (
        "[TRT] [E] 2: [virtualMemoryBuffer.cpp::resizePhysical::145] Error Code 2: OutOfMemory (no further "
        "information)\n[TRT] [W] Requested amount of GPU memory (8589934592 bytes) could not be allocated. There may "
        "not be enough free memory for allocation to succeed.\n",
        "tensorrt-out-of-memory/workspace-size"),
    "onnxruntime-tensorrt-workspace": (
        "[E:onnxruntime:Default, tensorrt_execution_provider.h:58 log] [TRT] ../rtSafe/safeRuntime.cpp (25) - Cuda "
        "Error in allocate: 2 (out of memory)\n",
        "tensorrt-out-of-memory/provider-workspace-size"),
    "ctranslate2-float16-on-old-gpu": (
        "    model = WhisperModel(\"large-v2\", device=\"cuda\", compute_type=\"float16\")\nValueError: Requested "
        "float16 compute type, but the target device or backend do not support efficient float16 computation.\n",
        "ctranslate2-compute-type/gpu-without-fast-float16"),
    "extension-built-for-torch-1": (
        "    from mypkg import _C\nImportError: libtorch_cuda_cpp.so: cannot open shared object file: No such file or "
        "directory\n",
        "extension-torch-library-not-found/built-for-torch-1"),
    "extension-before-torch": (
        "    import my_ops_cuda\nImportError: libc10.so: cannot open shared object file: No such file or directory\n",
        "extension-torch-library-not-found/imported-before-torch"),
    "extension-on-cpu-torch": (
        "ImportError: libc10_cuda.so: cannot open shared object file: No such file or directory\n",
        "extension-torch-library-not-found/cpu-torch-for-cuda-extension"),
    "store-port-in-use": (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
        "The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).\n",
        "distributed-port-in-use"),
    "store-timeout": (
        "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 3/4 clients joined.\n",
        "distributed-store-timeout"),
    "scheduler-before-optimizer": (
        "UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, "
        "you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.\n",
        "scheduler-step-before-optimizer-step/gradscaler-skipped-step"),
    "tensorflow-no-device-node": (
        "E tensorflow/stream_executor/cuda/cuda_driver.cc:313] failed call to cuInit: UNKNOWN ERROR (-1)\n"
        "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:163] no NVIDIA GPU device is present: /dev/nvidia0 "
        "does not exist\n",
        "cuda-driver-init-failed/no-driver"),
    "tensorflow-no-device-node-in-container": (
        "$ docker run -it tensorflow/tensorflow:latest-gpu python -c 'import tensorflow as tf'\n"
        "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:163] no NVIDIA GPU device is present: /dev/nvidia0 "
        "does not exist\n",
        "cuda-driver-init-failed/no-gpu-given"),
    "nvrtc-dropped-architecture": (
        "NVRTC compilation error: nvrtc: error: invalid value for --gpu-architecture (-arch)\n"
        "Options: -I/usr/lib/python3/site-packages/cupy/core/include -ftz=true -arch=compute_30\n",
        "nvrtc-older-than-gpu/gpu-architecture-dropped"),
    "nvrtc-new-gpu": (
        "NVRTC compilation error: nvrtc: error: invalid value for --gpu-architecture (-arch)\n"
        "Options: -ftz=true -arch=compute_89\n",
        "nvrtc-older-than-gpu/toolkit-older-than-gpu"),
    "nvcc-clang-too-new": (
        "/usr/local/cuda/include/crt/host_config.h:151:2: error: -- unsupported clang version! clang version must be "
        "less than 16 and greater than 3.2 . The nvcc flag '-allow-unsupported-compiler' can be used to override "
        "this version check\n",
        "nvcc-unsupported-host-compiler"),
    "worker-sigkill-under-slurm": (
        "srun: error: gpu-node-12: task 0: Killed\n"
        "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -9) local_rank: 0 (pid: 912) of "
        "binary: /usr/bin/python3\n",
        "distributed-worker-signal/scheduler-limit"),
    "worker-sigbus": (
        "  exitcode  : -7 (pid: 3306)\n  error_file: <N/A>\n  traceback : Signal 7 (SIGBUS) received by PID 3306\n",
        "distributed-worker-signal/shared-memory-bus-error"),
    "worker-sigsegv": (
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -11) local_rank: 1 (pid: 77) of "
        "binary: /usr/bin/python\n",
        "distributed-worker-signal/native-crash"),
    "nvrtc-builtins-in-libtorch": (
        "terminate called after throwing an instance of 'std::runtime_error'\n"
        "  what():  nvrtc: error: failed to open libnvrtc-builtins.so.11.7.\n"
        "  Make sure that libnvrtc-builtins.so.11.7 is installed correctly.\n"
        "$ ls /opt/libtorch/lib | grep nvrtc\nlibnvrtc-builtins-0d0bc4e1.so.11.7\n",
        "nvrtc-builtins-not-found/libtorch-hashed-name"),
    "libstdcxx-too-old": (
        "ImportError: /home/u/miniconda3/envs/py/lib/libstdc++.so.6: version `GLIBCXX_3.4.30' not found "
        "(required by /home/u/miniconda3/envs/py/lib/python3.10/site-packages/torchaudio/lib/libtorchaudio.so)\n",
        "system-library-too-old/libstdcxx-older-than-binary"),
    "deepspeed-overflow": (
        "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768\n",
        "amp-loss-scale-overflow/expected-while-scaling"),
    "fairseq-minimum-scale": (
        "FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding. Try lowering the "
        "learning rate, using gradient clipping or increasing the batch size.\n",
        "amp-loss-scale-overflow/scale-at-minimum"),
    "xid-ecc": (
        "[1022.5] NVRM: Xid (PCI:0000:b1:00): 48, pid=2211, name=python, An uncorrectable double bit error (DBE) has "
        "been detected on GPU in the framebuffer at partition 3, subpartition 0.\n",
        "gpu-xid-error/memory-ecc-error"),
    "xid-program-fault": (
        "[88.1] NVRM: Xid (PCI:0000:01:00): 31, pid=4410, name=python3, Ch 00000008, intr 00000000. MMU Fault: ENGINE "
        "GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f32_1a000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ\n",
        "gpu-xid-error/program-fault"),
    "nvidia-smi-gpu-lost": (
        "$ nvidia-smi\nUnable to determine the device handle for GPU0000:3B:00.0: GPU is lost.  Reboot the system "
        "to recover this GPU\n",
        "gpu-xid-error/gpu-fallen-off-bus"),
    "cuda-value-only-watchdog": (
        "render took too long on the big image\nCUDA error = 999 at main.cu:196 'cudaDeviceSynchronize()'\n"
        "and the screen went black for a second\n",
        "cuda-unknown-error/display-watchdog"),
    "cuda-value-only-out-of-memory": (
        "CUDA error = 2 at kernel.cu:88 'cudaMalloc(&fb, fb_size)'\n",
        "cuda-out-of-memory/working-set"),
    "catboost-gpu-out-of-memory": (
        "_catboost.CatBoostError: catboost/cuda/cuda_lib/memory_pool/stack_like_memory_pool.h:314: "
        "NCudaLib::TOutOfMemoryError: Out of memory. Requested 2147.0; Free 1211.3\n",
        "cuda-out-of-memory/dataset-in-gpu-memory"),
    "torch-dll-1114": (
        "OSError: [WinError 1114] A dynamic link library (DLL) initialization routine failed. Error loading "
        "\"D:\\envs\\sd\\Lib\\site-packages\\torch\\lib\\fbgemm.dll\" or one of its dependencies.\n",
        "torch-windows-dll-load"),
    "nvenc-session-limit": (
        "[hevc_nvenc @ 0x5581f0e2c740] OpenEncodeSessionEx failed: out of memory (10): (no details)\n",
        "nvenc-no-encoder/session-limit"),
    "blender-in-colab": (
        "/content/blender-4.0.2-linux-x64\nBlender 4.0.2\nError: Found no Cycles device of the specified type\n",
        "blender-no-cycles-device/notebook-without-gpu"),
    "illegal-instruction-on-jetson": (
        "nvidia@jetson-orin:~$ uname -m\naarch64\nnvidia@jetson-orin:~$ python3 -c 'import numpy'\n"
        "Illegal instruction (core dumped)\n",
        "cpu-without-avx/arm-openblas-core-detection"),
    "lightgbm-cpu-build": (
        "lightgbm.basic.LightGBMError: GPU Tree Learner was not enabled in this build.\n"
        "Please recompile with CMake option -DUSE_GPU=1\n",
        "library-cpu-only-build"),
    "xgboost-cpu-build": (
        "xgboost.core.XGBoostError: [10:02:11] ../src/gbm/gbtree.cc:554: Check failed: common::AllVisibleGPUs() "
        ">= 1: XGBoost version not compiled with GPU support.\n",
        "library-cpu-only-build"),
    "triton-libcuda-search": (
        "  File \"/usr/lib/python3/site-packages/triton/backends/nvidia/driver.py\", line 23, in libcuda_dirs\n"
        "    assert any(os.path.exists(os.path.join(path, 'libcuda.so.1')) for path in dirs), msg\n"
        "AssertionError: libcuda.so cannot found!\n",
        "libcuda-not-found"),
    "ctranslate2-short-wording": (
        "Nvidia Driver 535.104\nCUDA 11.8\nRuntimeError: Library libcublas.so.12 is not found\n",
        "cuda-library-not-found/cuda-major-mismatch"),
    "cupy-pool-limit": (
        "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: "
        "268,435,456 bytes, limit set to: 1,073,741,824 bytes).\n",
        "cuda-out-of-memory/memory-pool-limit"),
    "xformers-on-cpu-torch": (
        "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
        "    PyTorch 2.3.1+cu121 with CUDA 1201 (you have 2.3.1+cpu)\n",
        "xformers-built-for-other-torch/cpu-torch-installed"),
    "deepspeed-launcher-sigbus": (
        "[2024-02-01 10:00:01,001] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', "
        "'--local_rank=0'] exits with return code = -7\n",
        "distributed-worker-signal/shared-memory-bus-error"),
    "cudnn-sublibrary-without-libcuda": (
        "Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file: No such "
        "file or directory\nPlease make sure libcudnn_cnn_infer.so.8 is in your library path!\n",
        "libcuda-not-found"),
    "ldd-missing-cuda-library": (
        "$ ldd site-packages/somelib/libops.so | grep found\n\tlibcudart.so.11.0 => not found\n"
        "\tlibcublas.so.11 => not found\n",
        "cuda-library-not-found"),
    "cupy-nvrtc-invalid-option": (
        "  File \"cupy_backends/cuda/libs/nvrtc.pyx\", line 147, in cupy_backends.cuda.libs.nvrtc.check_status\n"
        "cupy_backends.cuda.libs.nvrtc.NVRTCError: NVRTC_ERROR_INVALID_OPTION (5)\n",
        "nvrtc-older-than-gpu/toolkit-older-than-gpu"),
    "bitsandbytes-server-wheel-on-jetson": (
        "- Device: NVIDIA Jetson AGX Orin\n- OS: JetPack 6.0 (L4T 36.3)\n"
        "Error named symbol not found at line 117 in file /src/csrc/ops.cu\n",
        "cuda-invalid-argument/jetson-server-wheel"),
    "onnxruntime-cudnn-dll-missing": (
        "[E:onnxruntime:Default, provider_bridge_ort.cc:1862 onnxruntime::TryGetProviderInfo_CUDA] Error loading "
        "\"C:\\app\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll\" which depends on \"cudnn64_9.dll\" which is "
        "missing. (Error 126: \"The specified module could not be found.\")\n",
        "onnxruntime-cuda-provider/cudnn-dll-missing"),
    "system-not-ready-on-nvswitch": (
        "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
        "functions before calling NumCudaDevices() that might have already set an error? Error 802: system not yet "
        "initialized (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)\n",
        "cuda-driver-setup/fabric-manager-not-running"),
    "rocblas-without-the-gpus-kernels": (
        "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such file or directory for "
        "GPU arch : gfx1031\n",
        "rocm-no-kernel"),
    "kubernetes-node-without-gpus": (
        "$ kubectl describe node gpu-node-1 | grep -i gpu\n  nvidia.com/gpu:     0\n  nvidia.com/gpu:     0\n",
        "container-gpu-runtime/kubernetes-default-runtime"),
    "lightgbm-opencl-no-device": (
        "[LightGBM] [Info] This is the GPU trainer!!\nMet Exceptions:\nNo OpenCL device found\n",
        "opencl-no-device"),
    "mxnet-storage-without-cuda": (
        "mxnet.base.MXNetError: [09:12:40] src/storage/storage.cc:43: Please compile with CUDA enabled\n",
        "library-cpu-only-build/mxnet-cpu-package"),
    "torch-capability-list-wording": (
        "UserWarning: Found GPU0 NVIDIA GeForce GTX 1080 which is of compute capability (CC) 6.1. The following "
        "list shows the CCs this version of PyTorch was built for and the hardware CCs it supports:\n"
        "- 7.5 which supports hardware CC >=7.5,<8.0\n",
        "no-kernel-image"),
    "lightning-on-cpu-torch": (
        "pytorch_lightning.utilities.exceptions.MisconfigurationException:\n    You requested GPUs: [0]\n"
        "    But your machine only has: []\n# Name    Version    Build  Channel\npytorch   2.1.0   py3.10_cpu_0  pytorch\n"
        "cpuonly   2.0   0   pytorch\n",
        "lightning-no-gpus/cpu-build-of-torch"),
    "torch-lapack-symbol-on-jetson": (
        "ImportError: /home/nvidia/.local/lib/python3.6/site-packages/torch/lib/libtorch_cpu.so: undefined symbol: "
        "sgesdd_\n",
        "torch-blas-library-missing"),
    "retyped-sigill-on-jetson": (
        "Running on a Jetson Xavier NX:\n$ python3 export.py\nInvalid instruction (Core dumped)\n",
        "cpu-without-avx/arm-openblas-core-detection"),
    "xla-blocklisted-ptxas": (
        "F external/xla/xla/service/gpu/nvptx_compiler.cc:619] ptxas returned an error during compilation of ptx to "
        "sass: 'INTERNAL: ptxas 12.3.103 has a bug that we think can affect XLA. Please use a different version.'\n",
        "xla-ptxas-version-warning"),
    "apex-toolkit-check": (
        "RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the version used "
        "to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 11.8.\n",
        "extension-cuda-toolkit-mismatch"),
    "tensorflow-kernel-driver-not-running": (
        "E tensorflow/stream_executor/cuda/cuda_driver.cc:351] failed call to cuInit: CUDA_ERROR_UNKNOWN\n"
        "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:150] kernel driver does not appear to be running on "
        "this host (node7): /proc/driver/nvidia/version does not exist\n",
        "driver-not-loaded/kernel-module-not-built"),
    "rmm-pool-maximum": (
        "MemoryError: std::bad_alloc: RMM failure at:/rmm/include/rmm/mr/device/pool_memory_resource.hpp:188: "
        "Maximum pool size exceeded\n",
        "cuda-out-of-memory/memory-pool-limit"),
    "device-busy-under-wsl": (
        "$ uname -r\n5.10.16.3-microsoft-standard-WSL2\nRuntimeError: CUDA runtime implicit initialization on GPU:0 "
        "failed. Status: all CUDA-capable devices are busy or unavailable\n",
        "cuda-device-busy/wsl-gpu-support"),
    "nvcc-dropped-architecture": (
        "[ 56%] Building CUDA object ggml/src/ggml-cuda/CMakeFiles/ggml-cuda.dir/acc.cu.o\n"
        "nvcc fatal   : Unsupported gpu architecture 'compute_37'\n",
        "nvcc-older-than-build/gpu-architecture-dropped"),
    "nvcc-new-architecture": (
        "nvcc fatal   : Unsupported gpu architecture 'compute_89'\nerror: command '/usr/local/cuda-11.3/bin/nvcc' "
        "failed with exit code 1\n",
        "nvcc-older-than-build"),
    "dataloader-ancdata": (
        "  File \"/usr/lib/python3.8/multiprocessing/reduction.py\", line 164, in recvfds\n"
        "    raise RuntimeError('received %d items of ancdata' %\nRuntimeError: received 0 items of ancdata\n",
        "dataloader-too-many-open-files"),
    "dataloader-too-many-open-files": (
        "RuntimeError: Too many open files. Communication with the workers is no longer possible. Please increase "
        "the limit using `ulimit -n` in the shell or change the sharing strategy by calling "
        "`torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your code\n",
        "dataloader-too-many-open-files"),
    "detectron2-loss-not-finite": (
        "  File \"detectron2/engine/train_loop.py\", line 339, in _write_metrics\n"
        "    f\"Loss became infinite or NaN at iteration={storage.iter}!\\n\"\n"
        "FloatingPointError: Loss became infinite or NaN at iteration=87!\n"
        "loss_dict = {'loss_cls': nan, 'loss_box_reg': nan}\n",
        "loss-not-finite"),
    "clip-grad-norm-non-finite": (
        "RuntimeError: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be "
        "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
        "`error_if_nonfinite=False`\n",
        "loss-not-finite"),
    "early-stopping-not-finite": (
        "Monitored metric val_loss = nan is not finite. Previous best value was 0.412. Signaling Trainer to stop.\n",
        "loss-not-finite"),
    "loss-not-finite-fp16": (
        "scaler = torch.cuda.amp.GradScaler()\nwith torch.autocast('cuda', dtype=torch.float16):\n"
        "FloatingPointError: Loss became infinite or NaN at iteration=3!\n",
        "loss-not-finite/fp16-overflow"),
    "darknet-out-of-memory": (
        "CUDA status Error: file: ./src/dark_cuda.c : () : line: 39 : build time: Jan 21 2020 - 11:14:25\n"
        "CUDA Error: out of memory\n",
        "cuda-out-of-memory/darknet-mini-batch"),
    "cupy-pool-out-of-memory-before-6": (
        "cupy.cuda.memory.OutOfMemoryError: out of memory to allocate 1073741824 bytes (total 3221225472 bytes)\n",
        "cuda-out-of-memory/working-set"),
    "nvidia-smi-unknown-error": (
        "$ nvidia-smi\nUnable to determine the device handle for GPU 0000:02:00.0: Unknown Error\n",
        "gpu-xid-error"),
    "tensorrt-magic-tag": (
        "[TensorRT] ERROR: ../rtSafe/coreReadArchive.cpp (38) - Serialization Error in verifyHeader: 0 (Magic tag "
        "does not match)\n[TensorRT] ERROR: INVALID_STATE: std::exception\n"
        "[TensorRT] ERROR: INVALID_CONFIG: Deserialize the cuda engine failed.\n",
        "tensorrt-engine-incompatible/other-tensorrt-version"),
}


@pytest.mark.parametrize("log", [
    "xgboost.core.XGBoostError: [10:21:15] /workspace/src/common/device_helpers.cuh:400: "
    "cudaErrorNoKernelImageForDevice: no kernel image is available for execution on the device\n",
    "openmm.OpenMMException: Error loading CUDA module: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)\n",
    "[h264_nvenc @ 0x55d5c8a1e2c0] Driver does not support the required nvenc API version. Required: 12.1 Found: 12.0\n",
    "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInsufficientDriver: CUDA driver version is "
    "insufficient for CUDA runtime version\n",
    "numba.cuda.cudadrv.driver.CudaAPIError: [2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY\n",
    "RuntimeError: cuGraph: cudaErrorNoKernelImageForDevice: no kernel image is available for execution on the device\n",
    "CUDA Error: out of memory\ndarknet: ./src/cuda.c:36: check_error: Assertion `0' failed.\n",
])
def test_software_with_gpu_code_of_its_own_gets_no_frameworks_advice(log, run_explain):
    for match in _first(run_explain, log):
        advice = " ".join(match["workarounds"] + match["dead_ends"])
        assert not re.search(r"\btorch\b|PyTorch|TensorFlow|\bJAX\b|ONNX Runtime", advice), (match["id"], advice)


@pytest.mark.parametrize("device, claim", [("cpu", False), ("cuda", True)])
def test_a_compute_type_refused_on_the_cpu_makes_no_gpu_claim(device, claim, run_explain):
    log = (f"    model = WhisperModel(\"small\", device=\"{device}\", compute_type=\"float16\")\nValueError: Requested "
           "float16 compute type, but the target device or backend do not support efficient float16 computation.\n")
    data = json.loads(run_explain(["--format", "json"], stdin=log).stdout)
    assert data["matches"][0]["id"] == "ctranslate2-compute-type"
    assert data["gpu_claim"] is claim


def _first(run_explain, log):
    data = json.loads(run_explain(["--format", "json"], stdin=log).stdout)
    assert data["matches"], log
    return data["matches"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_first_explanation_names_the_family_and_cause(name, run_explain):
    log, expected = CASES[name]
    first = _first(run_explain, log)[0]
    causes = first.get("causes") or []
    assert first["id"] + (f"/{causes[0]['id']}" if causes else "") == expected


def test_an_onnxruntime_build_with_the_cuda_provider_is_not_called_the_cpu_build(run_explain):
    log = ("UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names."
           "Available providers: 'TensorrtExecutionProvider, CUDAExecutionProvider, CPUExecutionProvider'\n")
    first = _first(run_explain, log)[0]
    assert first["id"] == "onnxruntime-cuda-provider"
    assert "cpu-only-package" not in [cause["id"] for cause in first.get("causes") or []]


def test_the_jax_fallback_warning_gives_way_to_the_error_that_caused_it(run_explain):
    log = ("E external/xla/xla/stream_executor/cuda/cuda_driver.cc:268] failed call to cuInit: "
           "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected\n" + JAX_FALLBACK)
    ids = [match["id"] for match in _first(run_explain, log)]
    assert ids[0] != "jax-cpu-fallback" and "jax-cpu-fallback" in ids


def test_a_cuda_library_a_bare_import_error_names_gets_no_framework_advice(run_explain):
    log = "ImportError: libcudart.so.8.0: cannot open shared object file: No such file or directory\n"
    first = _first(run_explain, log)[0]
    advice = " ".join(first["workarounds"] + first["dead_ends"]).lower()
    assert first["id"] == "cuda-library-not-found"
    assert "tensorflow" not in advice and "onnxruntime" not in advice


def test_torchs_own_import_error_keeps_to_torch_advice(run_explain):
    first = _first(run_explain, TORCH_IMPORT)[0]
    advice = " ".join(first["workarounds"]).lower()
    assert "pytorch" in advice and "tensorflow" not in advice and "onnxruntime" not in advice


def test_a_bracketed_visible_devices_list_explains_a_cudnn_failure(run_explain):
    log = "PyTorch gives CUDNN_STATUS_INTERNAL_ERROR when I run with CUDA_VISIBLE_DEVICES=[1,2,3]\n"
    data = json.loads(run_explain(["--format", "json"], stdin=log).stdout)
    assert [diagnosis["kind"] for diagnosis in data["diagnoses"]][:1] == ["visible-devices"]


def test_wsl1_is_named_as_having_no_gpu_support(run_explain):
    log = ("$ cat /proc/version\nLinux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0)\n"
           "W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic library "
           "'libcuda.so.1'; dlerror: libcuda.so.1: cannot open shared object file: No such file or directory\n")
    data = json.loads(run_explain(["--format", "json"], stdin=log).stdout)
    assert data["diagnoses"][0]["kind"] == "wsl" and "WSL1" in data["diagnoses"][0]["cause"]


def test_jaxlibs_vendored_tensorflow_paths_make_a_jax_log_with_no_tensorflow_advice(run_explain):
    log = ("E external/org_tensorflow/tensorflow/stream_executor/cuda/cuda_dnn.cc:352] Loaded runtime CuDNN "
           "library: 8.0.5 but source was compiled with: 8.1.0.  CuDNN library needs to have matching major "
           "version and equal or higher minor version.\n")
    first = _first(run_explain, log)[0]
    advice = " ".join(first["workarounds"] + first["dead_ends"] + [first["docs"] or ""])
    assert first["id"] == "cudnn-version-mismatch"
    assert "JAX" in advice and "tensorflow" not in advice.lower()


@pytest.mark.parametrize("log, framework_words", [
    # ggml prints no Python framework: torch's wheels and arch lists are not its fix
    ("ggml_init_cublas: found 1 CUDA devices:\nCUDA error 209 at ggml-cuda.cu:5284: no kernel image is available "
     "for execution on the device\n", ("ggml",)),
    # stream_executor's cuDNN version line names neither TensorFlow nor JAX, and is neither torch's
    ("Loaded runtime CuDNN library: 7.0.5 but source was compiled with: 7.1.4.  CuDNN library major and minor "
     "version needs to match or have higher minor version in case of CuDNN 7.0 or later version.\n", ()),
    ("[TRT] [E] 6: The engine plan file is not compatible with this version of TensorRT, expecting library "
     "version 8.6.1.6 got 8.5.3.1, please rebuild.\n", ("TensorRT",)),
    # llama.cpp's server binary built with CUDA, started where no driver is
    ("/llama-server: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such "
     "file or directory\n", ()),
    # OpenCV's CUDA modules are OpenCV's own build
    ("terminate called after throwing an instance of 'cv::Exception'\n  what():  OpenCV(4.5.4) /src/modules/cudaimgproc"
     "/src/cuda/hist.cu:94: error: (-217:Gpu API call) no kernel image is available for execution on the device in "
     "function 'histEven'\n", ("OpenCV",)),
    # Darknet's own CUDA code
    ("CUDA Error: an illegal memory access was encountered\ndarknet: ./src/cuda.c:36: check_error: Assertion `0' "
     "failed.\n", ()),
])
def test_logs_of_other_runtimes_get_no_torch_advice(log, framework_words, run_explain):
    first = _first(run_explain, log)[0]
    advice = " ".join(first["workarounds"] + first["dead_ends"] + [first["docs"] or ""])
    assert not re.search(r"\btorch\b|PyTorch|pytorch\.org", advice), advice
    assert all(word in advice for word in framework_words)


def test_jaxs_cpu_fallback_warning_beside_another_error_makes_no_gpu_claim(run_explain):
    log = ("WARNING:absl:No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more "
           "info.)\nTraceback (most recent call last):\n  File \"fit.py\", line 3, in <module>\n"
           "TypeError: unsupported operand type(s) for +: 'int' and 'str'\n")
    data = json.loads(run_explain(["--format", "json"], stdin=log).stdout)
    assert data["gpu_claim"] is False


def test_a_torch_side_log_that_names_ffmpeg_keeps_torch_advice(run_explain):
    log = ("  File \"/usr/lib/python3/site-packages/torchvision/io/video_reader.py\", line 160, in __next__\n"
           "[h264 @ 0x55d5c8a1e2c0] ffmpeg: decoding frame\n"
           "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    first = _first(run_explain, log)[0]
    assert first["id"] == "no-kernel-image"
    assert any("torch" in advice for advice in first["workarounds"])


@pytest.mark.parametrize("log", [
    "E1204 12:00:00.000 program.py:300] TensorBoard could not bind to port 6006, it was already in use\n"
    "OSError: [Errno 98] Address already in use\n",
    "Error: listen EADDRINUSE: address already in use :::3000\n",
])
def test_another_servers_port_in_use_is_not_torch_distributeds(log, run_explain):
    data = json.loads(run_explain(["--format", "json"], stdin=log).stdout)
    assert "distributed-port-in-use" not in [match["id"] for match in data["matches"]]


@pytest.mark.parametrize("log", [CASES["dataloader-ancdata"][0], CASES["detectron2-loss-not-finite"][0]])
def test_host_descriptors_and_a_diverged_loss_make_no_gpu_claim(log, run_explain):
    data = json.loads(run_explain(["--format", "json"], stdin=log).stdout)
    assert data["gpu_claim"] is False


def test_ddps_unused_parameters_make_no_gpu_claim(run_explain):
    log = ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This "
           "error indicates that your module has parameters that were not used in producing loss.\n")
    data = json.loads(run_explain(["--format", "json"], stdin=log).stdout)
    assert data["matches"][0]["id"] == "ddp-unused-parameters"
    assert data["gpu_claim"] is False
