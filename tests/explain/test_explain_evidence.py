"""explain reads the environment a log states and reasons with the doctor's tables."""

import json
import textwrap

import pytest


def explain_json(run_explain, log):
    out = run_explain(["--format", "json"], stdin=textwrap.dedent(log))
    assert out.returncode in (0, 1) and not out.stderr, out.stderr
    return json.loads(out.stdout)


def test_a_gpu_newer_than_the_cuda_build_is_named_with_its_evidence(run_explain):
    data = explain_json(run_explain, """\
        If I enable CUDA, there is always an error.
        my environment: pytorch: 1.5.1+cu101
        it is GeForce RTX 3080 Ti.
        RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED
        """)
    diagnosis = data["diagnoses"][0]
    assert diagnosis["kind"] == "kernels"
    assert "sm_86" in diagnosis["cause"] and "CUDA 10.1" in diagnosis["cause"] and "CUDA >= 11.0" in diagnosis["advice"]
    assert {(e["fact"], e["line"]) for e in diagnosis["evidence"]} >= {("torch", 2), ("gpu", 3)}
    assert data["matches"][0]["id"] == "cudnn-execution-failed"


def test_text_rendering_puts_the_diagnosis_and_its_evidence_first(run_explain):
    out = run_explain([], stdin="torch==1.5.1+cu101\nGPU 0: NVIDIA GeForce RTX 3090\n"
                                "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n")
    assert out.returncode == 0
    text = out.stdout
    assert text.index("Diagnosis from the evidence") < text.index("[cudnn-execution-failed]")
    assert "evidence: " in text and "line 2" in text


def test_a_release_whose_newest_build_predates_the_gpu(run_explain):
    # torch 0.4.1 never had a build newer than CUDA 9.2; an RTX 3090 needs CUDA 11.
    data = explain_json(run_explain, """\
        查看torch版本： 0.4.1
        GPU名称： NVIDIA GeForce RTX 3090
        cuDNNerror:CUDNN_STATUS_EXECUTION_FAILED
        """)
    assert data["diagnoses"][0]["kind"] == "kernels" and "torch 0.4" in data["diagnoses"][0]["cause"]


def test_the_arch_list_torch_printed_is_evidence(run_explain):
    data = explain_json(run_explain, """\
        NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.
        The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.
        RuntimeError: CUDA error: no kernel image is available for execution on the device
        """)
    assert data["diagnoses"][0]["kind"] == "kernels" and "sm_120" in data["diagnoses"][0]["cause"]
    assert data["matches"][0]["id"] == "no-kernel-image"


def test_a_driver_older_than_torchs_cuda(run_explain):
    data = explain_json(run_explain, """\
        | NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |
        torch 2.1.0+cu121
        RuntimeError: The NVIDIA driver on your system is too old (found version 11040).
        """)
    assert data["diagnoses"][0]["kind"] == "driver" and "525.60.13" in data["diagnoses"][0]["cause"]


def test_malformed_cuda_visible_devices_is_the_cause(run_explain):
    data = explain_json(run_explain, """\
        os.environ["CUDA_VISIBLE_DEVICES"] = "[1,2,3]"
        RuntimeError: No CUDA GPUs are available
        """)
    assert data["diagnoses"][0]["kind"] == "visible-devices"
    assert "[1,2,3]" in data["diagnoses"][0]["cause"] and "no GPU" in data["diagnoses"][0]["cause"]


def test_wsl2_loader_failure(run_explain):
    data = explain_json(run_explain, """\
        Hi, I am using WSL2 with Python 3.11
        Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file: No such file or directory
        """)
    assert data["diagnoses"][0]["kind"] == "wsl" and "/usr/lib/wsl/lib" in data["diagnoses"][0]["advice"]


def test_nccl_reporting_an_illegal_memory_access_ranks_after_it(run_explain):
    data = explain_json(run_explain, """\
        [E ProcessGroupNCCL.cpp:828] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800581 milliseconds before timing out.
        [E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out.
        RuntimeError: CUDA error: an illegal memory access was encountered
        """)
    ids = [m["id"] for m in data["matches"]]
    assert ids[0] == "cuda-illegal-memory-access" and "nccl-timeout" in ids


def test_conda_installs_do_not_call_the_cudatoolkit_a_dead_end(run_explain):
    log = """\
        [conda] cudatoolkit               10.1.243             h6bb024c_0
        RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR
        """
    conda = explain_json(run_explain, log)
    pip = explain_json(run_explain, "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR\n")
    assert conda["conda"] is True and pip["conda"] is False
    assert any("CUDA toolkit" in d for d in pip["matches"][0]["dead_ends"])
    assert not any("CUDA toolkit" in d for d in conda["matches"][0]["dead_ends"])
    assert "is torch's CUDA runtime" in run_explain([], stdin=textwrap.dedent(log)).stdout


def test_environment_evidence_never_explains_an_error_it_cannot_cause(run_explain):
    # A bad label is a bad label on any GPU: the old build is not offered as the cause.
    data = explain_json(run_explain, """\
        torch==1.5.1+cu101
        GPU 0: NVIDIA GeForce RTX 3090
        Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.
        RuntimeError: CUDA error: device-side assert triggered
        """)
    assert data["diagnoses"] == [] and data["matches"][0]["id"] == "device-side-assert"


@pytest.mark.parametrize("log", [
    "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    import cv2\n"
    "ModuleNotFoundError: No module named 'cv2'\n",
    "  File \"unipose.py\", line 112, in training\n    input_var = input.cuda()\n"
    "AttributeError: 'int' object has no attribute 'cuda'\n",
    "torch 2.1.0+cu121 on NVIDIA A100-SXM4-80GB, Driver Version: 535.104.05\nEpoch 3: loss 0.12\n",
])
def test_logs_without_a_gpu_failure_claim_nothing(run_explain, log):
    data = explain_json(run_explain, log)
    assert data["matched"] is False and data["diagnoses"] == []


def _repeated_lines(handle):
    lines = ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a "
             "non-contiguous input.\n") * 40 + "".join(f"step {i} loss 0.{i:06d} lr 1e-4 grad_norm {i % 97}\n"
                                                       for i in range(40))
    for _ in range(100_000_000 // len(lines) + 1):
        handle.write(lines)


def _distinct_lines(handle):
    # every line differs (a step counter), so nothing condenses; the error is on the last line
    handle.write("".join(f"epoch {i // 1000} step {i} loss 0.{i:06d} lr 0.0001 grad_norm {i % 977}.25 tokens/s {i % 9000}\n"
                         for i in range(1_300_000)))
    handle.write("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a "
                 "non-contiguous input.\n")


@pytest.mark.parametrize("write", [_repeated_lines, _distinct_lines])
def test_a_100_mb_log_costs_under_five_seconds_of_cpu(tmp_path, run_explain, write):
    import resource

    log = tmp_path / "big.log"
    with open(log, "w") as handle:
        write(handle)
    assert log.stat().st_size >= 95_000_000
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = run_explain([str(log)])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert out.returncode == 0 and "[cudnn-not-supported]" in out.stdout
    assert cpu < 5.0, f"{cpu:.1f} s of CPU for a 100 MB log"


def test_a_library_the_loader_missed_is_put_against_who_needs_it(run_explain):
    # the doctor's runtime tables (torchlint/doctor/runtimes.py) say which cuDNN major onnxruntime-gpu 1.18 needs
    data = explain_json(run_explain, """\
        [pip3] onnxruntime-gpu==1.18.0
        [E:onnxruntime:Default, provider_bridge_ort.cc:1548] LoadLibrary failed with error 126 "" when trying to load cudnn64_9.dll
        """)
    diagnosis = data["diagnoses"][0]
    assert diagnosis["kind"] == "loader" and "cuDNN 9" in diagnosis["cause"] and "uses cuDNN 8" in diagnosis["cause"]
    assert any(e["fact"] == "package" and e["line"] == 1 for e in diagnosis["evidence"])
