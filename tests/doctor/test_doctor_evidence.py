"""`torchlint doctor --facts` on pasted evidence, and the doctor's handling of the unknown and the malformed."""

import json
import re

import pytest

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def doctor(run_python, tmp_path, *args, stdin=None, extra_env=None):
    return run_python(["-m", "torchlint", "doctor", *args], cwd=tmp_path, stdin=stdin, extra_env=extra_env)


def test_collect_env_text_is_judged(run_python, tmp_path, facts_dir):
    out = doctor(run_python, tmp_path, "--facts", str(facts_dir / "collect-env-rtx3090-cu101.txt"), "--format", "json")
    assert out.returncode == 1, out.stderr
    data = json.loads(out.stdout)
    facts = data["facts"]
    assert facts["torch_version"] == "1.5.1+cu101" and facts["torch_cuda"] == "10.1"
    assert [gpu["capability"] for gpu in facts["gpus"]] == ["8.6", "8.6"]
    assert facts["packages"]["cudatoolkit"] == "10.1.243" and facts["platform"] == "linux"
    rows = {(r["name"], r["status"]) for r in data["results"]}
    assert ("kernel-image", "fail") in rows and ("driver-for-cuda", "pass") in rows


def test_collect_env_from_stdin_and_what_it_cannot_judge(run_python, tmp_path, facts_dir):
    text = (facts_dir / "collect-env-h100-healthy.txt").read_text()
    out = doctor(run_python, tmp_path, "--facts", "-", stdin=text, extra_env={"COLUMNS": "120"})
    assert out.returncode == 0, out.stdout + out.stderr
    # torch 2.4.1+cu124's arch list is in the wheel table, so the H100's kernels are judged; cuDNN's state is not said
    assert "Not judged (the evidence does not say): cudnn-enabled\n" in out.stdout
    assert re.search(r"kernel-image\s*│ pass", out.stdout)


def test_unknown_cudnn_never_fails(run_python, tmp_path, facts_dir):
    record = json.loads((facts_dir / "healthy-h100.json").read_text())
    record["cudnn_available"] = None
    record["cudnn_version"] = None
    (tmp_path / "f.json").write_text(json.dumps(record))
    (tmp_path / "req.toml").write_text('cudnn = ">=8.9"\n')
    out = doctor(run_python, tmp_path, "--facts", "f.json", "--requirements", "req.toml", "--format", "json")
    statuses = {r["name"]: r["status"] for r in json.loads(out.stdout)["results"]}
    assert statuses["cudnn"] == "skip" and statuses["cudnn-enabled"] == "skip" and out.returncode == 0


def test_a_cudnn_requirement_on_a_cpu_machine_is_skipped_like_the_driver(run_python, tmp_path, facts_dir):
    (tmp_path / "req.toml").write_text('cudnn = ">=8.9"\ndriver = ">=535"\n')
    out = doctor(run_python, tmp_path, "--facts", str(facts_dir / "cpu-only.json"), "--requirements", "req.toml",
                 "--format", "json")
    statuses = {r["name"]: r["status"] for r in json.loads(out.stdout)["results"]}
    assert statuses["cudnn"] == statuses["driver"] == "skip" and out.returncode == 0


@pytest.mark.parametrize("edit, field", [
    (lambda r: r["gpus"][0].update(capability="89"), "gpus[0].capability"),
    (lambda r: r["gpus"][0].update(capability="sm_89"), "gpus[0].capability"),
    (lambda r: r["gpus"][0].update(capability=8.9), "gpus[0].capability"),
    (lambda r: r.update(driver_version=535), "driver_version"),
    (lambda r: r["gpus"][0].update(uuid="GPU-1234"), "uuid"),
    (lambda r: r.update(cuda_available="yes"), "cuda_available"),
])
def test_hand_written_slips_are_one_line_naming_the_field(run_python, tmp_path, facts_dir, edit, field):
    record = json.loads((facts_dir / "healthy-h100.json").read_text())
    edit(record)
    (tmp_path / "f.json").write_text(json.dumps(record))
    out = doctor(run_python, tmp_path, "--facts", "f.json")
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and field in out.stderr and "internal error" not in out.stderr


def visible_devices_row(run_python, tmp_path, facts_dir, value):
    record = json.loads((facts_dir / "healthy-h100.json").read_text())
    record["env"]["CUDA_VISIBLE_DEVICES"] = value
    (tmp_path / "f.json").write_text(json.dumps(record))
    out = doctor(run_python, tmp_path, "--facts", "f.json", "--format", "json")
    return next(r for r in json.loads(out.stdout)["results"] if r["name"] == "cuda-visible-devices")


@pytest.mark.parametrize("value, words", [
    ("[1,2,3]", ["'[1,2,3]'", "no GPU is visible"]),
    ("0,1,x,2", ["'x'", "only 0,1 is visible"]),
    ("cuda:0", ["'cuda:0'"]),
])
def test_malformed_cuda_visible_devices_is_explained(run_python, tmp_path, facts_dir, value, words):
    row = visible_devices_row(run_python, tmp_path, facts_dir, value)
    assert row["status"] == "warn"
    for word in words:
        assert word in row["advice"]


@pytest.mark.parametrize("value", ["0,1", "GPU-8f6c2a1e-1b2c-4d5e-9f00-123456789abc", "MIG-GPU-8f6c2a1e/1/0"])
def test_well_formed_cuda_visible_devices_passes(run_python, tmp_path, facts_dir, value):
    assert visible_devices_row(run_python, tmp_path, facts_dir, value)["status"] == "pass"


def test_an_empty_torch_requirement_is_an_error_not_any(run_python, tmp_path, facts_dir):
    (tmp_path / "req.toml").write_text('torch = ""\n')
    out = doctor(run_python, tmp_path, "--facts", str(facts_dir / "healthy-h100.json"), "--requirements", "req.toml")
    assert out.returncode == 2 and "runtime.torch" in out.stderr and "empty" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_at_80_columns_the_table_fits_and_advice_stays_copyable(run_python, tmp_path, facts_dir):
    out = doctor(run_python, tmp_path, "--facts", str(facts_dir / "old-gpu-sm61.json"),
                 extra_env={"FORCE_COLOR": "1", "COLUMNS": "80", "TERM": "xterm"})
    lines = ANSI.sub("", out.stdout).splitlines()
    table = [line for line in lines if line[:1] in "┏┃┡│└"]
    assert table and all(len(line) <= 80 for line in table)
    header = next(line for line in table if "check" in line)
    assert all(word in header for word in ("check", "status", "found", "expected"))
    start = next(i for i, line in enumerate(lines) if line.startswith("kernel-image (fail): "))
    advice = [lines[start]]
    for line in lines[start + 1:]:
        if not line.startswith("  "):  # continuation lines are indented
            break
        advice.append(line)
    assert all(len(line) <= 80 or len(line.split()) == 1 for line in advice)  # wrapped; a URL whole
    words = " ".join(advice).split()
    assert any("https://pytorch.org/get-started/locally/" in word for word in words)
    assert 'TORCH_CUDA_ARCH_LIST="6.1"' in " ".join(advice)


@pytest.mark.parametrize("text, expected", [
    # the 2018 format: GPU inline, Yes/No
    ("PyTorch version: 1.0.0\nIs debug build: No\nCUDA used to build PyTorch: 9.0.176\nIs CUDA available: Yes\n"
     "GPU models and configuration: GPU 0: TITAN Xp\nNvidia driver version: 410.48\n",
     {"torch_cuda": "9.0", "cuda_available": True, "gpus": [("TITAN Xp", "6.1")], "driver_version": "410.48"}),
    # a ROCm build names no NVIDIA GPU and no CUDA
    ("PyTorch version: 1.7.0a0+9ddd3df\nCUDA used to build PyTorch: N/A\nROCM used to build PyTorch: 3.7.20315\n"
     "Is CUDA available: True\nGPU models and configuration: Device 66a1\n",
     {"torch_build": "rocm", "torch_cuda": None, "gpus": [("Device 66a1", None)]}),
    # torch not importable where collect_env ran
    ("PyTorch version: N/A\nIs debug build: N/A\nCUDA used to build PyTorch: N/A\nIs CUDA available: N/A\n",
     {"torch_version": None, "cuda_available": None, "gpus": []}),
    # a CPU wheel on Windows
    ("PyTorch version: 2.8.0+cpu\nCUDA used to build PyTorch: None\nOS: Microsoft Windows 11 Pro\n"
     "Is CUDA available: False\nGPU models and configuration: No CUDA\n",
     {"torch_build": "cpu", "platform": "win32", "gpus": []}),
])
def test_collect_env_formats(text, expected):
    from torchlint.doctor.collect_env import parse_collect_env

    facts = parse_collect_env(text)
    for key, value in expected.items():
        got = [(gpu.name, gpu.capability) for gpu in facts.gpus] if key == "gpus" else getattr(facts, key)
        assert got == value, key


# A collect_env paste as it lands in issues: torch's warning first, then the report (issue 33).
DRIVER_TOO_OLD_PASTE = """\
/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py:138: UserWarning: CUDA initialization: {the}NVIDIA \
driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a \
new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to \
install a PyTorch version that has been compiled with your version of the CUDA driver. (Triggered internally at \
../c10/cuda/CUDAFunctions.cpp:108.)
  return torch._C._cuda_getDeviceCount() > 0
Collecting environment information...
PyTorch version: 2.1.0+cu121
Is debug build: False
CUDA used to build PyTorch: 12.1
ROCM used to build PyTorch: N/A

OS: Ubuntu 20.04.6 LTS (x86_64)
Python version: 3.10.13 (main, Sep 11 2023, 13:44:35) [GCC 11.2.0] (64-bit runtime)
Python platform: Linux-5.4.0-162-generic-x86_64-with-glibc2.31
Is CUDA available: False
CUDA runtime version: 11.4.152
GPU models and configuration: Could not collect
Nvidia driver version: Could not collect
cuDNN version: Could not collect
"""


@pytest.mark.parametrize("the", ["The ", ""])
def test_the_driver_too_old_warning_in_a_paste_fails_the_driver_check(run_python, tmp_path, the):
    out = doctor(run_python, tmp_path, "--facts", "-", "--format", "json", stdin=DRIVER_TOO_OLD_PASTE.format(the=the))
    data = json.loads(out.stdout)
    row = next(r for r in data["results"] if r["name"] == "driver-for-cuda")
    assert out.returncode == 1 and row["status"] == "fail", row
    assert "CUDA <= 11.4" in row["found"] and ">= 525.60.13" in row["advice"]


def test_cuda_available_without_a_gpu_line_is_not_reported_as_unavailable(run_python, tmp_path):
    text = ("PyTorch version: 2.3.0+cu121\nIs debug build: False\nCUDA used to build PyTorch: 12.1\n"
            "OS: Ubuntu 22.04.4 LTS (x86_64)\nIs CUDA available: True\nCUDA runtime version: 12.1.105\n"
            "Nvidia driver version: 535.104.05\n")
    out = doctor(run_python, tmp_path, "--facts", "-", "--format", "json", stdin=text)
    rows = {r["name"]: r for r in json.loads(out.stdout)["results"]}
    assert "is_available() is False" not in out.stdout and "no GPU" not in out.stdout
    assert rows["gpu"]["status"] == "pass" and "not in the evidence" in rows["gpu"]["found"]
    assert rows["kernel-image"]["status"] == "skip" and "not in the evidence" in rows["kernel-image"]["found"]
    assert out.returncode == 0
