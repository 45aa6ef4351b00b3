"""Families of resource and build failures, each written from the message its source prints (Triton's
OutOfResources, cudaErrorLaunchOutOfResources, CTranslate2's CUDA_CHECK, torch.utils.cpp_extension's
no-GPU notice, ptxas, cuBLAS under a pre-11 toolkit), fed through the real CLI: the first explanation is the
family and the cause the log supports, and the advice names no other framework than the log's."""

from __future__ import annotations

import json

import pytest

from test_framework_tags import NAMES, _advice_of

CASES = {
    "triton-shared-memory": (
        "  File \"/opt/conda/lib/python3.11/site-packages/triton/compiler/compiler.py\", line 370, in _init_handles\n"
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 196608, Hardware limit: "
        "101376. Reducing block sizes or `num_stages` may help.\n",
        "triton-out-of-resources", "torch"),
    "triton-shared-memory-old-wording": (
        "OutOfResources: out of resource: shared memory, Required: 81920, Hardware limitation: 65536. "
        "Reducing block sizes or `num_stages` may help.\n",
        "triton-out-of-resources", "torch"),
    "torch-extension-launch-resources": (
        "  File \"/home/u/proj/ops/render.py\", line 51, in forward\n    out = _C.trace_rays(grid, rays)\n"
        "RuntimeError: CUDA error: too many resources requested for launch\n"
        "CUDA kernel errors might be asynchronously reported at some other API call.\n",
        "cuda-launch-config/launch-out-of-resources", "torch"),
    "plain-cuda-launch-resources": (
        "Using device 0: NVIDIA GeForce RTX 3080\n[CHECK FAILED] kernels.cu line 212\n"
        "too many resources requested for launch\n",
        "cuda-launch-config/launch-out-of-resources", "none"),
    "ctranslate2-oom-lower-case": (
        "  File \"transcribe.py\", line 9, in <module>\n    segments, info = model.transcribe(audio)\n"
        "RuntimeError: Cuda failed with error out of memory\n",
        "cuda-out-of-memory/ctranslate2-model-size", "ctranslate2"),
    "extension-built-in-container": (
        "Step 7/9 : RUN python setup.py build_ext --inplace\n"
        "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\nbuilding 'sparse_ops' extension\n",
        "extension-built-without-gpu/container-without-gpu-runtime", "torch"),
    "jax-old-ptxas": (
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: ptxas exited with non-zero error code 65280, output: "
        "ptxas fatal   : Value 'sm_89' is not defined for option 'gpu-name'\n",
        "cuda-ptx-jit/ptxas-older-than-target", "jax"),
    "tensorflow-cublas-cuda9": (
        "Using tensorflow-gpu 1.12.0 with CUDA 9.0 and cuDNN 7.1 on an RTX 3070\n"
        "E tensorflow/stream_executor/cuda/cuda_blas.cc:652] failed to run cuBLAS routine cublasSgemm_v2: "
        "CUBLAS_STATUS_EXECUTION_FAILED\n",
        "cublas-execution-failed/toolkit-older-than-gpu", "tensorflow"),
}


def _explain(run_explain, log):
    return json.loads(run_explain(["--format", "json"], stdin=log).stdout)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_first_explanation_is_the_family_and_its_cause(name, run_explain):
    log, expected, _ = CASES[name]
    data = _explain(run_explain, log)
    assert data["matches"], name
    assert data["top"] == expected


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_advice_for_another_framework(name, run_explain):
    log, _, framework = CASES[name]
    advice = _advice_of(_explain(run_explain, log))
    assert advice
    if framework != "none":
        named = {other for text in advice for other, pattern in NAMES.items()
                 if other != framework and pattern.search(text) and not NAMES.get(framework, pattern).search(text)}
        assert not named, (named, advice)


def test_a_launch_with_a_bad_configuration_is_not_read_as_registers(run_explain):
    data = _explain(run_explain, "RuntimeError: CUDA error: invalid configuration argument\n")
    assert data["matches"][0]["id"] == "cuda-launch-config"
    assert not data["top"].endswith("/launch-out-of-resources")


def test_a_cublas_failure_under_cuda_11_is_not_an_old_toolkit(run_explain):
    log = ("torch 2.1.0+cu118, CUDA 11.8\nRuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling "
           "`cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`\n")
    assert "toolkit-older-than-gpu" not in _explain(run_explain, log)["top"]
