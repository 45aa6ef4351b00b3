"""`torchlint explain` end to end."""

import json
import re
from pathlib import Path

import pytest

from torchlint.explain.cli import main


def test_reads_a_file_and_prints_the_best_match_first(samples_dir, run_explain):
    out = run_explain([str(samples_dir / "tensorflow-cudnn-rnn.log")])
    assert out.returncode == 0, out.stderr
    first = out.stdout.index("[tensorflow-cudnn-rnn]")
    assert first < out.stdout.index("[cudnn-internal-error]")
    for heading in ("Root cause", "Try first", "Dead ends", "Docs:"):
        assert heading in out.stdout
    assert "Traceback" not in out.stderr


def test_reads_stdin_with_no_argument_and_with_dash(samples_dir, run_explain):
    log = (samples_dir / "device-side-assert.log").read_text()
    for args in ([], ["-"]):
        out = run_explain(args, stdin=log)
        assert out.returncode == 0
        assert "[device-side-assert]" in out.stdout and "CUDA_LAUNCH_BLOCKING=1" in out.stdout
        # a host sync reveals an asynchronous kernel error where it happens; it prevents none
        assert "TL003" not in out.stdout.split("Prevented by", 1)[-1]


def test_json_format(samples_dir, run_explain):
    out = run_explain(["--format", "json", str(samples_dir / "cudnn-rnn-projected-double-backward.log")])
    data = json.loads(out.stdout)
    assert data["matched"] is True
    assert [m["id"] for m in data["matches"]] == ["cudnn-rnn-projected-double-backward", "cudnn-not-supported"]
    assert data["matches"][0]["rules"][0] == {"code": "TL004", "name": "cudnn-rnn-double-backward"}


def test_an_unmatched_log_says_so_and_points_at_doctor(run_explain):
    out = run_explain([], stdin="all good\n")
    assert out.returncode == 1
    assert "No known signature matched" in out.stdout and "torchlint doctor" in out.stdout
    data = json.loads(run_explain(["--format", "json"], stdin="all good\n").stdout)
    assert data["matched"] is False and data["matches"] == [] and data["diagnoses"] == []
    assert "torchlint doctor" in data["hint"]


def test_missing_file_is_a_one_line_usage_error(tmp_path, capsys):
    assert main([str(tmp_path / "nope.log")]) == 2
    captured = capsys.readouterr()
    assert len(captured.err.strip().splitlines()) == 1 and "nope.log" in captured.err


def test_bad_flag_is_a_one_line_usage_error(capsys):
    assert main(["--format", "yaml"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_undecodable_bytes_do_not_crash(tmp_path, capsys):
    log = tmp_path / "binary.log"
    log.write_bytes(b"\xff\xfe garbage \x00 CUDA error: an illegal memory access was encountered\n")
    assert main([str(log)]) == 0
    assert "[cuda-illegal-memory-access]" in capsys.readouterr().out


def test_via_torchlint_explain(samples_dir, run_explain):
    out = run_explain(["explain", str(samples_dir / "nccl-timeout.log")], module=("-m", "torchlint"))
    assert out.returncode == 0 and "[nccl-timeout]" in out.stdout


def test_a_closed_pipe_is_not_an_error(samples_dir, monkeypatch, capsys):
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader (`| head`) has gone
    with open(write_end, "w") as closed_pipe:
        with capsys.disabled():
            monkeypatch.setattr("sys.stdout", closed_pipe)
            code = main([str(samples_dir / "nccl-timeout.log")])
    assert code == 0


# Logs of other frameworks (written for issue 33, not taken from samples/): their advice is theirs, or neutral.
FRAMEWORK_LOGS = Path(__file__).resolve().parent / "frameworks"
TORCH_ADVICE = re.compile(r"\btorch\b|PyTorch|TORCH_|pytorch\.org")


@pytest.mark.parametrize("log, framework, own_advice", [
    ("tensorflow-cudnn-version.log", "TensorFlow", 'pip install "tensorflow[and-cuda]"'),
    ("jax-cudnn-version.log", "JAX", 'pip install -U "jax[cuda12]"'),
    ("onnxruntime-no-libcudnn.log", "onnxruntime", "ONNX Runtime requirements table"),
])
def test_another_frameworks_log_gets_no_torch_advice(run_explain, log, framework, own_advice):
    out = run_explain(["--format", "json", str(FRAMEWORK_LOGS / log)])
    data = json.loads(out.stdout)
    advice = [text for m in data["matches"] for text in m["workarounds"] + m["dead_ends"] + [m["docs"] or ""]]
    assert data["matched"] and own_advice in " ".join(data["matches"][0]["workarounds"])
    # torch may be named only beside the log's own framework ("or `import torch` first")
    assert [text for text in advice if TORCH_ADVICE.search(text) and framework not in text] == []
    assert "nvidia-cudnn-cu12==<the version torch requires>" not in out.stdout
    if framework == "JAX":  # TensorFlow's memory-growth switch is not JAX's
        assert "set_memory_growth" not in out.stdout and "XLA_PYTHON_CLIENT_PREALLOCATE=false" in out.stdout


def test_a_torch_log_keeps_the_torch_cudnn_advice(run_explain):
    log = ("  File \"/venv/lib/python3.11/site-packages/torch/nn/modules/conv.py\", line 456, in _conv_forward\n"
           "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 1, 0) but found runtime "
           "version (8, 9, 2).\n")
    data = json.loads(run_explain(["--format", "json"], stdin=log).stdout)
    assert any("nvidia-cudnn-cu12==" in text for text in data["matches"][0]["workarounds"])


@pytest.mark.parametrize("assertion", [
    "/pytorch/aten/src/ATen/native/cuda/Loss.cu:102: operator(): block: [0,0,0], thread: [32,0,0] "
    "Assertion `input_val >= zero && input_val <= one` failed.",
    "/pytorch/aten/src/THCUNN/generic/BCECriterion.cu:42: Acc_t bce_updateOutput_no_reduce_functor<Dtype, Acc_t>"
    "::operator()(const Dtype &, const Dtype &) [with Dtype = float, Acc_t = float]: block: [0,0,0], "
    "thread: [3,0,0] Assertion `input >= 0. && input <= 1.` failed.",
])
def test_a_bce_range_assert_is_about_the_input_not_the_target(run_explain, assertion):
    log = (assertion + "\nTraceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n"
           "    loss = criterion(outputs, labels)\nRuntimeError: CUDA error: device-side assert triggered\n")
    data = json.loads(run_explain(["--format", "json"], stdin=log).stdout)
    first = data["matches"][0]
    assert data["top"] == "bce-input-out-of-range"
    assert "INPUT" in first["root_cause"] and "not the target" in first["root_cause"]
    assert "BCEWithLogitsLoss" in first["workarounds"][0] and "sigmoid" in first["workarounds"][0]
    assert "Loss.cu means loss targets" not in json.dumps(data)


def test_the_driver_too_old_warning_without_the_is_matched_and_diagnosed(run_explain):
    log = ("torch 2.1.0+cu121\n/usr/lib/python3/dist-packages/torch/cuda/__init__.py:138: UserWarning: CUDA "
           "initialization: NVIDIA driver on your system is too old (found version 11040). Please update your GPU "
           "driver\n  return torch._C._cuda_getDeviceCount() > 0\n")
    data = json.loads(run_explain(["--format", "json"], stdin=log).stdout)
    assert data["matches"][0]["id"] == "cuda-driver-too-old"
    assert data["top"] == "diag:driver" and "CUDA <= 11.4" in data["diagnoses"][0]["cause"]


def test_all_devices_busy_is_exclusive_compute_mode(run_explain):
    log = ("  File \"run.py\", line 9, in <module>\n    x = torch.zeros(4, device=\"cuda\")\n"
           "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable\n")
    data = json.loads(run_explain(["--format", "json"], stdin=log).stdout)
    assert data["top"] == "cuda-device-busy" and "Exclusive_Process" in data["matches"][0]["root_cause"]


@pytest.mark.parametrize("line", [
    "RuntimeError: DataLoader worker (pid 231) is killed by signal: Bus error. It is possible that dataloader's "
    "workers are out of shared memory. Please try to raise your shared memory limit.",
    "RuntimeError: unable to write to file </torch_1487_3215480217>: No space left on device (28)",
    "OSError: [Errno 28] No space left on device: '/dev/shm/torch_8812_1207931_0'",
])
def test_dataloader_shared_memory_in_docker(run_explain, line):
    data = json.loads(run_explain(["--format", "json"], stdin="docker run --gpus all trainer\n" + line + "\n").stdout)
    first = data["matches"][0]
    assert data["top"] == "dataloader-shm-exhausted" and "--shm-size" in first["workarounds"][0]
    assert "64 MB" in first["root_cause"] and data["gpu_claim"] is False


def test_a_full_disk_is_not_read_as_shared_memory(run_explain):
    out = run_explain(["--format", "json"], stdin="OSError: [Errno 28] No space left on device: '/data/ckpt.pt'\n")
    assert "dataloader-shm-exhausted" not in out.stdout
