"""What a log says about its environment, read into the doctor's Facts record.

Users paste more than the error: the torch version they printed, a `collect_env` report,
an nvidia-smi header, a conda list, the GPU they own. Each fact found is kept with the
log line it came from, so an explanation can name its evidence. Nothing is judged here.

Environment lines sit at the top of a log (banners, collect_env) or next to the error,
so on a huge log only the head, the tail and the lines around matched signatures are
read for evidence (`regions`): the cost stays bounded by those sizes, not the log's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Dict, Iterable, List, Optional, Set, Tuple

from torchlint.doctor.check_basics import parse_version
from torchlint.doctor.collect_env import looks_like_collect_env, parse_collect_env
from torchlint.doctor.compat import cuda_builds_for, cuda_of_tag, minimum_driver, newest_cuda_of_torch
from torchlint.doctor.facts import Facts, Gpu
from torchlint.doctor.gpu_names import capability_of
from torchlint.explain.needles import fold, may_match, needles
from torchlint.doctor.runtime_builds import version_major

HEAD = TAIL = 256 << 10
AROUND_MATCH = 20000


@dataclass(frozen=True)
class Clue:
    fact: str  # what was read: "torch", "gpu", "driver", ...
    value: str
    line: int  # 1-based line in the log
    excerpt: str


@dataclass
class Evidence:
    facts: Facts = field(default_factory=Facts)
    clues: List[Clue] = field(default_factory=list)
    wsl: bool = False
    wsl1: bool = False  # WSL1, which has no GPU support at all
    windows: bool = False
    conda: bool = False
    amp: bool = False  # autocast / fp16 in use
    nvidia_smi_cuda: Optional[str] = None  # "CUDA Version: 11.4" of nvidia-smi: the newest the driver runs
    driver_cuda_source: str = "nvidia-smi"  # or torch's "driver ... is too old (found version 11040)" warning
    minimum_capability: Optional[str] = None  # torch's "minimum cuda capability supported ... is 3.7"
    features: Set[str] = field(default_factory=set)  # FEATURES seen anywhere in the regions read

    def used(self, *facts: str) -> List[Clue]:
        """The clues behind the named facts, first of each kind."""
        seen: Dict[str, Clue] = {}
        for clue in self.clues:
            if clue.fact in facts and (clue.fact, clue.value) not in seen:
                seen[(clue.fact, clue.value)] = clue  # type: ignore[index]
        return list(seen.values())


_TAG = r"(cu\d{2,3}|cpu|rocm[\d.]+)"
# Not \b: CJK letters are word characters, and "查看torch版本" must still match.
_START = r"(?<![A-Za-z0-9_])"
# Every pattern reads untrusted text, so none may backtrack more than a bounded distance
# from where it starts (tests/explain/test_linear_patterns.py): no `\s*` beside another
# `\s*` or `\s` that can take the same spaces, no unbounded run before a literal that
# the run could also hold. `==`, `=`, `:` or spaces between a name and its version:
_SEPARATOR = r"(?:\s*(?:==|=|:)\s*|\s+)"
_ASSIGNED = r"(?:\s*(?:==|=)\s*|\s+)"
def _compiled(rows: Tuple[Tuple[str, str, int], ...]) -> Tuple[Tuple[str, "re.Pattern[str]"], ...]:
    return tuple((name, re.compile(pattern, flags)) for name, pattern, flags in rows)


_PATTERNS = _compiled((
    ("collect-torch", r"^PyTorch version:\s*(\S+)", re.M),
    ("collect-cuda", r"^CUDA used to build PyTorch:\s*(\d+\.\d+)", re.M),
    ("torch-tagged", _START + r"(?:torch|pytorch)" + _SEPARATOR + r"v?(\d+\.\d+(?:\.\d+)?(?:\.post\d+)?)\+" + _TAG, re.I),
    ("torch-plain", _START + r"(?:torch|pytorch)(?:\s*version|版本)?(?:\s*(?:==|=|:|：)\s*|\s+)v?(\d\.\d{1,2}(?:\.\d+)?)(?![\d.+])", re.I),
    ("tagged-version", r"(?<![\w.])(\d\.\d{1,2}\.\d+)\+" + _TAG + r"\b", 0),
    ("conda-pytorch", _START + r"pytorch\s+(\d+\.\d+(?:\.\d+)?)\s+\S*?cuda(\d+\.\d+)(?:\.\d+)?_cudnn(\d+\.\d+\.\d+)", re.I),
    ("cudatoolkit", _START + r"cudatoolkit" + _ASSIGNED + r"(\d+\.\d+)", re.I),
    ("pytorch-cuda", _START + r"pytorch-cuda" + _ASSIGNED + r"(\d+\.\d+)", re.I),
    ("driver", r"(?:Driver Version|driver version)\s*(?:[:：]\s*)?(\d{3}\.\d+(?:\.\d+)?)", 0),
    ("smi-cuda", r"CUDA Version\s*:\s*(\d+\.\d+)\s*\|?", 0),
    # torch's warning: cudaDriverGetVersion's number, 1000 * major + 10 * minor of the newest CUDA the driver runs
    ("driver-too-old", r"driver on your system is too old \(found version (\d{4,6})\)", 0),
    ("capability-sm", r"with CUDA capability sm_(\d+)(\d)\b", 0),
    ("capability-found", r"Found GPU\d+ (.{1,200}?) which is of cuda capability (\d+)\.(\d+)", 0),
    ("arch-list", r"supports CUDA capabilities ((?:sm_\d+[a-z]?\s*)+)", 0),
    ("minimum-capability", r"minimum cuda capability (?:that we support|supported by this library) is (\d+)\.(\d+)", 0),
    ("capability-tf", r"name:[ \t]*([^\s:](?:[^\n:]{0,198}?[^\s:])?)[ \t]+(?:major:\s*(\d+)\s+minor:\s*(\d+)|computeCapability:\s*(\d+)\.(\d+))", 0),
    # A GPU name is taken whole: "GTX 960M" is a GTX 960M, never a "GTX 960" inside it.
    ("gpu-name", _START + r"((?:NVIDIA\s+)?(?:GeForce\s+)?(?:RTX\s*(?:PRO\s*)?(?:A\d{4}|\d{4}M?(?:\s*Ti|\s*SUPER)?)"
                 r"|GTX\s*(?:TITAN\s*\w+|\d{3,4}M?(?:\s*Ti)?)|TITAN\s*(?:RTX|Xp|X|V)"
                 r"|(?:Tesla|NVIDIA)\s+[A-Z]\d{1,3}[A-Z]?\b(?:[-\s]\w+GB)?|[Tt]esla\s+[a-z]\d{1,3}\b"
                 r"|(?:A100|H100|H200|A800|H800|B200|GH200|V100|P100|A10G|L40S)\b(?:[-\s]\w+GB)?))(?!\w)", 0),
    ("visible-devices", r"CUDA_VISIBLE_DEVICES['\"]?\]?\s*(?:=|:)\s*['\"]?([^\s'\",;)]+(?:,\s*\d+)*\]?)", 0),
    # a `pip freeze` / collect_env package line: the doctor's runtime tables read facts.packages
    ("package", r"^[ \t]*(?:\[(?:pip\d?|conda)\][ \t]+)?([A-Za-z][\w.-]*)(?:==|[ \t]+)(\d[\w.+-]*)[ \t]*$", re.M),
    ("wsl", r"microsoft-standard-WSL2|\bWSL2?\b|/usr/lib/wsl/lib", 0),
    # WSL1's kernel reports itself as 4.4.0-<build>-Microsoft (WSL2's as <version>-microsoft-standard-WSL2)
    ("wsl1", r"\b4\.4\.0-\d{4,6}-Microsoft\b", 0),
    ("windows", r"\b[A-Z]:\\{1,2}|\\\\site-packages\\\\|\.(?:dll|exe)\b|Microsoft Windows|\bWindows 1[01]\b|\bWindowsPath\(", 0),
    ("conda", r"\[conda\]|anaconda3|miniconda3|\bconda (?:install|create)\b|/envs/\w+/lib/python", 0),
    ("amp", r"\bautocast\b|GradScaler|torch\.cuda\.amp|\.half\(\)|float16|fp16\b|HalfTensor", 0),
))


# Evidence features: what a log shows beyond its error line. Signatures rank their causes by
# them (signatures.toml `when` / `unless`); nothing here names an error family.
FEATURES = _compiled((
    # the library call or layer the failing operation ran in
    ("call:batchnorm", r"cudnnBatchNorm\w*|\bbatch_norm\b|BatchNormalization node|batchnorm\.py|BatchNorm[123]d", 0),
    ("call:rnn", r"cudnnRNN\w*|_cudnn_rnn|modules[/\\]rnn\.py|\bLSTM\b|\bGRU\b|Input and hidden tensors", 0),
    # the traceback's own frames
    ("frame:evaluation", r"\bin _?(?:valid|validation|validate|evaluat\w*|eval_\w*|test_step|inference|predict)\b"
                         r"|\bdef (?:valid|validate|evaluate)\w*\(|\b(?:evaluate|validate|validation)\(", 0),
    ("no-grad", r"no_grad|inference_mode|set_grad_enabled\(False\)", 0),
    ("data-preparation", r"Generating \w+ split|examples/s\]|\bMap(?: \(num_proc=\d+\))?:", 0),
    ("frame:checkpoint", r"\bin _?save\w*\b|torch\.save\(|save_checkpoint|saving (?:model|checkpoint)", re.I),
    ("compile", r"torch\.compile|torch/_dynamo|torch/_inductor|\binductor\b", 0),
    ("library-handle", r"(?:cublas|cudnn) handle|cublasCreate|cudnnCreate\b", re.I),
    ("index-error", r"index out of (?:range|bounds)|srcIndex < srcSelectDimSize|Assertion `(?:[^`<>]|>(?!=))*(?:<|>=)[^`]*` failed", 0),
    ("dtype:bf16", r"CUDA_R_16BF|\bbf16\b|\bbfloat16\b|\bBFloat16\b", 0),
    # a C++ free function (`_Z27points_in_boxes_cpu_forward...`), not a namespaced one (`_ZN3c10...`, torch's)
    ("symbol:free-function", r"undefined\s{1,4}symbol:\s{0,4}_Z\d{1,3}[A-Za-z_]", 0),
    ("lightning-fork-launch", r"Lightning can't create new processes|\bddp_(?:notebook|fork)\b", 0),
    ("symbol:cxx11", r"undefined\s{1,4}symbol:\s{0,4}_Z\w{0,300}?cxx11", 0),
    # TensorRT 8+'s archive reader rejecting the magic tag (not the version tag, which it reports in its own words)
    ("trt-shape-outside-profile", r"exceed min ~ max range|condition: profileM(?:ax|in)Dims\.d\[i\]", 0),
    ("trt-archive-reader", r"(?:stdArchiveReader|magicTagRead == kMAGIC_TAG)[^\n]{0,200}?Magic tag does not match", 0),
    # TensorFlow naming the host device and allocator of a failed allocation
    ("oom-on-host", r"device:CPU:\d{1,3} by allocator cpu|\bon cpu by allocator\b", 0),
    # Convolution's input/weight type check, one side on a GPU (torch.cuda.*, CUDA*, MPS*) and the other not
    ("types:device-differ", r"Input type \((?:torch\.cuda\.|CUDA|MPS)[\w.]{1,40}\) and weight type \((?!torch\.cuda\.|CUDA|MPS)"
                            r"|Input type \((?!torch\.cuda\.|CUDA|MPS)[\w.]{1,40}\) and weight type \((?:torch\.cuda\.|CUDA|MPS)"
                            r"|Input and parameter tensors are not at the same device", 0),
    ("dtype:double", r"\bDouble\b|\bfloat64\b|DoubleTensor", 0),
    ("loss-target", r"argument #\d+ 'target'|_loss_forward|\bnll_loss|\bcross_entropy|\bmse_loss|binary_cross_entropy"
                    r"|\b[A-Z][A-Za-z0-9]{0,40}Loss\(", 0),
    ("call:extension", r"\b_C\.\w+\(|_ext\.\w+\(|_cuda\.\w+\(|\bcpp_extension\b|[/\\]csrc[/\\]\w+\.cu\b", 0),
    ("adapter", r"\bpeft\b|\bLoRA\b|\blora_\w+|--lora\w*|\bfinetuning_type lora\b|\bQLoRA\b", 0),
    # what the message itself states about versions
    ("api-mismatch", r"has no attribute '?\w+|cannot import name '?\w+|undefined symbol: \w+", 0),
    ("library-older", r"which is newer|[Oo]utdated \w+ installation|must be at least as new|Minimum supported", 0),
    # how long things worked before they failed
    ("long-running", r"daemon-reload|after (?:a |some |random |several |a few |a couple of )?(?:while|time|amount of time|days?|hours?)\b"
                     r"|\b(?:several|a few|couple of) days\b|\bworks? (?:well|fine)\b[^\n]{0,40}\b(?:until|upon|but)\b"
                     r"|\bsometimes\b|\bintermittent(?:ly)?\b", re.I),
    # the product and runtime that printed the log
    # the device a model was loaded on, as the call that failed names it (`WhisperModel(path, device="cpu")`)
    ("device:cpu", r"""\bdevice\s?=\s?["']cpu["']""", 0),
    ("device:cuda", r"""\bdevice\s?=\s?["']cuda(?::\d)?["']""", 0),
    # CTranslate2's own messages: its CUDA_CHECK ("CUDA failed with error <cudaGetErrorString>") and its
    # library loader ("Library libcublas.so.12 is not found or cannot be loaded")
    ("product:ctranslate2", r"ctranslate2|faster[-_ ]?whisper|whisper[-_ ]faster|WhisperModel|CUDA failed with error "
                            r"|\bLibrary \S{1,80} is not found(?: or cannot be loaded)?", re.I),
    ("product:onnxruntime", r"(?i:onnx ?runtime)|OrtException|OrtSession|CUDAExecutionProvider"
                            r"|tensorrt_execution_provider\.\w|TensorrtExecutionProvider", 0),
    # XLA's own stream_executor (external/xla/xla/stream_executor) is JAX's as much as TensorFlow's
    # TensorFlow's own log format names it when the word does not appear: its vendored XLA/TSL paths
    # (`E external/local_xla/...`), its TF_* variables, its allocator's OOM message and graph-node notes
    # jaxlib built TensorFlow's tree as the Bazel repository `org_tensorflow`: its paths are JAX's, not TensorFlow's
    ("product:tensorflow", r"(?<!org_)(?<!org_tensorflow/)tensorflow|\bTensorFlow\b|\btf\.(?:test|config)\.|(?<!xla/)(?<!org_tensorflow/tensorflow/)stream_executor|\bkeras\b|external/local_(?:xla|tsl)/"
                           r"|(?<!xla/stream_executor/cuda/)cuda_driver\.cc|\bTF_[A-Z]{3,}|OOM when allocating tensor"
                           r"|ResourceExhaustedError|\[\[(?:\{\{)?[Nn]ode[ :]|_device=\"/job:", 0),
    ("product:jax", r"\bjaxlib\b|\b(?:jax|JAX)\b|XlaRuntimeError|external/org_tensorflow/", 0),
    # Elixir's Nx on XLA (EXLA), which preallocates GPU memory as JAX does
    ("product:exla", r"\bEXLA\b|\(exla [\d.]+\)|\bNx\.(?:Defn|Serving|backend)\b|\bXLA_TARGET\b", 0),
    # TensorFlow and XLA (JAX) share stream_executor, whose messages name neither when printed bare
    # ("Could not create cudnn handle", "could not create cublas handle", "failed to create cublas handle")
    ("runtime:stream-executor", r"[Cc]ould not create cu(?:dnn|blas) handle|failed to create cublas handle"
                                r"|[Ff]ailed to (?:get|determine best cudnn) convolution algorithm"
                                # cuda_dnn.cc's version check (stream_executor's own wording)
                                r"|Loaded runtime CuDNN library: ", 0),
    # PaddlePaddle: its name, its sources, and its enforce format for a library's status,
    # "(External) CUDA error(700), an illegal memory access was encountered." (paddle/phi/core/enforce.h)
    ("product:paddle", r"\b[Pp]addle(?:[Pp]addle|NLP|OCR|Detection|Seg)?\b|\bpaddle/(?:fluid|phi)/"
                       r"|\(External\) (?:CUDA|CUDNN|CUBLAS|NCCL|CUFFT|CUSOLVER|CUSPARSE|CURAND) error\(", 0),
    # Apache MXNet: its package and its exception
    # MXNet and its parts: mshadow (its tensor library), the engine and storage sources its fatal lines name, its
    # CUDA_CALL check (`e == cudaSuccess`, where Caffe writes `error ==`), the mx.* namespace
    ("product:mxnet", r"\b(?:mxnet|MXNet)\b|MXNetError|\bmshadow\b|\blibmxnet\.so\b|threaded_engine\w{0,20}\.(?:cc|h)\b"
                      r"|pooled_storage_manager\.h\b|Check failed: e == cudaSuccess\b|\bmx\.(?:nd|gpu|cpu|sym|gluon|context)\b", 0),
    # Caffe's glog CHECK macros around CUDA calls: "Check failed: error == cudaSuccess (2 vs. 0)"
    ("product:caffe", r"\b[Cc]affe\b|Check failed: (?:error|status) == (?:cudaSuccess|CUDNN_STATUS_SUCCESS|CUBLAS_STATUS_SUCCESS)", 0),
    # Lua Torch (torch7): its package manager, its CUDA package, its interpreter and Lua paths (not THC, which
    # early PyTorch releases shipped too)
    ("product:lua-torch", r"\bluarocks\b|\bcutorch\b|\bluajit\b|share/lua/5\.\d/", 0),
    # XLA's runtime (JAX, or TensorFlow's XLA path) prints absl statuses and device ordinals
    ("product:xla", r"\bRESOURCE_EXHAUSTED: |\bon device ordinal \d|XlaRuntimeError|\bxla/(?:service|pjrt|stream_executor)/", 0),
    # torch's own words, which no other framework prints: its caching allocator's out-of-memory message, the advice
    # c10's CUDA checks append, its sources' paths (aten/, c10/, torch/csrc/) and its libraries
    ("product:torch", r"(?:site|dist)-packages[/\\]torch(?:vision|audio)?[/\\]|\bimport torch\b|\btorch\.(?:cuda|nn|distributed|utils|ops|_C|_inductor)\b"
                      r"|\btorch\.\w{0,20}Error\b|\bTried to allocate \d[\d.]* [KMG]i?B\b|CUDA kernel errors might be asynchronously reported"
                      r"|\bTORCH_USE_CUDA_DSA\b|\bPYTORCH_CUDA_ALLOC_CONF\b|\baten[/\\]src[/\\]|\bc10[/\\]cuda[/\\]"
                      r"|\btorch[/\\]csrc[/\\]|\blib(?:torch_cuda|c10_cuda|torch_cpu)\.so\b|\bProcessGroupNCCL\b"
                      # its exception texts (c10's cuDNN and HIP checks, its old NCCL wrapper; torch.cuda; DDP's reducer; GradScaler;
    # not THC's lines, which Lua Torch's cutorch prints too, nor "CUDA error: ", which PaddlePaddle raises as well)
                      r"|RuntimeError: (?:cuDNN|HIP) error: |\bNCCL Error \d: |device type for generator but found"
                      r"|Expected all tensors to be on the same device|Cannot re-initialize CUDA in forked subprocess"
                      r"|No CUDA GPUs are available|Attempting to unscale FP16 gradients|has been marked as ready twice"
                      r"|Expected object of (?:device|backend|scalar) type|\bCUDNN_STATUS_\w+ when calling\b|\bCuDNN error: "
                      r"|cudnn RNN backward can only be called"
                      r"|cannot be converted to type at::\w+ without overflow|Expected to have finished reduction in the prior"
                      r"|Expected to mark a variable ready only once|\bDataLoader worker \(pid|\[(?:pip3?|conda)\] torch[= ]"
                      r"|\b[Pp]y[Tt]orch\b|CUDACachingAllocator|\bc10::", 0),
    # torch's own extension module failed to load: the torch install itself asks for the library
    ("frame:torch-import", r"from torch\._C import|[/\\]torch[/\\]__init__\.py", 0),
    # vLLM's engine: its name, its memory knob, its KV-cache allocator's message
    ("product:vllm", r"\bvllm\b|\bvLLM\b|gpu_memory_utilization|No available memory for the cache blocks"
                     r"|Bfloat16 is only supported on GPUs with compute capability of at least"
                     r"|stored in KV cache|KV cache is needed, which is larger than the available KV cache memory", re.I),
    ("vllm-startup-memory", r"on startup is less than desired GPU memory utilization|Error in memory profiling\. Initial", 0),
    # ComfyUI: its executor's lines, its packages in frames, its portable build's folder
    ("product:comfyui", r"\bComfyUI\b|[/\\]comfy[/\\]|\bcomfy\.\w{2,30}\b|!!! Exception during processing !!!"
                        r"|Got an OOM, unloading all loaded models", re.I),
    # ggml (llama.cpp, whisper.cpp and the apps built on them): its CUDA back end's own lines and sources
    ("product:ggml", r"\bggml_(?:init_cublas|cuda_\w+|backend_\w+)|ggml-cuda(?:\.cu|/)|\bllama\.cpp\b|\bwhisper\.cpp\b|\b[Oo]llama\b"
                     r"|\bllm_load_\w+|\bllama_model_load\b|\bGGML_\w+"
                     r"|\bllama-(?:server|cli|bench|quantize)\b|\bllamacpp\b|\bLLAMA_\w+"
                     # ollama's GPU discovery and its server's log lines (Go's slog with the source file)
                     r"|\b(?:cuda driver library|cudart|nvcuda) init failure\b|\bsource=(?:gpu|server|sched|routes)\.go:\d", 0),
    # TensorRT's own logger and runtime ("[TRT] [E] ...", nvinfer1:: frames, trtexec)
    ("product:tensorrt", r"\[TRT\]|\bnvinfer1::|\btrtexec\b|TensorRT[- ]LLM|\bTensorRT\b(?!ExecutionProvider)", 0),
    # Triton's launcher and compiler frames
    # NVIDIA's GPU PhysX under Isaac Gym (carb.gym), Isaac Sim and Isaac Lab (omni.physx)
    ("runtime:physx", r"\bcarb\.gym\b|\bomni\.physx\b|\bGymPhysX\w{0,8}\.c|\bPxg\w{2,40}\.(?:cpp|cu)\b|PxGpuDynamicsMemoryConfig|\bisaacgym\b", 0),
    ("runtime:triton", r"Triton Error \[CUDA\]|[/\\]triton[/\\]|\btriton\.", 0),
    # a driver version stated in the paste (nvidia-smi's header, a collect_env report)
    # nvidia-smi's header, and the entrypoint of NVIDIA's NGC containers ("... but version 470.182.03 was detected")
    ("driver-version-stated", r"Driver Version\s{0,4}[:：]?\s{0,4}\d{3}\.|Nvidia driver version:\s{0,4}\d{3}\."
                              r"|version \d{3}\.\d{1,3}(?:\.\d{1,3})? was detected", 0),
    # ONNX Runtime's provider list without the CUDA provider: the CPU build (or DirectML's, OpenVINO's) is what is
    # installed; the list as its Python session words it (possibly wrapped), as get_available_providers() prints it,
    # and get_device(), which names the build ("CPU" or "GPU")
    ("onnxruntime-cpu-providers", r"Available providers: '(?:(?!CUDA)[^'\n]|\n(?!\n)){1,300}'"
                                  r"|\['(?:Azure|CPU|Dml|OpenVINO|CoreML)ExecutionProvider'"
                                  r"(?:,\s{0,4}'(?:Azure|CPU|Dml|OpenVINO|CoreML)ExecutionProvider'){0,3}\]"
                                  r"|\b(?:ort|onnxruntime)\.get_device\(\)[^\n]{0,40}\n?[^\n]{0,8}'?CPU'?\s*$", re.M),
    # what the error line itself says about where it failed
    ("no-device", r"CUDA_ERROR_NO_DEVICE|cudaErrorNoDevice|no CUDA-capable device is detected", 0),
    ("init-time", r"\bcuInit\b|CUDA initialization: |_cuda_getDeviceCount|cudaGetDeviceCount|cuDeviceGetCount|_cuda_init\("
                  r"|getCudaEnabledDeviceCount|\b(?:cuda driver library|cudart|nvcuda) init failure\b", 0),
    # NCCL told to read a topology or graph file (NCCL_TOPO_FILE, NCCL_GRAPH_FILE) that may describe another machine
    ("nccl-topology-file", r"NCCL_(?:TOPO|GRAPH)_FILE set by environment|XML Import Channel", 0),
    # Apple's Metal backend: its allocator's messages and settings
    ("mps", r"MPS backend out of memory|PYTORCH_MPS_\w+|\bmps:\d|device='mps'|device=\"mps\"", 0),
    # libnvidia-container's check of the image's CUDA against the host driver
    ("container-cuda-requirement", r"requirement error: unsatisfied condition: cuda\s?>=", 0),
    # the kernel module: rebuilt per kernel by DKMS, refused unsigned under Secure Boot
    ("kernel-module", r"\bdkms\b|\bDKMS\b|linux-headers|kernel-(?:headers|devel)\b|kernel source tree|[Kk]ernel headers"
                      r"|kernel (?:update|upgrade)|uname -r", 0),
    ("kernel-newer-than-driver", r"GPL-incompatible module nvidia[\w-]{0,20}\.ko uses GPL-only symbol", 0),
    ("secure-boot", r"[Ss]ecure ?[Bb]oot|\bmokutil\b|Required key not available", 0),
    # TensorRT's libraries, which pip's tensorrt wheels keep in their own directory
    ("tensorrt", r"libnvinfer\w{0,40}\.so|nvinfer\w{0,40}\.dll|TensorrtExecutionProvider|\btensorrt\b", 0),
    # cuFFT's internal error, which it reports for a GPU its release does not know
    ("cufft-internal-error", r"CUFFT_INTERNAL_ERROR", 0),
    # the library loaded as the CUDA driver lacks the driver API (numba's binding names the function)
    ("driver-api-missing", r"driver missing function: cu[A-Z]|symbol lookup for cu[A-Z]\w{0,40} failed", 0),
    # ptxas rejects its target: the GPU's sm_ or the PTX's .version is newer than this ptxas
    # (not the driver's own ptxas, which the JIT runs as "ptxas application ptx input": there the driver is old)
    ("ptxas-too-old", r"is not defined for option 'gpu-name'|ptxas(?! application ptx input)[^\n]{0,80}Unsupported \.(?:version|target)"
                      r"|ptxas does not support CC \d", 0),  # XLA's asm_compiler.cc
    # which of Triton's checks refused a pre-Volta GPU: torch's Inductor before code generation, or LLVM lowering a
    # warp shuffle for Pascal (Triton before 3.0)
    ("triton-inductor-check", r"too old to be supported by the triton GPU compiler|Triton only supports devices of CUDA Capability", 0),
    ("triton-pascal-shuffle", r"Cannot select: intrinsic %llvm\.nvvm\.shfl\.sync", 0),
    # torch.load of a storage saved on a device index beyond this machine's count
    ("deserialize-device-count", r"Attempting to deserialize object on [A-Z]+ device \d+ but torch\.\w+\.device_count\(\)", 0),
    # PyG's compiled extensions, by their module names or their C++ sources
    ("product:pyg-extension", r"\btorch_(?:scatter|sparse|cluster|spline_conv)\b|\btorch-(?:scatter|sparse|cluster|spline-conv)\b", 0),
    ("cupy-cuda-path-unset", r"CUDA path could not be detected\. Set CUDA_PATH", 0),
    # the NVIDIA Container Toolkit's CDI mode: a spec generated by nvidia-ctk, and the hooks it names
    ("container-cdi", r"\bCDI devices?\b|\bnvidia-ctk\b|nvidia\.com/gpu=|/(?:etc|var/run)/cdi/|\bmode as 'cdi'|\bnvidia-cdi-hook\b", 0),
    ("dtype:fp16", r"\bautocast\b|GradScaler|torch\.cuda\.amp|\.half\(\)|float16|\bfp16\b|HalfTensor|--amp\b|\bopt_level\b|\bAMP\b", 0),
    ("runtime:java", r"\bat [\w.$]+\([\w$]+\.java:\d+\)|\.java:\d+\)", 0),
    ("os:linux", r"\blib\w+\.so\b|\.so\.\d|/home/|/usr/|/opt/|\bUbuntu\b|\bLinux\b", 0),
    # where it ran
    ("container", r"\bdocker(?:file)?\b|--shm-size|--ipc=host|\bkubernetes\b|\bk8s\b|\bcontainers?\b|\bpodman\b"
                  r"|\bnvidia/cuda:\d|\bsingularity\b|\bapptainer\b|/\.dockerenv\b", re.I),
    # NCCL's INFO lines name the transport each channel uses ("Channel 00 : 0[0] -> 1[1] via SHM/direct/direct")
    ("shm", r"/dev/shm|shm_open|posix_fallocate|shared memory segment|ncclShmOpen|--ipc=host|shm-size|\bshm\.h\b"
            r"|\bvia SHM/|NCCL_SHM_DISABLE", 0),
    # processes made with fork(): DataLoader workers, multiprocessing, pre-forking servers
    ("fork", r"\bfork(?:ed)?\b|\bmultiprocessing\b|DataLoader worker|_MultiProcessingDataLoaderIter|\bgunicorn\b|\bcelery\b"
             r"|\bnum_workers ?(?:>|=) ?[1-9]", 0),
    # a CUDA toolkit before 11.0 named in the paste (or TensorFlow 1.x, built against CUDA 9/10 only): it has no
    # code for Ampere (sm_80/sm_86) or newer GPUs
    ("cuda-before-11", r"\bcudatoolkit[ =:]{0,3}(?:[89]|10)\.\d|\bCUDA(?: [Tt]oolkit)?[ =:]{0,3}(?:[89]|10)\.\d"
                       r"|\btensorflow(?:-gpu)?[ =]{1,2}1\.\d|\bcudart64_(?:[89]\d|10\d)\b|libcudart\.so\.(?:[89]|10)\.\d", re.I),
    # the launch needs more registers or shared memory per block than a multiprocessor has
    ("launch-resources", r"too many resources requested for launch|cudaErrorLaunchOutOfResources"
                         r"|CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 0),
    # an extension's op reporting that its CUDA part was not built (detectron2, mmcv, maskrcnn-benchmark)
    ("ops-without-gpu", r"Not compiled with GPU support|Failed to load custom C\+\+ ops\. Running on CPU mode Only"
                        r"|NameError: name '_C' is not defined", 0),
    # torch.utils.cpp_extension building with no GPU visible (docker build, a container without the NVIDIA runtime)
    ("no-gpu-at-build", r"No CUDA runtime is found, using CUDA_HOME", 0),
    # a watchdog timeout in one of the job's first collectives (NCCL's sequence number: DDP's construction
    # broadcasts, the first barrier): ranks that never started together, start-up work rather than divergence
    ("nccl-early-collective", r"WorkNCCL\(SeqNum=[0-4]\b", 0),
    # libnvidia-container cannot mount the host's driver files over ones the image already holds
    ("container-driver-file-exists", r"mount error: file creation failed: [^\n]{0,300}?lib(?:nvidia|cuda)[\w.-]{0,40}: file exists", 0),
    ("product:dgl", r"\bdgl\b|\bDGLError\b", 0),
    # torch 1.x split its CUDA library in two; torch 2 has one libtorch_cuda.so, which a CPU build lacks
    ("torch1-split-library", r"libtorch_cuda_(?:cu|cpp)\.so", 0),
    ("torch-cuda-library", r"lib(?:torch_cuda|c10_cuda)\.so", 0),
    # NVRTC or nvcc asked for an architecture the toolkits dropped: 2.x from CUDA 9, 3.0/3.2 from 11, 3.5/3.7 from 12
    ("old-arch-requested", r"-arch[= ](?:compute|sm)_(?:[12]\d|3[0-7])\b|Unsupported gpu architecture '(?:compute|sm)_(?:[12]\d|3[0-7])'", 0),
    # software with GPU code of its own, on no ML framework: gradient boosting, array and JIT libraries,
    # molecular dynamics, video encoding, rendering, password recovery (their CUDA errors are CUDA's, the
    # advice for a framework's install is not theirs)
    ("product:gpu-software", r"\b(?:xgboost|XGBoost(?:Error)?|gpu_hist|[Ll]ight[Gg][Bb][Mm]|[Cc]at[Bb]oost|cupy|CuPy|cupy_backends"
     r"|numba|Numba|cudf|cuDF|cuml|cuML|cugraph|cuGraph|cuspatial|cuvs|RAPIDS|[Dd]arknet|[Oo]pen[Mm][Mm](?:Exception)?|simtk|GROMACS|gmx|ffmpeg|FFmpeg|ffprobe"
     r"|(?:h264|hevc|av1)_nvenc|[Bb]lender|hashcat|rmm|librmm)\b|\brmm/mr/|\brmm::"
     # Numba's CUDA driver wrapper and NVVM binding name their errors, not the package (numba/cuda/cudadrv)
     r"|\bCall to cu[A-Z]\w{0,40} results in CUDA_ERROR_|\bCuda(?:Support|API|Driver)Error\b|\bNvvm(?:Support)?Error\b"
     r"|\blibNVVM\b|\bNUMBA_[A-Z]", 0),
    # Darknet (pjreddie's and AlexeyAB's): its CUDA checks live in src/cuda.c / src/dark_cuda.c, its model in a .cfg
    ("darknet", r"\b[Dd]arknet\b|\bdark_cuda\.c\b|\bsrc/cuda\.c\b|\bsubdivisions\b", 0),
    ("gradient-boosting", r"\b(?:xgboost|XGBoost(?:Error)?|gpu_hist|[Ll]ight[Gg][Bb][Mm]|[Cc]at[Bb]oost)\b", 0),
    ("product:opencv", r"\bcv2\.error\b|\bOpenCV\(\d|\bcv::", 0),
    # CUDA_HOME set like a PATH list ("/usr/local/cuda-10.1:"), so the build runs "<list>/bin/nvcc"
    ("cuda-home-list", r"'[^'\n]{0,200}:/bin/nvcc'", 0),
    # the kernel module built with another gcc than the kernel (DKMS's make.log)
    ("kernel-compiler-differs", r"the compiler differs from the one used to build the kernel", 0),
    # jaxlib's CUDA plugin (jax_plugins/cuda) checks each library's version at start-up: a cuDNN it refuses for a
    # known defect, and a library it could not load, which it names
    ("jax-cudnn-defect", r"cuDNN 9\.10\.0 had a binary backward-compatibility issue|cuDNN < 9\.10\.0 \(\d+ found\) had an issue", 0),
    ("jax-library-not-found", r"failed: The \w{2,20} library was not found|Unable to load (?:CUDA|cu[A-Z]{2,8}|cuPTI)\. Is it installed\?", 0),
    ("kubernetes", r"\bkubernetes\b|\bk8s\b|\bkubectl\b|\bkubelet\b|device[- ]plugin", re.I),
    # NVIDIA's cuDNN 8 for Windows needs zlib's zlibwapi.dll beside it
    ("zlibwapi", r"zlibwapi\.dll", 0),
    # CUDA's link-time stub of the driver (lib64/stubs/libcuda.so) loaded as the driver
    ("cuda-stub", r"[/\\]stubs[/\\]libcuda\.so", 0),
    # the Linux kernel's own NVIDIA driver, which the NVIDIA installer cannot replace while it is loaded
    ("nouveau", r"\bnouveau\b", re.I),
    # the forward-compatibility package (cuda-compat): a newer libcuda for data-center GPUs only
    ("cuda-compat", r"\bcuda-compat\b|[/\\]compat[/\\]libcuda|cuda[\w.-]{0,10}[/\\]compat\b|forward compatibility was attempted", 0),
    # a Python without its headers: the embeddable Windows distribution (ComfyUI's python_embeded)
    ("embedded-python", r"python_embed(?:d)?ed|\bembeddable\b", 0),
    # tensors on a GPU other than the first (`cuda:1`): a kernel launched on the current device misses them
    ("device:nonzero", r"\bcuda:[1-9]\d?\b|\bset_device\([1-9]|\bdevice=[1-9]\b", 0),
    # how a DataLoader worker died (torch's signal handler names the signal)
    ("worker-killed", r"is killed by signal(?:ed)?: Killed\b", 0),
    ("worker-crashed", r"(?:segmentation fault|floating-point exception) encountered in worker"
                       r"|is killed by signal: (?:Segmentation fault|Floating point exception|Aborted|Illegal instruction)", 0),
    # TensorRT's deserializer: an engine built for another GPU model
    ("engine-other-gpu", r"engine plan file is generated on an incompatible device", 0),
    # a fused kernel or a graph pass that fused one (conv + bias + activation)
    ("fused-op", r"\bfused_\w+|\bfusion[/\\]|_fuse_pass\b|\bFusedConv\w*|ConvBiasActivation", 0),
    ("visible-devices-set", r"CUDA_VISIBLE_DEVICES['\"]?\]?\s*=\s*['\"]?\d|--gpu[-_](?:ids?|devices)|gpu_id", 0),
    # the signal that ended a process, as torchelastic ("exitcode: -9", "Signal 9 (SIGKILL) received by PID") and
    # shells print it
    ("signal-kill", r"(?:exitcode\s{0,8}:|return code =)\s{0,8}-9\b|\bSignal 9 \(SIGKILL\)|\bSIGKILL\b|\bKilled\s*$", re.M),
    ("signal-crash", r"(?:exitcode\s{0,8}:|return code =)\s{0,8}-(?:4|8|11)\b|\bSignal (?:4|8|11) \(SIG\w+\)|\bSIG(?:SEGV|ILL|FPE)\b"
                     r"|[Ss]egmentation fault", 0),
    ("signal-bus", r"(?:exitcode\s{0,8}:|return code =)\s{0,8}-7\b|\bSignal 7 \(SIGBUS\)|\bSIGBUS\b|\b[Bb]us error\b", 0),
    ("signal-abort", r"(?:exitcode\s{0,8}:|return code =)\s{0,8}-6\b|\bSignal 6 \(SIGABRT\)|\bSIGABRT\b|terminate called after throwing", 0),
    # the job scheduler, which kills a job at its memory or time limit
    ("batch-scheduler", r"\bslurm(?:stepd)?\b|\bSLURM_\w+|\bsbatch\b|\bsrun\b|oom-kill event|\bCANCELLED AT\b|\bPBS_\w+", re.I),
    # enroot (and pyxis, its Slurm plugin): containers whose GPU its NVIDIA hook injects
    ("container-enroot", r"\benroot\b|\bpyxis\b|--container-image\b|\bENROOT_\w+", re.I),
    # libtorch, the C++ distribution, whose libraries sit in libtorch/lib
    ("libtorch", r"(?<![A-Za-z0-9_])(?:libtorch|LibTorch)(?![A-Za-z0-9_])|\btorch::jit::", 0),
    # the screen went dark or Windows reset the display driver (event 4101, TDR): the display watchdog
    ("display-reset", r"[Ss]creen (?:goes|went|turns|turned|flickers|flickered|goes) (?:black|blank|dark)"
                      r"|[Dd]isplay driver \w{1,20} stopped responding and has (?:successfully )?recovered|\bTDR\b|TdrDelay", 0),
    # the driver's Xid reports (NVIDIA's Xid catalogue): which kind of fault the GPU had
    ("xid-bus", r"\bXid\b[^\n]{0,60}?: 79\b|fallen off the bus|\bGPU is lost\b", 0),
    ("xid-memory", r"\bXid\b[^\n]{0,60}?: (?:48|63|64|92|94|95)\b|(?:[Dd]ouble|[Uu]ncorrectable) [Bb]it ECC|\bDBE\b"
                   r"|row[- ]remap(?:ping)? failure", 0),
    ("xid-application", r"\bXid\b[^\n]{0,60}?: (?:13|31|43)\b", 0),
    ("xid-nvlink", r"\bXid\b[^\n]{0,60}?: 74\b", 0),
    ("xid-gsp", r"\bXid\b[^\n]{0,60}?: (?:119|120)\b|\bGSP\b[^\n]{0,40}(?:timeout|timed out|error)", 0),
    # a loss scaler that could not lower its scale any further (fairseq, DeepSpeed, apex)
    ("loss-scale-minimum", r"Minimum loss scale reached|Current loss scale already at minimum", 0),
    # NVENC refused another session: the driver's concurrent-session limit on consumer GPUs
    ("nvenc-sessions", r"OpenEncodeSessionEx failed: out of memory \(10\)|NV_ENC_ERR_OUT_OF_MEMORY", 0),
    # a hosted notebook's runtime (Colab's working directory is /content)
    ("notebook-runtime", r"(?<![\w.])/content/|\bgoogle\.colab\b|\b[Cc]olab\b|/kaggle/|\b[Kk]aggle\b", 0),
    # an ARM CPU: Jetson boards, aarch64 servers, Raspberry Pi
    ("cpu:arm", r"\baarch64\b|\barm64\b|\bJetson\b|\bJetPack\b|\b[Tt]egra\b|\bL4T\b|Raspberry Pi|Cortex-A\d", 0),
    # an allocator's own limit reached rather than the GPU's memory (CuPy's memory pool `set_limit`)
    ("memory-pool-limit", r"limit set to: [\d,]{1,30} bytes|Maximum pool size exceeded", 0),
    # NVIDIA's Jetson boards (L4T, JetPack): CUDA there is the integrated GPU's, not a server's (SBSA)
    ("jetson", r"\bJetson\b|\bJetPack\b|\bL4T\b|Linux for Tegra|\b[Tt]egra\b|\bnv\d{2}\.\d{2}\b", 0),
    # the loader names cuDNN's DLL as the missing dependency
    ("cudnn-dll-missing", r"cudnn(?:64|_\w{1,30}64)_\d\.dll\W{0,4}(?:which is missing|is missing|not found)", 0),
    # a torchvision operator (nms, roi_align) named by torch's dispatcher
    ("torchvision-op", r"'torchvision::\w{2,40}'", 0),
    # torchvision's own import check of the CUDA release it was built for against torch's (torchvision/extension.py)
    ("torchvision-cuda-check", r"PyTorch and torchvision were compiled with", 0),
    # ONNX Runtime's TensorRT execution provider failing on an engine it cached (tensorrt_execution_provider.cc)
    ("ort-trt-engine-cache", r"TensorRT EP could not deserialize engine", 0),
    # the Stable Diffusion web UI's NaN check (modules/devices.py test_for_nans)
    ("sd-webui-nan-check", r"A tensor with all NaNs was produced in (?:Unet|VAE)", 0),
    # a CPU build of torch named in a version string ("2.1.2+cpu") or a package list (conda's cpuonly, _pytorch_select cpu)
    ("torch-cpu-build", r"\bcpuonly\b|_pytorch_select\s[^\n]{0,40}\bcpu_\d|\bpytorch-cpu\b|\bcpu_py\d{2,3}\w{0,10}\b|\b\d\.\d{1,2}\.\d{1,2}\+cpu\b", 0),
    # CUDA's "system not yet initialized" (cudaErrorSystemNotReady, 802): a driver daemon the system needs is not running
    ("system-not-ready", r"system not yet initialized|cudaErrorSystemNotReady|CUDA_ERROR_SYSTEM_NOT_READY|\b(?:[Ee]rror|error=) ?\(?802\)?\b", 0),
    # the messages a binary prints for a system library older than the one it was linked against
    ("glibcxx-symbol", r"\b(?:GLIBCXX|CXXABI)_\d", 0),
    # torch's own words for a build without CUDA (torch/cuda/__init__.py's _lazy_init, the missing _cuda_* bindings,
    # torch 1.x's split CUDA library)
    ("torch-says-cpu-build", r"Torch not compiled with CUDA enabled|module 'torch\._C' has no attribute '_cuda_"
                             r"|Cannot initialize CUDA without ATen_cuda library", 0),
    # NVML inside a container that started with the GPU and lost its devices (NVIDIA's notice on systemd cgroups)
    ("nvml-unknown-error", r"Failed to initialize NVML: Unknown Error", 0),
    # nvidia-docker 1.0's volume plugin and the per-driver volumes it creates
    ("nvidia-docker-v1", r"nvidia-docker-plugin|VolumeDriver\.\w{3,8}\b|\bnvidia_driver_\d{3}", 0),
    # ggml loaded from two ollama installs: a runner missing ggml's own symbols, or both install prefixes named
    ("ollama-stale-libraries", r"undefined symbol: (?:ggml|gguf|llama)_\w{2,80}"
                               r"|/usr/lib/ollama\b[^\0]{0,4000}?/usr/local/lib/ollama\b"
                               r"|/usr/local/lib/ollama\b[^\0]{0,4000}?/usr/lib/ollama\b", 0),
    # the frames of ops whose kernels check indices they are given: classification losses and embeddings
    ("index-user", r"\b(?:nll_loss|cross_entropy|ClassNLLCriterion|CrossEntropyLoss|NLLLoss)\w{0,20}\b"
                   r"|\bF\.embedding\b|\bembedding\(|\bnn\.Embedding\b|modules[/\\]sparse\.py", 0),
    # torch.utils.cpp_extension's table of architectures does not have the GPU's
    ("torch-unknown-arch", r"Unknown CUDA arch \(\d{1,2}\.\d\w?\) or GPU not supported", 0),
    # GPUs reach containers through WSL2: WSL itself, or Docker Desktop on Windows, whose engine runs in a WSL2 VM
    ("wsl-backend", r"microsoft-standard-WSL2|\bWSL ?2?\b|/usr/lib/wsl/lib|\bDocker Desktop\b|\bdocker-desktop\b"
                    r"|\bDockerDesktop\b|\bdocker_engine\b", 0),
    # RAPIDS Memory Manager: its C++ sources and Python package, named by its allocation failures
    ("rmm", r"\brmm/mr/|\brmm::|\brmm\.(?:reinitialize|mr|allocators)\b|\blibrmm\b|\bimport rmm\b", 0),
))
# what each feature's pattern cannot match without (torchlint/explain/needles.py): on megabytes of a
# paste most features are decided by `in` on a few literals, not by a search from every position
_FEATURE_NEEDLES = {name: needles(pattern) for name, pattern in FEATURES}
# os:windows is the `windows` fact; the others compare facts (`_derived_features`)
FEATURE_NAMES = tuple(name for name, _ in FEATURES) + ("os:windows", "wsl", "gpu:before-volta", "cuda-major-differs",
                                                      "gpu-unsupported-by-cuda", "cudnn-major-differs",
                                                      "driver-not-shown-sufficient")


def regions(text: str, starts: Iterable[int]) -> List[Tuple[int, int]]:
    """The spans of `text` read for evidence: head, tail, and around each matched position."""
    spans = [(0, min(len(text), HEAD)), (max(0, len(text) - TAIL), len(text))]
    spans += [(max(0, s - AROUND_MATCH), min(len(text), s + AROUND_MATCH)) for s in starts]
    merged: List[Tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def extract(text: str, match_offsets: Iterable[int] = ()) -> Evidence:
    """The environment facts stated in `text`, each with the line it came from."""
    evidence = Evidence()
    spans = regions(text, match_offsets)
    head = text[: spans[0][1]]
    if looks_like_collect_env(head):
        evidence.facts = parse_collect_env(head)
        evidence.facts.unknown.clear()
    for start, end in spans:
        for name, pattern in _PATTERNS:
            for hit in pattern.finditer(text, start, end):
                _take(evidence, name, hit, text)
        window = text[start:end]
        folded = fold(window)
        evidence.features.update(name for name, pattern in FEATURES
                                 if name not in evidence.features and may_match(folded, _FEATURE_NEEDLES[name])
                                 and pattern.search(window))
    if evidence.wsl:
        evidence.features.add("os:linux")
    if evidence.windows:
        evidence.features.add("os:windows")
    _settle(evidence)
    evidence.features.update(_derived_features(evidence, text))
    return evidence


# Libraries whose file name carries the CUDA major they belong to (cuFFT, cuRAND, cuSPARSE and cuDNN number
# their own releases): libcublasLt.so.12 is CUDA 12's, cudart64_110.dll CUDA 11's
_CUDA_LIBRARY_WANTED = re.compile(
    r"(?:Could not load (?:dynamic )?library '?|Library |error while loading shared libraries: |OSError: |ImportError: "
    r"|with error: )"
    r"(?:lib(?:cublas|cublasLt|cudart|nvrtc)\.so\.(\d{1,2})(?:\.(\d))?|(?:cublas|cublasLt|cudart|nvrtc)64_(\d{2,3}))")
# cuDNN's libraries carry cuDNN's own major (libcudnn.so.8, libcudnn_ops_infer.so.8, cudnn64_9.dll)
_CUDNN_LIBRARY_WANTED = re.compile(r"\blibcudnn(?:_\w{2,30})?\.so\.(\d{1,2})\b|\bcudnn(?:_\w{2,30})?64_(\d{1,2})\.dll\b")
_CUDNN_STATED = re.compile(r"\bcu[Dd][Nn][Nn](?:[ _-]?version)?[\s:=_-]{0,3}v?(\d{1,2})\.\d{1,2}", re.I)
_CUDA_STATED = re.compile(r"\bcuda(?:[ _-]?(?:version|toolkit))?[\s:=_-]{0,3}v?(\d{1,2})\.(\d)", re.I)


def _derived_features(evidence: Evidence, text: str) -> Set[str]:
    """Features that follow from facts: WSL (1 or 2); a GPU older than Volta (compute capability below 7.0); a CUDA library asked
    for by its major version (libcublasLt.so.12) on a machine whose stated CUDA (or torch build's CUDA) has another major,
    and the same for cuDNN; a named GPU that no stated CUDA release (nor any build of the stated torch release) can build
    kernels for; a stated driver not shown new enough for the CUDA the program needs.
    Cost: four linear scans of the text, then one table lookup per named GPU and stated CUDA release."""
    derived = {"wsl"} if evidence.wsl else set()
    if any(float(gpu.capability) < 7.0 for gpu in evidence.facts.gpus if gpu.capability):
        derived.add("gpu:before-volta")
    wanted = {_release(hit) for hit in _CUDA_LIBRARY_WANTED.finditer(text)}
    stated = {(int(hit.group(1)), int(hit.group(2))) for hit in _CUDA_STATED.finditer(text)}
    torch_cuda = _cuda_release(evidence.facts.torch_cuda)
    if torch_cuda:  # torch's build (1.9.0+cu111, collect_env's line): the CUDA its wheel carries
        stated.add(torch_cuda)
    newest = _newest_cuda_of(evidence.facts)
    if newest is not None and _gpu_unsupported(evidence.facts.gpus, {newest}):
        derived.add("gpu-unsupported-by-cuda")  # no build of that torch release knows the GPU
    if wanted and stated and not any(_same_release(library, cuda) for library in wanted for cuda in stated):
        derived.add("cuda-major-differs")
    if _cudnn_major_differs(evidence.facts, text):
        derived.add("cudnn-major-differs")
    needed = {(major, minor or 0) for major, minor in wanted}  # not nvidia-smi's "CUDA Version", the driver's own
    if torch_cuda:
        needed.add(torch_cuda)
    stated_driver = evidence.facts.driver_version or "driver-version-stated" in evidence.features
    if stated_driver and not _driver_runs_all(evidence, needed):
        derived.add("driver-not-shown-sufficient")
    if _gpu_unsupported(evidence.facts.gpus, stated):
        derived.add("gpu-unsupported-by-cuda")
    return derived


def _newest_cuda_of(facts: Facts) -> Optional[Tuple[int, int]]:
    """The newest CUDA any build of the stated torch release used (0.4.1 had no build newer than CUDA 9.2), when
    the paste names a torch release but not its build's CUDA."""
    if not facts.torch_version or facts.torch_cuda or facts.torch_build in ("cpu", "rocm"):
        return None
    return _cuda_release(newest_cuda_of_torch(facts.torch_version))


def _cuda_release(text: Optional[str]) -> Optional[Tuple[int, int]]:
    """(12, 1) for "12.1"; None for None or another shape."""
    found = re.fullmatch(r"(\d{1,2})\.(\d)", text or "")
    return (int(found.group(1)), int(found.group(2))) if found else None


def _cudnn_major_differs(facts: Facts, text: str) -> bool:
    """Whether a cuDNN library asked for by its major (libcudnn.so.8) differs from every cuDNN the paste states (a
    version line, collect_env's cuDNN, an nvidia-cudnn-cu* package). Cost: two linear scans of the text."""
    wanted = {int(hit.group(1) or hit.group(2)) for hit in _CUDNN_LIBRARY_WANTED.finditer(text)}
    stated = {int(hit.group(1)) for hit in _CUDNN_STATED.finditer(text)}
    stated.update(version_major(version) for name, version in facts.packages.items() if name.startswith("nvidia-cudnn-cu"))
    stated.add(version_major(facts.cudnn_version))
    stated.discard(None)
    return bool(wanted and stated and not wanted & stated)


def _driver_runs_all(evidence: Evidence, releases: Set[Tuple[int, int]]) -> bool:
    """Whether the stated driver is new enough for every CUDA release the program needs (its torch build's, the
    libraries it asks for; the toolkit's minimum-driver table), so a report of a driver too old cannot be about its
    version. False when no release is known: the driver is then not shown to suffice."""
    driver = parse_version(evidence.facts.driver_version)
    floors = [minimum_driver(f"{major}.{minor}", evidence.facts.platform) for major, minor in releases]
    return driver is not None and bool(floors) and all(floor is not None and floor <= driver for floor in floors)


def _gpu_unsupported(gpus: Iterable[Gpu], stated: Set[Tuple[int, int]]) -> bool:
    """Whether a named GPU's architecture is one that no stated CUDA release can build for (an RTX 2080 Ti, sm_75,
    with CUDA 9.0): `doctor.compat.cuda_builds_for`'s table of the toolkit release notes."""
    verdicts = [cuda_builds_for(f"{major}.{minor}", gpu.capability)
                for gpu in gpus if gpu.capability for major, minor in stated]
    return bool(verdicts) and all(verdict is not None and not verdict[0] for verdict in verdicts)


def _release(hit: "re.Match[str]") -> Tuple[int, Optional[int]]:
    """The CUDA release a library file names: libcudart.so.11.0 and cudart64_110.dll are 11, libcudart.so.10.1 and
    cudart64_101.dll 10.1, cudart64_92.dll 9.2 (before CUDA 11 the file name carries the minor version),
    cublas64_12.dll 12."""
    if hit.group(3) is None:
        major = int(hit.group(1))
        return major, int(hit.group(2)) if hit.group(2) is not None and major < 11 else None
    digits = hit.group(3)
    if len(digits) == 3:
        return int(digits[:2]), int(digits[2]) if int(digits[:2]) < 11 else None
    value = int(digits)  # cublas64_11 is CUDA 11; cudart64_92 is 9.2
    return (value, None) if value <= 13 else (int(digits[0]), int(digits[1]))


def _same_release(library: Tuple[int, Optional[int]], cuda: Tuple[int, int]) -> bool:
    """Whether a library of that release is what the stated CUDA ships: the same major, and before CUDA 11 the same
    minor too (libcudart.so.9.0 is not in CUDA 9.1)."""
    major, minor = library
    return major == cuda[0] and (minor is None or major >= 11 or minor == cuda[1])


def _clue(evidence: Evidence, text: str, fact: str, value: str, position: int) -> None:
    line_start = text.rfind("\n", 0, position) + 1
    line_end = text.find("\n", position)
    excerpt = text[line_start: line_end if line_end != -1 else len(text)].strip()[:160]
    evidence.clues.append(Clue(fact, value, text.count("\n", 0, position) + 1, excerpt))


def _take(evidence: Evidence, name: str, hit: "re.Match[str]", text: str) -> None:
    facts = evidence.facts
    at = hit.start()
    group = hit.group(1) if hit.re.groups else hit.group(0)
    if name in ("collect-torch", "torch-tagged", "torch-plain", "tagged-version", "conda-pytorch"):
        version = group if name != "torch-tagged" and name != "tagged-version" else f"{group}+{hit.group(2)}"
        if name == "collect-torch":
            version = group
        if name == "tagged-version" and facts.torch_version:
            version = facts.torch_version  # torchvision's own version: keep the torch one, take the tag
        if facts.torch_version is None or ("+" in version and "+" not in facts.torch_version):
            facts.torch_version = version
        cuda = cuda_of_tag(version.split("+")[1]) if "+" in version else None
        if name == "conda-pytorch":
            cuda = hit.group(2)
            evidence.conda = True
            if facts.cudnn_version is None:
                facts.cudnn_version = hit.group(3)
                _clue(evidence, text, "cudnn", hit.group(3), at)
        if cuda and not facts.torch_cuda:
            facts.torch_cuda, facts.torch_build = cuda, "cuda"
        elif version.endswith("+cpu") and facts.torch_build == "unknown":
            facts.torch_build = "cpu"
        _clue(evidence, text, "torch", version + (f" (CUDA {cuda})" if cuda else ""), at)
    elif name == "collect-cuda":
        facts.torch_cuda, facts.torch_build = group, "cuda"
        _clue(evidence, text, "torch-cuda", group, at)
    elif name in ("cudatoolkit", "pytorch-cuda"):
        evidence.conda = True
        if not facts.torch_cuda:
            facts.torch_cuda, facts.torch_build = group, "cuda"
        _clue(evidence, text, "torch-cuda", f"{group} ({name})", at)
    elif name == "driver" and facts.driver_version is None:
        facts.driver_version = group
        _clue(evidence, text, "driver", group, at)
    elif name == "smi-cuda" and evidence.nvidia_smi_cuda is None and "Driver" in text[max(0, at - 200):at]:
        evidence.nvidia_smi_cuda = group
        _clue(evidence, text, "driver", f"supports CUDA <= {group} (nvidia-smi)", at)
    elif name == "driver-too-old" and evidence.nvidia_smi_cuda is None:
        number = int(group)
        evidence.nvidia_smi_cuda = f"{number // 1000}.{number % 1000 // 10}"
        evidence.driver_cuda_source = f"torch's warning: found version {group}"
        _clue(evidence, text, "driver", f"supports CUDA <= {evidence.nvidia_smi_cuda} (torch's warning)", at)
    elif name == "capability-sm":
        _add_gpu(evidence, text, None, f"{group}.{hit.group(2)}", at)
    elif name == "capability-found":
        _add_gpu(evidence, text, group.strip(), f"{hit.group(2)}.{hit.group(3)}", at)
    elif name == "arch-list" and evidence.facts.arch_list is None:
        facts.arch_list = group.split()
        _clue(evidence, text, "arch-list", " ".join(facts.arch_list), at)
    elif name == "minimum-capability":
        evidence.minimum_capability = f"{group}.{hit.group(2)}"
        _clue(evidence, text, "arch-list", f"minimum capability {evidence.minimum_capability}", at)
    elif name == "capability-tf":
        major, minor = (hit.group(2), hit.group(3)) if hit.group(2) else (hit.group(4), hit.group(5))
        _add_gpu(evidence, text, group.strip(), f"{major}.{minor}", at)
    elif name == "gpu-name":
        capability = capability_of(group) or capability_of(group.upper())  # "tesla p40", as people type it
        if capability:
            _add_gpu(evidence, text, " ".join(group.split()), capability, at)
    elif name == "visible-devices" and "CUDA_VISIBLE_DEVICES" not in facts.env:
        facts.env["CUDA_VISIBLE_DEVICES"] = group
        _clue(evidence, text, "env", f"CUDA_VISIBLE_DEVICES={group}", at)
    elif name == "package":
        package = re.sub(r"[-_.]+", "-", group).lower()
        if package not in facts.packages:
            facts.packages[package] = hit.group(2)
            _clue(evidence, text, "package", f"{package} {hit.group(2)}", at)
    elif name in ("wsl", "wsl1", "windows", "conda", "amp") and not getattr(evidence, name):
        setattr(evidence, name, True)
        _clue(evidence, text, name, hit.group(0), at)


def _add_gpu(evidence: Evidence, text: str, name: Optional[str], capability: str, at: int) -> None:
    gpus = evidence.facts.gpus
    def same(gpu: Gpu) -> bool:  # "NVIDIA GeForce RTX 3060" is the "... RTX 3060 Laptop GPU" already seen
        return gpu.capability == capability and (not name or not gpu.name or name in gpu.name or gpu.name in name)

    for position, gpu in enumerate(gpus):
        if same(gpu):
            if name and not gpu.name:  # "sm_61" first, "GeForce GTX 1050" later: one GPU, now named
                gpus[position] = replace(gpu, name=name)
            return
    gpus.append(Gpu(index=len(gpus), name=name, capability=capability))
    _clue(evidence, text, "gpu", f"{name or 'GPU'} (sm_{capability.replace('.', '')})", at)


def _settle(evidence: Evidence) -> None:
    facts = evidence.facts
    if evidence.windows and facts.platform is None:
        facts.platform = "win32"
    if facts.gpus:
        facts.cuda_available = True if facts.cuda_available is None else facts.cuda_available
        facts.device_count = facts.device_count or len(facts.gpus)
