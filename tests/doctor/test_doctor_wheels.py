"""The table of published torch wheels, and the doctor's judgement of a CPU-only torch beside an NVIDIA GPU."""

import json

import pytest

from torchlint.cli import main
from torchlint.doctor.check import run_checks
from torchlint.doctor.collect_env import parse_collect_env
from torchlint.doctor.facts import Facts, Gpu
from torchlint.doctor.requirements import Requirements
from torchlint.doctor.wheels import cuda_install_advice, load_table, shipped, variants_of


def _rows(facts, **requirements):
    return {result.name: result for result in run_checks(facts, Requirements(**requirements))}


def test_every_row_of_the_wheel_table_names_its_source():
    table = load_table()
    assert table.variants["2.2"] == ("cu118", "cu121")
    assert all(row.source.startswith("https://") for _, row in table.shipped)


def test_install_advice_names_only_variants_published_for_the_release():
    advice = cuda_install_advice("2.2.2")
    assert "--index-url https://download.pytorch.org/whl/cu121" in advice
    assert "cu130" not in advice and "cu118, cu121" in advice


def test_install_advice_prefers_a_variant_whose_wheels_run_the_gpu():
    # torch 2.8's cu128 and cu129 wheels ship no sm_6x cubin; its cu126 wheels ship sm_60, which runs sm_61.
    assert "whl/cu126" in cuda_install_advice("2.8.0", "6.1")
    assert "whl/cu129" in cuda_install_advice("2.8.0", "9.0")


def test_a_release_the_table_does_not_know_gets_no_invented_index_url():
    advice = cuda_install_advice("2.12.0")
    assert "--index-url" not in advice and "previous-versions" in advice


def test_shipped_arch_lists_are_for_linux_wheels_only():
    assert shipped("2.8.0+cu128", "cu128") is not None
    assert shipped("2.8.0+cu128", "cu128", "win32") is None
    assert variants_of("2.9.1") == ("cu126", "cu128", "cu130")


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
