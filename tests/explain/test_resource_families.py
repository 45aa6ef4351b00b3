"""Resource failures a log names without any framework: cudaErrorLaunchOutOfResources printed by a plain CUDA
program's own check macro is answered by its cause (registers and shared memory per block), and neighbouring
codes and toolkits are not read as it (the framework cases are in test_framework_families.py)."""

from __future__ import annotations

import json


def _explain(run_explain, log):
    return json.loads(run_explain(["--format", "json"], stdin=log).stdout)


def test_a_plain_cuda_program_out_of_launch_resources(run_explain):
    log = ("Using device 0: NVIDIA GeForce RTX 3080\n[CHECK FAILED] kernels.cu line 212\n"
           "too many resources requested for launch\n")
    assert _explain(run_explain, log)["top"] == "cuda-launch-config/launch-out-of-resources"


def test_a_launch_with_a_bad_configuration_is_not_read_as_registers(run_explain):
    data = _explain(run_explain, "RuntimeError: CUDA error: invalid configuration argument\n")
    assert data["matches"][0]["id"] == "cuda-launch-config"
    assert not data["top"].endswith("/launch-out-of-resources")


def test_a_cublas_failure_under_cuda_11_is_not_an_old_toolkit(run_explain):
    log = ("torch 2.1.0+cu118, CUDA 11.8\nRuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling "
           "`cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`\n")
    assert "toolkit-older-than-gpu" not in _explain(run_explain, log)["top"]
