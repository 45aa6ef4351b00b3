"""Evidence over hints: the call, the frames, the product, the OS and the container in a log rank an
error's causes; a hint quoted from PyTorch's message is one candidate, not the verdict."""

import io

import pytest

from torchlint.explain.evidence import extract
from torchlint.explain.explanation import explain
from torchlint.explain.knowledge import load_knowledge
from torchlint.explain.render import render_text

KNOWLEDGE = load_knowledge()


def _text(log):
    stream = io.StringIO()
    render_text(explain(log), KNOWLEDGE, stream)
    return stream.getvalue()


@pytest.mark.parametrize("log, top", [
    # PyTorch's message suggests a non-contiguous input; the log names cuDNN's batch norm.
    ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a "
     "non-contiguous input.\n  expr=cudnnBatchNormalizationForwardInference(handle, mode)\n",
     "cudnn-not-supported/batchnorm-limit"),
    ("RuntimeError: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input.\n",
     "cudnn-not-supported/layout-or-size"),
    ('  File "train.py", line 80, in evaluate\n    out = model(x)\n'
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n", "cuda-out-of-memory/no-grad"),
    ('  File "train.py", line 80, in evaluate\n    with torch.no_grad():\n'
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n", "cuda-out-of-memory/working-set"),
    ("Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; 6.2 GiB reserved in total by PyTorch)\n",
     "cuda-out-of-memory/working-set"),
    ("E tensorflow/stream_executor/cuda/cuda_blas.cc:372] failed to create cublas handle: CUBLAS_STATUS_ALLOC_FAILED\n",
     "cuda-out-of-memory/tensorflow-preallocation"),
    ("Assertion `srcIndex < srcSelectDimSize` failed.\n"
     "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n",
     "cuda-out-of-memory/earlier-fault"),
    ("$ docker run --gpus all img torchrun train.py\nRuntimeError: NCCL error: unhandled system error\n",
     "nccl-system-error/shm"),
    ("RuntimeError: NCCL error: unhandled system error\n", "nccl-system-error/network"),
    ('  File "train.py", line 301, in save_checkpoint\n    torch.save(state, path)\n'
     "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=BROADCAST, "
     "Timeout(ms)=600000) ran for 600021 milliseconds before timing out.\n", "nccl-timeout/long-step"),
    ("[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, "
     "Timeout(ms)=600000) ran for 600021 milliseconds before timing out.\n", "nccl-timeout/ranks-diverged"),
    ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with "
     "shape[64,256,56,56]\n", "cuda-out-of-memory/working-set"),
    ("INFO:faster_whisper:Processing audio\nCould not locate cudnn_ops64_9.dll. Please make sure it is in your "
     "library path!\n", "cudnn-library-not-found/ctranslate2"),
    ("Could not load library cudnn_ops_infer64_8.dll. Error code 126\n", "cudnn-library-not-found/program-not-named"),
    ("ai.onnxruntime.OrtException: FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: "
     "libcublas.so.11: cannot open shared object file\n\tat ai.onnxruntime.OrtSession.addCUDA(OrtSession.java:768)\n",
     "onnxruntime-cuda-provider/linux-loader-path"),
])
def test_the_evidence_in_the_log_ranks_the_causes(log, top):
    assert explain(log).top == top


def test_a_standalone_ctranslate2_log_gets_no_torch_advice():
    text = _text("Standalone Faster-Whisper r145.1 running on: CUDA\n"
                 "Could not load library cudnn_ops_infer64_8.dll. Error code 126\n")
    assert "CTranslate2" in text
    assert "import torch" not in text and "nvidia-cudnn-cu12==" not in text and "ONNX Runtime" not in text


def test_onnxruntime_is_named_for_a_cudnn_dll_only_with_its_evidence():
    ids = [m.signature.id for m in explain("Could not load library cudnn_cnn_infer64_8.dll. Error code 126\n").matches]
    assert ids == ["cudnn-library-not-found"]
    ids = [m.signature.id for m in explain("onnxruntime.capi.onnxruntime_pybind11_state.Fail\n"
                                           "Could not load library cudnn_cnn_infer64_8.dll. Error code 126\n").matches]
    assert ids[0] == "onnxruntime-cudnn8-dll"


def test_a_linux_onnxruntime_log_gets_no_windows_dll_advice():
    text = _text("FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: "
                 "cannot open shared object file: No such file or directory\n")
    assert "where cudnn64" not in text and "ldd" in text


def test_a_fix_is_never_listed_as_a_dead_end_and_no_text_points_at_an_absent_diagnosis():
    for signature in KNOWLEDGE.signatures:
        for text in signature.dead_ends:
            assert "not a dead end" not in text and "is the fix here" not in text, signature.id
        for text in (signature.root_cause, *signature.workarounds, *signature.dead_ends):
            assert "diagnosis above" not in text, signature.id


def test_every_cause_feature_is_one_the_evidence_extractor_knows():
    from torchlint.explain.evidence import FEATURE_NAMES

    for signature in KNOWLEDGE.signatures:
        for cause in signature.causes:
            assert set(cause.when) | set(cause.unless) <= set(FEATURE_NAMES), (signature.id, cause.id)


@pytest.mark.parametrize("log, feature", [
    ('  File "/srv/app/train.py", line 12, in validate\n', "frame:evaluation"),
    ("expr=cudnnBatchNormalizationForwardTraining(handle)\n", "call:batchnorm"),
    ("C:\\Users\\me\\venv\\lib\\site-packages\\ctranslate2\\__init__.py\n", "product:ctranslate2"),
    ("C:\\Users\\me\\venv\\lib\\site-packages\\ctranslate2\\__init__.py\n", "os:windows"),
    ("\tat ai.onnxruntime.OrtSession.run(OrtSession.java:301)\n", "runtime:java"),
    ("docker run --shm-size=1g image\n", "container"),
    ("    num_rendered, color = _C.rasterize_gaussians(*args)\n", "call:extension"),
    ("--finetuning_type lora --lora_target q_proj,v_proj\n", "adapter"),
    ("module 'jaxlib.xla_extension' has no attribute 'GpuAllocatorConfig'\n", "api-mismatch"),
    ("Found cuDNN version 8907, but JAX was built against version 9100, which is newer.\n", "library-older"),
    ("(on host): systemctl daemon-reload\n", "long-running"),
    ("Generating train split: 2230000 examples [29:59, 1466.92 examples/s]\n", "data-preparation"),
    ("NCCL WARN Error while creating shared memory segment /dev/shm/nccl-x\n", "shm"),
])
def test_evidence_features(log, feature):
    assert feature in extract(log).features


def test_gpu_names_are_matched_whole():
    gpus = extract("GPU 0: NVIDIA GeForce GTX 960M\n").facts.gpus
    assert [(gpu.name, gpu.capability) for gpu in gpus] == [("NVIDIA GeForce GTX 960M", "5.0")]
    assert [gpu.name for gpu in extract("a GeForce GTX 1050 Ti.\n").facts.gpus] == ["GeForce GTX 1050 Ti"]


def test_the_kernel_diagnosis_uses_the_arch_list_the_wheel_ships():
    explanation = explain("torch 2.8.0+cu128\nNVIDIA GeForce GTX 1050 with CUDA capability sm_61 is not compatible "
                          "with the current PyTorch installation.\n")
    assert explanation.top == "diag:kernels"
    diagnosis = explanation.diagnoses[0]
    assert "GTX 1050 (sm_61)" in diagnosis.cause and "sm_70 sm_75" in diagnosis.cause
    assert "whl/cu126" in diagnosis.advice


def test_an_old_release_is_judged_from_its_cited_row():
    explanation = explain("torch 1.10.2+cu102\nGPU 0: NVIDIA GeForce RTX 3090\n"
                          "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    diagnosis = explanation.diagnoses[0]
    assert diagnosis.kind == "kernels" and "sm_37 sm_50 sm_60 sm_70" in diagnosis.cause
    assert "github.com/pytorch/builder/blob/" in diagnosis.cause and "whl/cu113" in diagnosis.advice


@pytest.mark.parametrize("log, shipped, advice", [
    # the 2.6 wheel on PyPI (cu124) ships sm_50-sm_90: a K80 has nothing; of 2.6's other variants CUDA 12.6
    # cannot build sm_37 at all, so only cu118 (no row) is left to try
    ("torch 2.6.0+cu124\nGPU 0: Tesla K80\n"
     "RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
     "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90", "torch==2.6.0 --index-url https://download.pytorch.org/whl/cu118"),
    # the CUDA 13 wheels of 2.11-2.13 start at sm_75; Volta is out
    ("torch 2.13.0+cu130\nTesla V100-SXM2-32GB with CUDA capability sm_70 is not compatible with the current "
     "PyTorch installation.\n", "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120", "previous-versions"),
])
def test_the_kernel_diagnosis_uses_the_arch_list_read_from_the_pypi_wheel(log, shipped, advice):
    diagnosis = explain(log).diagnoses[0]
    assert diagnosis.kind == "kernels" and shipped in diagnosis.cause
    assert "read with cuobjdump from the PyPI wheel torch-" in diagnosis.cause and advice in diagnosis.advice


def test_a_gpu_the_pypi_wheel_ships_for_gets_no_kernel_diagnosis():
    explanation = explain("torch 2.6.0+cu124\nGPU 0: NVIDIA GeForce GTX 1080\n"
                          "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    assert all(diagnosis.kind != "kernels" for diagnosis in explanation.diagnoses)


def test_json_output_carries_the_top_explanation_and_the_ranked_causes(tmp_path, capsys):
    import json

    from torchlint.cli import main

    log = tmp_path / "crash.log"
    log.write_text('  File "train.py", line 80, in validate\n'
                   "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert main(["explain", str(log), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["top"] == "cuda-out-of-memory/no-grad" and data["gpu_claim"] is True
    causes = data["matches"][0]["causes"]
    assert causes[0]["id"] == "no-grad" and causes[0]["supported_by"] == ["frame:evaluation"]
    assert "torch.no_grad()" in data["matches"][0]["workarounds"][0]


def test_a_hip_invalid_device_function_is_rocm_not_a_cuda_kernel_image_problem():
    explanation = explain("RuntimeError: HIP error: invalid device function\n"
                          "For debugging consider passing AMD_SERIALIZE_KERNEL=3\n")
    assert [m.signature.id for m in explanation.matches] == ["rocm-no-kernel"]
    assert explain("RuntimeError: CUDA error: invalid device function\n").matches[0].signature.id == "no-kernel-image"


@pytest.mark.parametrize("log, top", [
    ('docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n',
     "container-gpu-runtime/toolkit-missing"),
    ("It worked for days; then after systemctl daemon-reload on the host:\n"
     "root@0c1:/# nvidia-smi\nFailed to initialize NVML: Unknown Error\n", "container-gpu-runtime/devices-lost"),
    ("Backend 'cuda' failed to initialize: Found cuSOLVER version 11002, but JAX was built against version 11401, "
     "which is newer.\n", "jax-cuda-backend/libraries-too-old"),
    ("  File \"/srv/ext/ops.py\", line 9, in forward\n    out = _C.fused_gather(x, idx)\n"
     "RuntimeError: CUDA error: misaligned address\n", "cuda-misaligned-address/custom-kernel"),
])
def test_causes_of_the_new_families_follow_the_evidence(log, top):
    assert explain(log).top == top
