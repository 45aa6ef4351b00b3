"""The table of published torch wheels, and the doctor's judgement of a CPU-only torch beside an NVIDIA GPU."""

import json
import re

import pytest

from torchlint.cli import main
from torchlint.doctor.check import run_checks
from torchlint.doctor.collect_env import parse_collect_env
from torchlint.doctor.facts import Facts, Gpu
from torchlint.core.runtime_requirements import Requirements
from torchlint.doctor.wheels import (cuda_install_advice, load_table, runs_on, shipped, variants_for_gpu,
                                     variants_of)


def _rows(facts, **requirements):
    return {result.name: result for result in run_checks(facts, Requirements(**requirements))}


WHEEL_READ = re.compile(r"read with cuobjdump from the PyPI wheel torch-(\d+\.\d+)\.\d+(?:-\d+)?-cp\d+-cp\d+-"
                        r"manylinux\w+_x86_64\.whl \(sha256 [0-9a-f]{16}\)")


def test_every_row_of_the_wheel_table_names_its_source():
    table = load_table()
    assert table.variants["2.2"] == ("cu118", "cu121")
    for _, platform, row in table.shipped:
        read = WHEEL_READ.fullmatch(row.source)
        # a row read from a wheel names a Linux wheel of its own release
        assert row.source.startswith("https://") or (read and read.group(1) == row.release and platform == "linux")


@pytest.mark.parametrize("release", ["1.9", "1.10", "1.11", "1.12", "1.13", "2.0", "2.1", "2.2", "2.3", "2.4", "2.5",
                                     "2.8", "2.9"])
def test_every_published_linux_variant_of_a_sourced_release_has_its_arch_list(release):
    assert all(shipped(release + ".0", variant) is not None for variant in variants_of(release + ".0"))


@pytest.mark.parametrize("version, capability, runs", [
    ("1.10.2+cu102", "8.6", False),  # RTX 3090 on the CUDA 10.2 wheels: sm_37-sm_70 only
    ("1.10.2+cu113", "8.6", True),
    ("2.1.0+cu121", "3.7", False),  # Tesla K80: the CUDA 12 wheels dropped sm_37 ...
    ("2.1.0+cu118", "3.7", True),   # ... the CUDA 11.8 ones of the same release kept it
    ("2.5.1+cu124", "6.1", True),   # sm_60 cubin runs sm_61
    ("2.8.0+cu128", "6.1", False),  # GTX 1050
    ("2.11.0+cu128", "7.0", False),  # V100: 2.11's cu128 wheels dropped sm_70, 2.10's had it
    ("2.10.0+cu128", "7.0", True),
])
def test_old_and_new_releases_are_judged_from_their_cited_rows(version, capability, runs):
    row = shipped(version, version.split("+")[1])
    assert row is not None and row.source.startswith("https://github.com/pytorch/")
    assert runs_on(row.archs, capability) is runs


@pytest.mark.parametrize("version, gpu, capability, runs", [
    ("2.6.0+cu124", "Tesla K80", "3.7", False),  # sm_50-sm_90: Kepler gone, Pascal kept
    ("2.6.0+cu124", "NVIDIA GeForce GTX 1080", "6.1", True),
    ("2.7.1+cu126", "NVIDIA GeForce RTX 5090", "12.0", False),  # no sm_120 in the CUDA 12.6 wheels
    ("2.7.1+cu126", "NVIDIA GeForce GTX 1080", "6.1", True),
    ("2.11.0+cu130", "Tesla V100-SXM2-16GB", "7.0", False),  # CUDA 13 wheels: sm_75 and newer
    ("2.11.0+cu130", "NVIDIA GeForce RTX 4090", "8.9", True),  # the sm_86 cubin runs sm_89
    ("2.12.0+cu130", "NVIDIA GeForce GTX 1080", "6.1", False),
    ("2.12.0+cu130", "NVIDIA GeForce RTX 5090", "12.0", True),
    ("2.13.0+cu130", "Tesla T4", "7.5", True),
    ("2.13.0+cu130", "Tesla V100-SXM2-16GB", "7.0", False),
])
def test_doctor_judges_releases_from_the_rows_read_from_their_pypi_wheels(version, gpu, capability, runs):
    facts = Facts(torch_version=version, torch_cuda=None, torch_build="cuda", platform="linux",
                  cuda_available=True, gpus=[Gpu(0, gpu, capability)])
    result = _rows(facts)["kernel-image"]
    assert result.status == ("pass" if runs else "fail"), result
    if not runs:
        assert f"PyPI wheel torch-{version.split('+')[0][:-2]}" in result.advice
        assert "nothing for sm_" + capability.replace(".", "") in result.advice


def test_the_rtx_5090_on_torch_2_7_cu126_is_sent_to_the_cu128_wheels_of_the_same_release():
    facts = Facts(torch_version="2.7.0+cu126", torch_cuda="12.6", torch_build="cuda", platform="linux",
                  cuda_available=True, gpus=[Gpu(0, "NVIDIA GeForce RTX 5090", "12.0")])
    assert "torch==2.7.0 --index-url https://download.pytorch.org/whl/cu128" in _rows(facts)["kernel-image"].advice


def test_a_variant_without_a_row_is_ruled_out_only_when_its_cuda_cannot_build_for_the_gpu():
    # torch 2.6: cu124 read from its wheel (no sm_37); cu126 has no row, but CUDA 12.6 cannot build sm_37;
    # cu118 has no row and CUDA 11.8 can: the one left to try
    assert variants_for_gpu("2.6.0", "3.7") == [("cu126", False), ("cu124", False), ("cu118", None)]
    assert "whl/cu118" in cuda_install_advice("2.6.0", "3.7")
    assert variants_for_gpu("2.6.0", "8.6") == [("cu126", None), ("cu124", True), ("cu118", None)]


def test_install_advice_names_only_variants_published_for_the_release():
    advice = cuda_install_advice("2.2.2")
    assert "--index-url https://download.pytorch.org/whl/cu121" in advice
    assert "cu130" not in advice and "cu118, cu121" in advice


def test_install_advice_prefers_a_variant_whose_wheels_run_the_gpu():
    # torch 2.8's cu128 and cu129 wheels ship no sm_6x cubin; its cu126 wheels ship sm_60, which runs sm_61.
    assert "whl/cu126" in cuda_install_advice("2.8.0", "6.1")
    assert "whl/cu129" in cuda_install_advice("2.8.0", "9.0")


def test_a_release_the_table_does_not_know_gets_no_invented_index_url():
    advice = cuda_install_advice("2.14.0")
    assert "--index-url" not in advice and "previous-versions" in advice


def test_a_release_known_from_its_wheels_arch_rows_gets_their_variant_and_says_the_list_may_be_short():
    # 2.13's [[release]] row is unknown, but its cu130 wheel was read (issue 32, item 6)
    advice = cuda_install_advice("2.13.0+cpu")
    assert "`pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cu130`" in advice
    assert "published for at least cu130" in advice


def test_windows_wheels_are_judged_from_their_own_rows_and_never_from_the_linux_ones():
    assert shipped("2.8.0+cu128", "cu128") is not None
    assert shipped("2.8.0+cu128", "cu128", "win32") is None  # no cited Windows row for 2.8
    assert "sm_61" in shipped("2.1.2+cu121", "cu121", "win32").archs
    assert "sm_61" not in shipped("2.1.2+cu121", "cu121", "linux").archs
    assert variants_of("2.9.1") == ("cu126", "cu128", "cu130")


def test_a_missing_row_falls_back_to_what_the_cuda_release_can_build():
    facts = Facts(torch_version="2.6.0+cu126", torch_cuda="12.6", torch_build="cuda", platform="linux",
                  cuda_available=True, gpus=[Gpu(0, "Tesla K80", "3.7")])
    assert shipped("2.6.0+cu126", "cu126") is None
    result = _rows(facts)["kernel-image"]
    assert result.status == "fail" and "No CUDA 12.6 build" in result.advice


def test_kernel_image_is_judged_by_what_the_wheel_ships_not_what_cuda_can_build():
    facts = Facts(torch_version="2.8.0+cu128", torch_cuda="12.8", torch_build="cuda", platform="linux",
                  cuda_available=True, gpus=[Gpu(0, "NVIDIA GeForce GTX 1050", "6.1")])
    result = _rows(facts)["kernel-image"]
    assert result.status == "fail"
    assert "sm_70 sm_75" in result.advice and "whl/cu126" in result.advice


@pytest.fixture
def cpu_torch_beside_rtx4080(facts_dir):
    return parse_collect_env((facts_dir / "collect-env-cpu-torch-rtx4080.txt").read_text())


def test_cpu_torch_beside_an_nvidia_gpu_warns_and_names_the_gpu(cpu_torch_beside_rtx4080):
    rows = _rows(cpu_torch_beside_rtx4080)
    assert rows["gpu"].status == "warn" and "RTX 4080" in rows["gpu"].found
    assert rows["torch-build"].status == "warn"
    assert "torch==2.2.2 --index-url https://download.pytorch.org/whl/cu121" in rows["torch-build"].advice


def test_cpu_torch_beside_an_nvidia_gpu_fails_when_a_gpu_is_required(cpu_torch_beside_rtx4080):
    rows = _rows(cpu_torch_beside_rtx4080, require_gpu=True)
    assert rows["gpu"].status == "fail" and rows["torch-build"].status == "fail"


def test_doctor_facts_on_the_pasted_text_shows_the_gpu_and_fails_only_when_one_is_required(facts_dir, tmp_path, capsys):
    pasted = str(facts_dir / "collect-env-cpu-torch-rtx4080.txt")
    code = main(["doctor", "--facts", pasted, "--format", "json"])
    gpu = next(row for row in json.loads(capsys.readouterr().out)["results"] if row["name"] == "gpu")
    assert (code, gpu["status"], gpu["found"]) == (0, "warn", "NVIDIA GeForce RTX 4080 (CPU-only torch build)")
    (tmp_path / "req.toml").write_text("require-gpu = true\n")
    code = main(["doctor", "--facts", pasted, "--requirements", str(tmp_path / "req.toml"), "--format", "json"])
    gpu = next(row for row in json.loads(capsys.readouterr().out)["results"] if row["name"] == "gpu")
    assert (code, gpu["status"]) == (1, "fail")


@pytest.mark.parametrize("version, platform, gpu, capability, status, cited", [
    ("1.10.2+cu102", "linux", "NVIDIA GeForce RTX 3090", "8.6", "fail", "pytorch/builder/blob/f0f41b25"),
    ("1.10.2+cu113", "linux", "NVIDIA GeForce RTX 3090", "8.6", "pass", None),
    ("2.1.2+cu121", "win32", "NVIDIA GeForce GTX 1080", "6.1", "pass", None),
    ("2.1.2+cu121", "linux", "Tesla K80", "3.7", "fail", "pytorch/builder/blob/55d40b1b"),
])
def test_doctor_judges_old_releases_and_windows_wheels_from_their_cited_rows(version, platform, gpu, capability,
                                                                             status, cited):
    facts = Facts(torch_version=version, torch_cuda=None, torch_build="cuda", platform=platform,
                  cuda_available=True, gpus=[Gpu(0, gpu, capability)])
    result = _rows(facts)["kernel-image"]
    assert result.status == status, result
    if cited:
        assert cited in result.advice and "--index-url" in result.advice
