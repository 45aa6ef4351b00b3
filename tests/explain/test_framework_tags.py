"""Every piece of advice, dead end and docs link in the knowledge base that names a framework is tagged
with it (the [[framework]] table's advice pattern finds it), so a log of any other framework never gets it;
frameworks torchlint has no advice for (PaddlePaddle, MXNet) and lines TensorFlow and JAX share
(stream_executor) get framework-neutral advice only. Checked over every entry, then through the CLI."""

from __future__ import annotations

import json
import re

import pytest

from torchlint.explain.knowledge import load_knowledge

# How advice names a framework, written here rather than taken from signatures.toml's [[framework]] table,
# so that the test does not share the blind spots of the code it checks.
NAMES = {
    "torch": re.compile(r"\btorch\b|PyTorch|pytorch\.org|\bTORCH_|\bPYTORCH_"),
    "tensorflow": re.compile(r"(?i:tensorflow)|\btf\.[a-z]|\bkeras\b|\bTF_[A-Z]"),
    "jax": re.compile(r"\bJAX\b|\bjax(?:lib)?\b|XLA_PYTHON_CLIENT"),
    "onnxruntime": re.compile(r"ONNX Runtime|onnxruntime"),
    "ctranslate2": re.compile(r"(?i:ctranslate2)|faster-whisper"),
    "paddle": re.compile(r"(?i:paddle)"),
    "mxnet": re.compile(r"(?i:mxnet)"),
    "triton": re.compile(r"(?i:\btriton\b)"),
}
SHARED_PRINTER = "tensorflow-or-jax"


def _advice_texts():
    for signature in load_knowledge().signatures:
        texts = list(signature.workarounds) + list(signature.dead_ends) + [signature.docs]
        texts += [text for cause in signature.causes for text in cause.workarounds]
        yield from ((signature.id, text) for text in texts if text)


ADVICE = list(_advice_texts())


def _framework(name):
    return next(framework for framework in load_knowledge().frameworks if framework.name == name)


def test_the_framework_table_has_every_named_framework_and_the_shared_printer():
    names = {framework.name for framework in load_knowledge().frameworks}
    assert set(NAMES) | {SHARED_PRINTER} <= names
    assert _framework(SHARED_PRINTER).advice is None


@pytest.mark.parametrize("name", sorted(NAMES))
def test_every_advice_naming_a_framework_is_tagged_with_it(name):
    untagged = [(sid, text) for sid, text in ADVICE
                if NAMES[name].search(text) and not _framework(name).advice.search(text)]
    assert not untagged


@pytest.mark.parametrize("name", sorted(NAMES))
def test_a_log_of_one_framework_keeps_no_advice_naming_only_others(name):
    knowledge, features = load_knowledge(), {_framework(name).feature}
    kept = [(sid, text) for sid, text in ADVICE
            if any(p.search(text) for p in NAMES.values()) and not NAMES[name].search(text)
            and knowledge.fits(text, features)]
    assert not kept


def test_a_line_tensorflow_and_jax_share_keeps_only_neutral_advice():
    knowledge, features = load_knowledge(), {_framework(SHARED_PRINTER).feature}
    kept = [(sid, text) for sid, text in ADVICE
            if any(p.search(text) for p in NAMES.values()) and knowledge.fits(text, features)]
    assert not kept
    assert any(knowledge.fits(text, features) for _, text in ADVICE)


LOGS = {
    # PaddlePaddle's enforce format for a CUDA status (paddle/phi/core/enforce.h), as Python raises it
    "paddle-illegal-address": (
        "Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    loss.backward()\n"
        "OSError: (External) CUDA error(700), an illegal memory access was encountered.\n"
        "  [Hint: 'cudaErrorIllegalAddress'. The device encountered a load or store instruction on an invalid "
        "memory address.]\n", "paddle", "cuda-illegal-memory-access"),
    "paddle-oom-named": (
        "W1203 10:11:12.000000  4242 gpu_resources.cc:61] Please NOTE: device: 0, GPU Compute Capability: 8.6\n"
        "  File \"/usr/lib/python3.10/site-packages/paddle/fluid/dygraph/varbase_patch_methods.py\", line 40\n"
        "RuntimeError: CUDA error: out of memory\n", "paddle", None),
    "mxnet-illegal-address": (
        "mxnet.base.MXNetError: [10:12:13] src/operator/nn/./cudnn/cudnn_convolution-inl.h:112: Check failed: "
        "e == cudaSuccess || e == cudaErrorCudartUnloading: CUDA: an illegal memory access was encountered\n",
        "mxnet", "cuda-illegal-memory-access"),
    # MXNet's pooled storage manager, named by its source path only
    "mxnet-storage-oom": (
        "[10:12:13] src/storage/./pooled_storage_manager.h:161: cudaMalloc retry failed: out of memory\n"
        "Stack trace:\n  [bt] (0) /usr/local/lib/python3.8/dist-packages/mxnet/libmxnet.so(+0x307d3b)\n",
        "mxnet", "cuda-out-of-memory"),
    # Numba's driver wrapper (numba/cuda/cudadrv/driver.py), which names the call and the code, not the package
    "numba-launch-illegal-address": (
        "Traceback (most recent call last):\n  File \"sim.py\", line 41, in <module>\n    step[blocks, threads](d_x)\n"
        "CudaAPIError: [700] Call to cuLaunchKernel results in CUDA_ERROR_ILLEGAL_ADDRESS\n",
        "numba", "cuda-illegal-memory-access"),
    # a hand-written Triton kernel run on its own (triton.runtime), no torch frame in the log
    "triton-kernel-illegal-address": (
        "  File \"/home/u/.local/lib/python3.10/site-packages/triton/runtime/jit.py\", line 345, in run\n"
        "    kernel.run(grid_0, grid_1, grid_2, kernel.num_warps)\n"
        "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered\n",
        "triton", "cuda-illegal-memory-access"),
    "stream-executor-cudnn-handle": (
        "E1203 10:13:14.000000 140 cuda_dnn.cc:361] Could not create cudnn handle: CUDNN_STATUS_ALLOC_FAILED\n",
        SHARED_PRINTER, "tensorflow-cudnn-init"),
    "stream-executor-conv-algorithm": (
        "UnknownError: Failed to get convolution algorithm. This is probably because cuDNN failed to "
        "initialize, so try looking to see if a warning log message was printed above.\n",
        SHARED_PRINTER, "tensorflow-cudnn-init"),
}


def _advice_of(data):
    advice = [diagnosis["advice"] for diagnosis in data["diagnoses"]]
    for found in data["matches"]:
        advice += found["workarounds"] + found["dead_ends"] + ([found["docs"]] if found["docs"] else [])
        advice += [w for cause in found.get("causes") or [] for w in cause.get("workarounds", [])]
    return advice


@pytest.mark.parametrize("name", sorted(LOGS))
def test_a_log_gets_no_advice_for_another_framework(name, run_explain):
    log, framework, expected = LOGS[name]
    data = json.loads(run_explain(["--format", "json"], stdin=log).stdout)
    if expected:
        assert data["top"] == expected or data["matches"][0]["id"] == expected
    assert data["matches"], name
    named = {other for text in _advice_of(data) for other, pattern in NAMES.items()
             if other != framework and pattern.search(text)}
    assert not named, (named, _advice_of(data))
    assert _advice_of(data)  # neutral advice is still given


def test_a_log_that_names_no_framework_gets_only_the_advice_that_names_none(run_explain):
    bare = "CUDNN_STATUS_INTERNAL_ERROR\n"
    data = json.loads(run_explain(["--format", "json"], stdin=bare).stdout)
    advice = [text for found in data["matches"] for text in found["workarounds"] + found["dead_ends"]]
    assert advice and not any(re.search(r"\btorch\b|PyTorch|[Tt]ensor[Ff]low|\bJAX\b", text) for text in advice)
    # torch's own words name it: its allocator's message keeps torch's advice
    torch_oom = "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity)\n"
    data = json.loads(run_explain(["--format", "json"], stdin=torch_oom).stdout)
    assert "product:torch" in data["features"]
    assert any("PYTORCH_CUDA_ALLOC_CONF" in text for text in data["matches"][0]["workarounds"])
