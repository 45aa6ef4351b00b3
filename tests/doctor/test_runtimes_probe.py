"""The runtime probe over a fake site-packages and a fake loader path, then `torchlint doctor` end to end.

The fake environment is made of dist-info METADATA files and empty nvidia/*/lib/*.so.N
files: enough for importlib.metadata and the loader scan, which never import or load them.
"""

import json
import os
import sys

import pytest

from cli_support import run_torchlint

from torchlint.doctor.facts import Facts
from torchlint.doctor.runtimes import installed_packages, probe_runtimes


def dist(site, name, version, *requires):
    folder = site / f"{name.replace('-', '_')}-{version}.dist-info"
    folder.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {requirement}" for requirement in requires]
    (folder / "METADATA").write_text("\n".join(lines) + "\n")


def library(directory, name, target=None):
    directory.mkdir(parents=True, exist_ok=True)
    if target is None:
        (directory / name).write_text("")
    else:
        (directory / target).write_text("")
        os.symlink(target, directory / name)


def cudnn_header(site, version):
    major, minor, patch = version.split(".")
    include = site / "nvidia" / "cudnn" / "include"
    include.mkdir(parents=True, exist_ok=True)
    (include / "cudnn_version.h").write_text(
        f"#define CUDNN_MAJOR {major}\n#define CUDNN_MINOR {minor}\n#define CUDNN_PATCHLEVEL {patch}\n")


def conflicted_environment(root):
    """ORT 1.18 (CUDA 11.8/cuDNN 8) + ORT CPU + TF 2.18 (cuDNN 9.3), cu11+cu12 NCCL, a stale cuDNN 9.0 on LD_LIBRARY_PATH."""
    site = root / "site"
    dist(site, "onnxruntime-gpu", "1.18.0")
    dist(site, "onnxruntime", "1.18.0")
    dist(site, "tensorflow", "2.18.0", 'nvidia-cudnn-cu12==9.3.0.75; extra == "and-cuda"',
         'nvidia-cublas-cu12==12.5.3.2; extra == "and-cuda"', "numpy>=1.26")
    dist(site, "nvidia-cudnn-cu12", "9.3.0.75")
    dist(site, "nvidia-cublas-cu12", "12.5.3.2")
    dist(site, "nvidia-nccl-cu11", "2.21.5")
    dist(site, "nvidia-nccl-cu12", "2.21.5")
    dist(site, "numpy", "2.1.0")
    library(site / "nvidia" / "cudnn" / "lib", "libcudnn.so.9")
    cudnn_header(site, "9.3.0")
    library(site / "nvidia" / "nccl" / "lib", "libnccl.so.2")
    library(site / "nvidia" / "cublas" / "lib", "libcublas.so.12")
    capi = site / "onnxruntime" / "capi"  # onnxruntime (CPU) was installed last: the files are its
    capi.mkdir(parents=True)
    (capi / "build_and_package_info.py").write_text("package_name = 'onnxruntime'\n__version__ = '1.18.0'\n")
    platform_dir = site / "tensorflow" / "python" / "platform"
    platform_dir.mkdir(parents=True)
    (platform_dir / "build_info.py").write_text(
        "import collections\n\nbuild_info = collections.OrderedDict([('cuda_version', '12.5.1'), "
        "('cudnn_version', '9'), ('is_cuda_build', True)])\n")
    stale = root / "opt" / "cudnn-9.0" / "lib"
    library(stale, "libcudnn.so.9", target="libcudnn.so.9.0.0")
    return site, stale


def test_installed_packages_reads_metadata_only(tmp_path):
    site, _ = conflicted_environment(tmp_path)
    packages, requires = installed_packages([str(site)])
    assert packages == {"nvidia-cublas-cu12": "12.5.3.2", "nvidia-cudnn-cu12": "9.3.0.75", "nvidia-nccl-cu11": "2.21.5", "nvidia-nccl-cu12": "2.21.5",
                        "onnxruntime": "1.18.0", "onnxruntime-gpu": "1.18.0", "tensorflow": "2.18.0"}
    assert requires == {"tensorflow": ['nvidia-cudnn-cu12==9.3.0.75; extra == "and-cuda"',
                                       'nvidia-cublas-cu12==12.5.3.2; extra == "and-cuda"']}


def test_probe_runtimes_records_packages_and_the_loader_path_in_order(tmp_path, monkeypatch):
    site, stale = conflicted_environment(tmp_path)
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    monkeypatch.setenv("LD_LIBRARY_PATH", str(stale))
    facts = Facts()
    probe_runtimes(facts)
    assert facts.packages["onnxruntime-gpu"] == "1.18.0" and "tensorflow" in facts.package_requires
    assert facts.package_builds == {
        "onnxruntime/capi/build_and_package_info.py": {"package_name": "onnxruntime"},
        "tensorflow/python/platform/build_info.py": {"cuda_version": "12.5.1", "cudnn_version": "9"}}
    mine = [(lib.path, lib.version, lib.source) for lib in facts.libraries if str(tmp_path) in lib.path]
    assert mine == [
        (str(stale / "libcudnn.so.9"), "9.0.0", "LD_LIBRARY_PATH"),
        (str(site / "nvidia/cublas/lib/libcublas.so.12"), "12", "site-packages"),
        (str(site / "nvidia/cudnn/lib/libcudnn.so.9"), "9.3.0", "site-packages"),
        (str(site / "nvidia/nccl/lib/libnccl.so.2"), "2", "site-packages"),
    ]
    assert facts.wsl is False


def doctor(root, site, *args, ld_library_path=""):
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
           "LD_LIBRARY_PATH": ld_library_path}
    return run_torchlint("doctor", *args, cwd=root, env=env)


def declare(root, runtime_toml):
    (root / "pyproject.toml").write_text("[tool.torchlint]\n\n[tool.torchlint.runtime]\n" + runtime_toml)


@pytest.mark.slow
def test_doctor_end_to_end_on_a_conflicted_environment(tmp_path):
    site, stale = conflicted_environment(tmp_path)
    declare(tmp_path, 'onnxruntime-gpu = ">=1.19"\n')
    completed = doctor(tmp_path, site, "--format", "json", ld_library_path=str(stale))
    assert completed.returncode == 1, completed.stderr
    report = json.loads(completed.stdout)
    rows = {}
    for row in report["results"]:
        rows.setdefault(row["name"], []).append(row)
    by_found = {row["found"]: row["status"] for row in rows["gpu-runtimes"]}
    assert by_found == {"onnxruntime-gpu 1.18.0 (CUDA 11.8, cuDNN 8)": "fail",
                        "tensorflow 2.18.0 (CUDA 12.5.1, cuDNN 9.3)": "pass"}
    [flavours] = rows["onnxruntime-flavours"]
    assert flavours["status"] == "fail" and "the files in place are onnxruntime's" in flavours["advice"]
    assert [(row["status"], row["found"]) for row in rows["nvidia-wheel-majors"]] == [
        ("fail", "nvidia-nccl-cu11 2.21.5, nvidia-nccl-cu12 2.21.5")]
    assert [(row["status"], row["found"]) for row in rows["declared-packages"]] == [("fail", "onnxruntime-gpu 1.18.0")]
    [stale_row] = [row for row in rows["runtime-loader"] if row["status"] == "fail"]
    assert str(stale / "libcudnn.so.9") in stale_row["found"] and "9.0.0" in stale_row["found"]
    assert stale_row["expected"] == ">= 9.3 for tensorflow 2.18.0"
    assert report["facts"]["libraries"][0]["path"] == str(stale / "libcudnn.so.9")

    text = doctor(tmp_path, site, ld_library_path=str(stale))
    assert text.returncode == 1 and b"Traceback" not in text.stdout + text.stderr
    assert b"onnxruntime-flavours" in text.stdout and b"gpu-runtimes" in text.stdout


@pytest.mark.slow
def test_doctor_end_to_end_on_a_healthy_environment(tmp_path):
    site = tmp_path / "site"
    dist(site, "onnxruntime-gpu", "1.20.1")
    dist(site, "nvidia-cudnn-cu12", "9.1.0.70")
    library(site / "nvidia" / "cudnn" / "lib", "libcudnn.so.9")
    cudnn_header(site, "9.1.0")
    declare(tmp_path, 'onnxruntime-gpu = ">=1.19"\n')
    completed = doctor(tmp_path, site, "--format", "json")
    assert completed.returncode == 0, completed.stdout
    results = json.loads(completed.stdout)["results"]
    mine = {(row["name"], row["status"], row["found"]) for row in results
            if row["name"] in ("gpu-runtimes", "declared-packages")}
    assert mine == {("gpu-runtimes", "pass", "onnxruntime-gpu 1.20.1 (CUDA 12, cuDNN 9)"),
                    ("declared-packages", "pass", "onnxruntime-gpu 1.20.1")}


COLLECT_ENV = """\
PyTorch version: 2.5.1+cu124
Is debug build: False
CUDA used to build PyTorch: 12.4
ROCM used to build PyTorch: N/A

OS: Ubuntu 22.04.4 LTS (x86_64)
Python version: 3.11.10 (main) [GCC 11.4.0] (64-bit runtime)
Is CUDA available: True
CUDA runtime version: 12.1.105
GPU models and configuration: GPU 0: NVIDIA A100-SXM4-80GB
Nvidia driver version: 550.54.15
cuDNN version: Could not collect

Versions of relevant libraries:
[pip3] numpy==1.26.4
[pip3] nvidia-cudnn-cu12==9.1.0.70
[pip3] nvidia-cudnn-cu11==8.9.6.50
[pip3] onnxruntime==1.18.0
[pip3] onnxruntime-gpu==1.18.0
[pip3] torch==2.5.1+cu124
"""


def test_doctor_judges_the_runtimes_in_pasted_collect_env_text(tmp_path):
    (tmp_path / "collect_env.txt").write_text(COLLECT_ENV)
    completed = run_torchlint("doctor", "--facts", "collect_env.txt", "--format", "json", cwd=tmp_path)
    assert completed.returncode == 1, completed.stderr
    rows = {(row["name"], row["status"]): row for row in json.loads(completed.stdout)["results"]}
    # no loader scan in pasted text: cuDNN 8 is installed (cu11 wheel) beside torch's cuDNN 9
    runtime = rows[("gpu-runtimes", "warn")]
    assert runtime["found"] == "onnxruntime-gpu 1.18.0 (CUDA 11.8, cuDNN 8)" and "(torch 2.5.1+cu124)" in runtime["expected"]
    assert ("onnxruntime-flavours", "fail") in rows and ("nvidia-wheel-majors", "warn") in rows
