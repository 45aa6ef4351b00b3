"""Every signature has a real-looking sample log; each sample's best match is its own signature."""

import re
from pathlib import Path

import pytest

from torchlint.doctor.check import CHECK_NAMES
from torchlint.doctor.smoke import GPU_PROGRAMS
from torchlint.explain.knowledge import KnowledgeError, load_knowledge, match, parse_knowledge

KNOWLEDGE = load_knowledge()
IDS = [signature.id for signature in KNOWLEDGE.signatures]
SAMPLES = Path(__file__).resolve().parent / "samples"

REQUIRED = {
    "CUDNN_STATUS_EXECUTION_FAILED": "cudnn-execution-failed",
    "CUDNN_STATUS_NOT_SUPPORTED cudnnRNNBackwardData": "cudnn-rnn-projected-double-backward",
    "CUDNN_STATUS_NOT_INITIALIZED": "cudnn-not-initialized",
    "CUDNN_STATUS_INTERNAL_ERROR": "cudnn-internal-error",
    "an illegal instruction was encountered": "cuda-illegal-instruction",
    "an illegal memory access was encountered": "cuda-illegal-memory-access",
    "no kernel image is available for execution on the device": "no-kernel-image",
    "device-side assert triggered": "device-side-assert",
    "CUDA out of memory": "cuda-out-of-memory",
    "CUBLAS_STATUS_EXECUTION_FAILED": "cublas-execution-failed",
    "Failed to call ThenRnnForward": "tensorflow-cudnn-rnn",
    "cudnn_cnn_infer64_8.dll": "onnxruntime-cudnn8-dll",
    "Expected all tensors to be on the same device": "tensors-on-different-devices",
    "NCCL timeout": "nccl-timeout",
    "derivative for '_cudnn_rnn_backward' is not implemented": "cudnn-rnn-double-backward",
    "Attempting to unscale FP16 gradients": "amp-fp16-gradients",
    "value cannot be converted to type at::Half without overflow": "half-overflow",
    "Bfloat16 is only supported on GPUs with compute capability of at least 8.0": "bf16-unsupported",
    "CUDA error: misaligned address": "cuda-misaligned-address",
    "CUDNN_STATUS_BAD_PARAM": "cudnn-bad-param",
    "Expected to have finished reduction in the prior iteration": "ddp-unused-parameters",
    "Expected to mark a variable ready only once": "ddp-reentrant-checkpoint",
    "CUBLAS_STATUS_NOT_SUPPORTED": "cublas-not-supported",
    "Unable to initialize backend 'cuda'": "jax-cuda-backend",
    "hipErrorNoBinaryForGpu / HIP error: invalid device function": "rocm-no-kernel",
    "could not select device driver / Failed to initialize NVML: Unknown Error": "container-gpu-runtime",
}


def test_the_required_signatures_are_covered():
    assert set(REQUIRED.values()) <= set(IDS)


def test_every_signature_has_a_sample_and_every_sample_a_signature():
    assert sorted(p.stem for p in SAMPLES.glob("*.log")) == sorted(IDS)


@pytest.mark.parametrize("signature_id", IDS)
def test_each_sample_matches_its_own_signature_first(signature_id):
    text = (SAMPLES / f"{signature_id}.log").read_text(encoding="utf-8")
    matches = match(text, KNOWLEDGE)
    assert matches, f"{signature_id}.log matched nothing"
    assert matches[0].signature.id == signature_id, [m.signature.id for m in matches]


# Samples that legitimately mention a second, more general signature: the TensorFlow log carries
# cuDNN's INTERNAL_ERROR status; the projected-LSTM log carries the generic NOT_SUPPORTED status.
ALSO_MATCHES = {
    "tensorflow-cudnn-rnn": {"cudnn-internal-error"},
    "cudnn-rnn-projected-double-backward": {"cudnn-not-supported"},
    # the provider DLL failed to load because of it; the generic cuDNN-library entry names no product
    "onnxruntime-cudnn8-dll": {"onnxruntime-cuda-provider", "cudnn-library-not-found"},
    "amp-cudnn-failure": {"cudnn-execution-failed"},
    # the CUDA error the program saw, and the driver's Xid report of the same fault in the kernel log
    "gpu-hardware-fault": {"gpu-xid-error"},
    # numba names the toolkit library it could not load; the generic CUDA-library entry matches the loader line
    "numba-nvvm-not-found": {"cuda-library-not-found"},
    # the kernel's assert is the cause; "device-side assert triggered" the report of it
    "bce-input-out-of-range": {"device-side-assert"},
    # a GPU used by two ranks is the cause; NCCL's ncclInvalidUsage the report of it
    "nccl-duplicate-gpu": {"nccl-invalid-usage"},
    # ONNX Runtime's provider loads the same cuDNN DLL; Paddle's own message names the product that failed
    "paddle-library-not-configured": {"onnxruntime-cuda-provider"},
    # the bus error (shared memory) is the cause; the worker's death the report of it
    "dataloader-shm-exhausted": {"dataloader-worker-killed"},
    # a store host no rank can resolve is the cause; the store's timeout the report of it
    "distributed-host-unresolved": {"distributed-store-timeout"},
    # a Warp release older than the driver is the cause; "API call is not supported" (36) what the driver says of it
    "warp-driver-entry-point": {"cuda-driver-too-old"},
    # a package's own entry for its compiled module ranks above the generic one, which also reads the import
    "apex-extension-not-built": {"cuda-extension-not-built"},
    "mmcv-ops-not-built": {"cuda-extension-not-built"},
}


@pytest.mark.parametrize("signature_id", IDS)
def test_samples_do_not_match_other_signatures_wrongly(signature_id):
    text = (SAMPLES / f"{signature_id}.log").read_text(encoding="utf-8")
    others = {m.signature.id for m in match(text, KNOWLEDGE)} - {signature_id}
    assert others == ALSO_MATCHES.get(signature_id, set())


def test_more_specific_signatures_outrank_the_general_ones_they_contain():
    by_id = {s.id: s for s in KNOWLEDGE.signatures}
    for specific, general in (("cudnn-rnn-projected-double-backward", "cudnn-not-supported"),
                              ("tensorflow-cudnn-rnn", "cudnn-internal-error")):
        assert by_id[specific].specificity > by_id[general].specificity


@pytest.mark.parametrize("signature", KNOWLEDGE.signatures, ids=IDS)
def test_entries_are_complete_and_cross_references_exist(signature):
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", signature.id)
    assert signature.title and signature.root_cause and signature.workarounds
    assert 0 <= signature.specificity <= 100
    for code in signature.rules:
        assert code in KNOWLEDGE.rule_names
    smoke_names = {f"smoke: {program.name}" for program in GPU_PROGRAMS}
    for check in signature.doctor_checks:
        assert check in CHECK_NAMES or check in smoke_names, check
    for url in (signature.docs, *signature.sources):
        assert url == "" or url.startswith("https://")


def test_asynchronous_advice_sets_cuda_launch_blocking_before_cuda_starts():
    note = KNOWLEDGE.asynchronous_note
    assert "CUDA_LAUNCH_BLOCKING=1" in note and "before" in note and "first" in note
    asynchronous = {s.id for s in KNOWLEDGE.signatures if s.asynchronous}
    assert {"cudnn-execution-failed", "cuda-illegal-memory-access", "device-side-assert",
            "cublas-execution-failed", "cuda-illegal-instruction"} <= asynchronous
    assert "tensors-on-different-devices" not in asynchronous


def test_tl004_is_referenced_by_both_rnn_double_backward_entries():
    by_id = {s.id: s for s in KNOWLEDGE.signatures}
    assert "TL004" in by_id["cudnn-rnn-double-backward"].rules
    assert "TL004" in by_id["cudnn-rnn-projected-double-backward"].rules
    assert KNOWLEDGE.rule_names["TL004"] == "cudnn-rnn-double-backward"


def test_an_unrelated_log_matches_nothing():
    assert match("Epoch 1/10\nloss: 0.4321 - accuracy: 0.8765\nSaved checkpoint.\n", KNOWLEDGE) == []


def test_match_reports_line_and_excerpt():
    found = match("step 1\nstep 2\nRuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED\n", KNOWLEDGE)
    assert found[0].line == 3 and found[0].excerpt == "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED"


@pytest.mark.parametrize(
    "document, words",
    [
        ({"signature": [{"id": "x"}]}, ["title"]),
        ({"signature": [{"id": "x", "title": "t", "regex": "(", "anchors": ["("], "root_cause": "r", "docs": "",
                         "workarounds": [], "dead_ends": [], "rules": [], "doctor_checks": [], "sources": [],
                         "specificity": 1, "asynchronous": False}]}, ["bad regex"]),
    ],
)
def test_malformed_knowledge_is_rejected(document, words):
    with pytest.raises(KnowledgeError) as caught:
        parse_knowledge(document)
    for word in words:
        assert word in str(caught.value)
