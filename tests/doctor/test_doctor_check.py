"""The checks, judged on recorded fact sets from machines this CI does not have."""

import pytest

from torchlint.doctor.archs import kernel_coverage, parse_arch
from torchlint.doctor.check import CHECK_NAMES, run_checks
from torchlint.doctor.compat import minimum_driver
from torchlint.core.runtime_requirements import Requirements, parse_requirements
from torchlint.doctor.results import FAIL, PASS, SKIP, WARN, failed

FULL = parse_requirements({
    "torch": ">=2.1,<3", "cuda": ">=12.1", "cudnn": ">=8.9", "driver": ">=535",
    "compute-capability": ">=8.0", "require-gpu": True, "gpu-name": "H100",
})


def statuses(results):
    by_name = {}
    for result in results:
        by_name.setdefault(result.name, []).append(result.status)
    return {name: values[0] if len(values) == 1 else values for name, values in by_name.items()}


def test_healthy_h100_passes_every_declared_requirement(load_facts):
    results = run_checks(load_facts("healthy-h100"), FULL)
    got = statuses(results)
    assert got == {
        "torch": PASS, "torch-build": PASS, "cuda": PASS, "gpu": PASS, "gpu-name": PASS,
        "compute-capability": PASS, "kernel-image": PASS, "driver": PASS, "driver-for-cuda": PASS,
        "cudnn": PASS, "cudnn-enabled": PASS,
    }
    assert not failed(results)
    kernel = next(r for r in results if r.name == "kernel-image")
    assert "sm_90" in kernel.found
    driver = next(r for r in results if r.name == "driver-for-cuda")
    assert driver.expected.startswith(">=580") and "13.0" in driver.expected


def test_gpu_older_than_the_arch_list_fails_kernel_image(load_facts):
    results = run_checks(load_facts("old-gpu-sm61"), Requirements())
    got = statuses(results)
    assert got["kernel-image"] == FAIL
    assert got["driver-for-cuda"] == PASS  # 570 runs CUDA 12.6
    assert got["torch-warnings"] == WARN  # torch's own "not compatible" warning is surfaced
    kernel = next(r for r in results if r.name == "kernel-image")
    assert "sm_61" in kernel.found and "TORCH_CUDA_ARCH_LIST" in kernel.advice


def test_declared_capability_floor_fails_the_old_gpu_too(load_facts):
    results = run_checks(load_facts("old-gpu-sm61"), parse_requirements({"compute-capability": ">=7.0"}))
    assert statuses(results)["compute-capability"] == FAIL


def test_driver_too_old_for_the_cuda_runtime_fails(load_facts):
    results = run_checks(load_facts("driver-too-old"), parse_requirements({"driver": ">=450"}))
    got = statuses(results)
    assert got["driver-for-cuda"] == FAIL
    assert got["driver"] == PASS  # the declared floor is met; the CUDA runtime's is not
    row = next(r for r in results if r.name == "driver-for-cuda")
    assert row.found == "470.256.02" and "525.60.13" in row.expected and "12.4" in row.expected


def test_cudnn_disabled_fails_when_a_gpu_is_used(load_facts):
    results = run_checks(load_facts("cudnn-disabled"), Requirements())
    row = next(r for r in results if r.name == "cudnn-enabled")
    assert row.status == FAIL and "TL004" in row.advice and "cudnn.flags(enabled=False)" in row.advice


def test_cpu_build_with_require_gpu_fails_build_and_gpu(load_facts):
    results = run_checks(load_facts("cpu-only"), parse_requirements({"require-gpu": True}))
    got = statuses(results)
    assert got["torch-build"] == FAIL and got["gpu"] == FAIL
    assert got["kernel-image"] == SKIP and got["driver-for-cuda"] == SKIP and got["cudnn-enabled"] == SKIP
    gpu = next(r for r in results if r.name == "gpu")
    assert "CPU-only" in gpu.found


def test_cpu_build_without_requirements_passes(load_facts):
    results = run_checks(load_facts("cpu-only"), Requirements())
    assert not failed(results)
    assert statuses(results)["gpu"] == SKIP


def test_cuda_launch_blocking_is_a_warning_not_a_failure(load_facts):
    results = run_checks(load_facts("cuda-launch-blocking"), Requirements())
    assert statuses(results)["cuda-launch-blocking"] == WARN
    assert not failed(results)


def test_torch_use_cuda_dsa_at_run_time_is_explained(load_facts):
    facts = load_facts("healthy-h100")
    facts.env["TORCH_USE_CUDA_DSA"] = "1"
    row = next(r for r in run_checks(facts, Requirements()) if r.name == "torch-use-cuda-dsa")
    assert row.status == WARN and "build-time" in row.advice


def test_hidden_gpus_and_stray_cudnn_are_warned_about(load_facts):
    facts = load_facts("healthy-h100")
    facts.env["CUDA_VISIBLE_DEVICES"] = ""
    facts.cudnn_on_library_path = ["/usr/local/cuda/lib64/libcudnn.so.8"]
    got = statuses(run_checks(facts, Requirements()))
    assert got["cuda-visible-devices"] == WARN and got["cudnn-library-path"] == WARN


def test_missing_torch_fails_and_other_checks_skip(load_facts):
    facts = load_facts("cpu-only")
    facts.torch_version, facts.torch_build = None, "unknown"
    facts.unknown["torch"] = "cannot import torch: ModuleNotFoundError: No module named 'torch'"
    got = statuses(run_checks(facts, parse_requirements({"cudnn": ">=9"})))
    assert got["torch"] == FAIL and got["torch-build"] == SKIP and got["cudnn"] == SKIP


def test_unreadable_driver_on_a_gpu_machine_is_a_warning(load_facts):
    facts = load_facts("healthy-h100")
    facts.driver_version = None
    facts.unknown["driver_version"] = "nvidia-smi not found on PATH; pynvml not installed"
    row = next(r for r in run_checks(facts, Requirements()) if r.name == "driver-for-cuda")
    assert row.status == WARN and "nvidia-smi" in row.advice


def test_mismatched_declared_versions_fail(load_facts):
    req = parse_requirements({"torch": "<2.10", "cuda": "<13", "cudnn": "<9", "gpu-name": ["A100"]})
    got = statuses(run_checks(load_facts("healthy-h100"), req))
    assert got["torch"] == FAIL and got["cuda"] == FAIL and got["cudnn"] == FAIL and got["gpu-name"] == FAIL


def test_windows_uses_the_windows_driver_floor():
    assert str(minimum_driver("12.4", "win32")) == "528.33"
    assert str(minimum_driver("12.4", "linux")) == "525.60.13"
    assert str(minimum_driver("13.0", "linux")) == "580"
    assert str(minimum_driver("11.8", "linux")) == "450.80.2"  # packaging drops the leading zero
    assert str(minimum_driver("9.2", "linux")) == "396.26"  # CUDA 9.x floors added for pasted old reports
    assert minimum_driver("8.0", "linux") is None


@pytest.mark.parametrize(
    "capability, arch_list, cubin, ptx",
    [
        ("8.6", ["sm_80", "sm_90"], "sm_80", None),  # same major, lower minor runs
        ("8.0", ["sm_86"], None, None),  # a higher minor does not
        ("9.0", ["sm_90a"], "sm_90a", None),
        ("10.0", ["sm_90a", "compute_90a"], None, None),  # arch-specific code runs on exactly 9.0
        ("12.0", ["sm_90", "compute_90"], None, "compute_90"),  # PTX JIT-compiles forward
        ("6.1", ["sm_70", "sm_75", "compute_75"], None, None),
        ("12.1", ["sm_100", "sm_120", "compute_120"], "sm_120", "compute_120"),
    ],
)
def test_kernel_coverage(capability, arch_list, cubin, ptx):
    assert kernel_coverage(capability, arch_list) == (cubin, ptx)


def test_ptx_of_an_older_major_fails_as_torch_calls_it_not_compatible(load_facts):
    facts = load_facts("healthy-h100")
    facts.arch_list = ["sm_80", "compute_80"]
    row = next(r for r in run_checks(facts, Requirements()) if r.name == "kernel-image")
    assert row.status == FAIL and "compute_80" in row.found


def test_ptx_of_the_same_major_is_a_warning(load_facts):
    facts = load_facts("healthy-h100")
    facts.arch_list = ["sm_80", "compute_90"]
    row = next(r for r in run_checks(facts, Requirements()) if r.name == "kernel-image")
    assert row.status == WARN and "compute_90" in row.found


def test_parse_arch():
    assert parse_arch("sm_100f") == ("sm", 10, 0, "f")
    assert parse_arch("gfx90a") is None and parse_arch("sm_9") is None


def test_every_result_name_is_a_known_check(load_facts):
    for name in ("healthy-h100", "old-gpu-sm61", "driver-too-old", "cudnn-disabled", "cpu-only"):
        for result in run_checks(load_facts(name), FULL):
            assert result.name in CHECK_NAMES


def test_cuda_warnings_from_torch_matter_only_where_a_gpu_is_used(load_facts):
    facts = load_facts("cpu-only")
    facts.torch_warnings = ["CUDA initialization: Found no NVIDIA driver on your system."]
    assert "torch-warnings" not in statuses(run_checks(facts, Requirements()))
    required = run_checks(facts, parse_requirements({"require-gpu": True}))
    assert statuses(required)["torch-warnings"] == WARN
