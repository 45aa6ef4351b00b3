"""Co-installed GPU runtimes, judged on recorded fact sets (tests/doctor/facts/runtimes-*.json)."""

import dataclasses

import pytest

from torchlint.core.config_files import ConfigError
from torchlint.doctor.check import CHECK_NAMES, run_checks
from torchlint.core.runtime_requirements import Requirements, parse_requirements
from torchlint.doctor.results import FAIL, PASS, SKIP, WARN
from torchlint.doctor.runtime_builds import runtime_needs, table
from torchlint.doctor.runtimes import library_context

ORT_DOC = "https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements"
RUNTIME_CHECKS = ("declared-packages", "gpu-runtimes", "nvidia-wheel-majors", "onnxruntime-flavours",
                  "runtime-loader", "wsl-libcuda")


def rows(facts, requirements=None):
    return [result for result in run_checks(facts, requirements or Requirements())
            if result.name in RUNTIME_CHECKS]


def named(results, name):
    return [result for result in results if result.name == name]


def test_torch_cu12_with_onnxruntime_built_for_cudnn8_fails(load_facts):
    facts = load_facts("runtimes-torch-cu12-ort-cudnn8")
    [ort] = named(rows(facts), "gpu-runtimes")
    assert ort.status == FAIL
    assert "onnxruntime-gpu 1.18.0 (CUDA 11.8, cuDNN 8)" == ort.found
    assert "cuDNN 9" in ort.expected and "torch 2.5.1+cu124" in ort.expected
    assert "needs cuDNN 8" in ort.advice and "libcudnn_cnn_infer.so.8" in ort.advice
    assert "needs CUDA 11" in ort.advice  # no libcublas.so.11 anywhere either
    assert ORT_DOC in ort.detail


def test_tensorflow_pinning_cudnn8_for_cuda12_beside_torch_with_cudnn9_fails(load_facts):
    facts = load_facts("runtimes-healthy")
    facts.packages["tensorflow"] = "2.16.1"
    facts.package_requires["tensorflow"] = ['nvidia-cudnn-cu12==8.9.7.29; extra == "and-cuda"']
    [tf] = [row for row in named(rows(facts), "gpu-runtimes") if row.found.startswith("tensorflow")]
    assert tf.status == FAIL and tf.found == "tensorflow 2.16.1 (CUDA 12, cuDNN 8.9)"
    assert "Both take cuDNN from nvidia-cudnn-cu12, which holds one version" in tf.advice


def test_onnxruntime_fails_only_while_its_cudnn_is_missing(load_facts):
    facts = load_facts("runtimes-torch-cu12-ort-cudnn8")
    facts.packages.update({"nvidia-cudnn-cu11": "8.9.2.26", "nvidia-cublas-cu11": "11.11.3.6"})
    [ort] = named(rows(facts), "gpu-runtimes")
    assert ort.status == WARN and "luck of load order" in ort.advice


def test_both_cu11_and_cu12_cudnn_wheels(load_facts):
    results = rows(load_facts("runtimes-cu11-cu12-cudnn-wheels"))
    wheels = {result.expected: result for result in named(results, "nvidia-wheel-majors")}
    # cuDNN 8.7 (cu11) and 8.9 (cu12) both ship nvidia/cudnn/lib/libcudnn.so.8: one file, two owners
    cudnn = wheels["one CUDA major of nvidia-cudnn"]
    assert cudnn.status == FAIL and "nvidia-cudnn-cu11 8.7.0.84" in cudnn.found and "same soname" in cudnn.advice
    # libcublas.so.11 and libcublas.so.12 are different files in the same folder
    assert wheels["one CUDA major of nvidia-cublas"].status == WARN
    assert wheels["one CUDA major of nvidia-cuda-runtime"].status == WARN
    [tf] = named(results, "gpu-runtimes")
    assert tf.status == WARN and tf.found == "tensorflow 2.14.0 (CUDA 11, cuDNN 8.7)"
    assert "Requires-Dist" in tf.detail


def test_nccl_wheels_of_two_cuda_majors_share_one_soname(load_facts):
    facts = load_facts("runtimes-healthy")
    facts.packages["nvidia-nccl-cu11"] = "2.21.5"
    [nccl] = named(rows(facts), "nvidia-wheel-majors")
    assert nccl.status == FAIL and "nvidia-nccl-cu11 2.21.5, nvidia-nccl-cu12 2.21.5" == nccl.found


def test_stale_libcudnn_on_ld_library_path_is_named(load_facts):
    results = named(rows(load_facts("runtimes-stale-ld-library-path")), "runtime-loader")
    by_status = {result.status: result for result in results}
    # torch pins nvidia-cudnn-cu12==9.1.0.70; LD_LIBRARY_PATH serves libcudnn.so.9 = 9.0.0 first
    assert by_status[FAIL].found.startswith("libcudnn.so.9 -> /usr/local/cuda-12.1/lib64/libcudnn.so.9 9.0.0")
    assert by_status[FAIL].expected == ">= 9.1 for torch 2.5.1+cu124"
    # the first libcudnn of all is a cuDNN 8 that nothing here asked for
    assert "/usr/local/cuda-12.1/lib64/libcudnn.so.8" in by_status[WARN].found
    assert "LD_LIBRARY_PATH" in by_status[WARN].advice


def test_a_healthy_matching_set_passes(load_facts):
    results = rows(load_facts("runtimes-healthy"))
    assert results and all(result.status == PASS for result in results), [(r.name, r.status, r.advice)
                                                                           for r in results]
    found = {result.found for result in named(results, "gpu-runtimes")}
    assert found == {"cupy-cuda12x 13.3.0 (CUDA 12)", "jax-cuda12-plugin 0.4.35 (CUDA 12, cuDNN 9.1)",
                     "onnxruntime-gpu 1.20.1 (CUDA 12, cuDNN 9)"}
    loader = {result.found for result in named(results, "runtime-loader")}
    assert any(text.startswith("libcudnn.so.9 -> ") for text in loader)


def test_every_runtime_row_is_a_known_check(load_facts):
    for name in ("runtimes-healthy", "runtimes-torch-cu12-ort-cudnn8", "runtimes-cu11-cu12-cudnn-wheels",
                 "runtimes-stale-ld-library-path"):
        for result in run_checks(load_facts(name), Requirements()):
            assert result.name in CHECK_NAMES


def test_runtimes_are_compared_with_each_other_without_a_cuda_torch(load_facts):
    facts = load_facts("runtimes-healthy")
    facts = dataclasses.replace(facts, torch_build="cpu", torch_version="2.5.1+cpu", torch_cuda=None,
                                cudnn_version=None)
    facts.packages["tensorflow"] = "2.16.1"  # CUDA 12.3 but cuDNN 8.9, against the cuDNN 9 of the others
    by_found = {result.found: result for result in named(rows(facts), "gpu-runtimes")}
    assert by_found["tensorflow 2.16.1 (CUDA 12.3, cuDNN 8.9)"].status == FAIL
    assert by_found["cupy-cuda12x 13.3.0 (CUDA 12)"].status == PASS


def test_onnxruntime_cpu_beside_gpu_fails(load_facts):
    facts = load_facts("runtimes-healthy")
    facts.packages["onnxruntime"] = "1.20.1"
    [row] = named(rows(facts), "onnxruntime-flavours")
    assert row.status == FAIL and "pip uninstall -y onnxruntime onnxruntime-gpu" in row.advice
    facts.package_builds[ORT_BUILD] = {"package_name": "onnxruntime"}
    [row] = named(rows(facts), "onnxruntime-flavours")
    assert "the files in place are onnxruntime's" in row.advice


def test_tensorflow_on_windows_has_no_gpu_build(load_facts):
    facts = load_facts("runtimes-healthy")
    facts = dataclasses.replace(facts, platform="win32", libraries=None)
    facts.packages["tensorflow"] = "2.15.0"
    by_found = {result.found: result for result in named(rows(facts), "gpu-runtimes")}
    assert by_found["tensorflow 2.15.0 (no CUDA)"].status == SKIP


def test_without_a_loader_scan_a_missing_cudnn_is_only_a_warning(load_facts):
    facts = dataclasses.replace(load_facts("runtimes-torch-cu12-ort-cudnn8"), libraries=None)
    [ort] = named(rows(facts), "gpu-runtimes")
    assert ort.status == WARN


@pytest.mark.parametrize("declared, status", [(">=1.19", FAIL), ("<1.19", PASS)])
def test_declared_runtime_packages_are_judged_like_torch(load_facts, declared, status):
    requirements = parse_requirements({"onnxruntime-gpu": declared, "tensorflow": ">=2.16"})
    results = named(rows(load_facts("runtimes-torch-cu12-ort-cudnn8"), requirements), "declared-packages")
    assert [(r.status, r.found) for r in results] == [(status, "onnxruntime-gpu 1.18.0"),
                                                      (FAIL, "tensorflow not installed")]


def test_unknown_runtime_key_is_still_a_config_error():
    with pytest.raises(ConfigError, match="onnx-runtime"):
        parse_requirements({"onnx-runtime": ">=1.19"})
    with pytest.raises(ConfigError, match="onnxruntime-gpu"):
        parse_requirements({"onnxruntime-gpu": "1.19+"})


@pytest.mark.parametrize("name, version, requires, platform, cuda, cudnn", [
    ("onnxruntime-gpu", "1.18.0", (), "linux", "11.8", "8"),
    ("onnxruntime-gpu", "1.20.1", (), "linux", "12", "9"),
    ("onnxruntime-gpu", "1.12.1", (), "linux", "11.4", "8.2"),
    ("tensorflow", "2.16.1", (), "linux", "12.3", "8.9"),
    ("tensorflow", "2.14.0", (), "linux", "11.8", "8.7"),
    ("tensorflow", "2.10.0", (), "win32", "11.2", "8.1"),
    ("tensorflow", "2.16.1", (), "darwin", None, None),
    ("tensorflow", "2.18.0", ('nvidia-cudnn-cu12==9.3.0.75; extra == "and-cuda"',), "linux", "12", "9.3"),
    ("jaxlib", "0.4.23+cuda12.cudnn89", (), "linux", "12", "8.9"),
    ("jax-cuda12-plugin", "0.4.35", ('nvidia-cudnn-cu12<10.0,>=9.1; extra == "with-cuda"',), "linux", "12", "9.1"),
    ("jax-cuda13-plugin", "0.7.2", (), "linux", "13", "9"),
    ("paddlepaddle-gpu", "2.6.1.post117", (), "linux", "11.7", "8.4"),
    ("cupy-cuda12x", "13.3.0", (), "linux", "12", None),
    ("cupy-cuda102", "9.6.0", (), "linux", "10.2", None),
    ("torch", "2.5.1+cu124", (), "linux", "12.4", None),
])
def test_runtime_needs(name, version, requires, platform, cuda, cudnn):
    need = runtime_needs(name, version, requires, platform)
    assert (need.cuda, need.cudnn) == (cuda, cudnn)
    assert need.source


ORT_BUILD = "onnxruntime/capi/build_and_package_info.py"
TF_BUILD = "tensorflow/python/platform/build_info.py"


@pytest.mark.parametrize("name, version, builds, cuda, cudnn, source", [
    # a build from ONNX Runtime's CUDA 12 feed, not PyPI's default CUDA 11.8 one
    ("onnxruntime-gpu", "1.18.0", {ORT_BUILD: {"package_name": "onnxruntime-gpu", "cuda_version": "12.2"}},
     "12.2", "8", ORT_BUILD),
    ("onnxruntime-gpu", "1.23.0", {ORT_BUILD: {"package_name": "onnxruntime-gpu", "cuda_version": "13.0"}},
     "13.0", "9", "support-matrix"),
    # the files belong to the CPU package that overwrote them: the table decides
    ("onnxruntime-gpu", "1.18.0", {ORT_BUILD: {"package_name": "onnxruntime"}}, "11.8", "8", ORT_DOC),
    ("tensorflow", "2.17.0", {TF_BUILD: {"cuda_version": "12.3", "cudnn_version": "8"}}, "12.3", "8", TF_BUILD),
])
def test_the_installed_build_record_wins_over_the_table(name, version, builds, cuda, cudnn, source):
    need = runtime_needs(name, version, (), "linux", builds)
    assert (need.cuda, need.cudnn) == (cuda, cudnn) and source in need.source


def test_runtime_needs_is_none_for_what_it_does_not_know():
    assert runtime_needs("numpy", "2.0.0") is None
    assert runtime_needs("jaxlib", "0.4.35") is None  # CPU jaxlib; the CUDA part is the plugin


def test_every_table_row_cites_its_source():
    data = table()
    rows_ = data["release"] + data["cuda-build"] + data["name"]
    assert len(rows_) > 30
    for row in rows_:
        assert row["source"].startswith("https://"), row


def test_library_context_for_explain(load_facts):
    facts = load_facts("runtimes-torch-cu12-ort-cudnn8")
    text = library_context("libcudnn_cnn_infer.so.8", facts)
    assert text.startswith("libcudnn_cnn_infer.so.8 is cuDNN 8.")
    assert "onnxruntime-gpu 1.18.0 (CUDA 11.8, cuDNN 8) needs cuDNN 8." in text
    assert "torch 2.5.1+cu124 (CUDA 12.4, cuDNN 9.1.0) uses cuDNN 9." in text
    assert text.endswith("Not found on the loader's search path.")
    assert "Found: /opt/venv/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so.9 (site-packages)." in \
        library_context("libcudnn.so.9", facts)
    assert library_context(r"C:\\x\\cudart64_110.dll", facts).startswith("C:")
    assert library_context("libtorch_cuda.so", facts) is None


def test_cuda13_runtime_wheels_without_a_suffix_provide_cuda_13(load_facts):
    facts = dataclasses.replace(load_facts("runtimes-healthy"), libraries=[])
    facts.packages["cupy-cuda13x"] = "14.0.0"
    [row] = [r for r in named(rows(facts), "gpu-runtimes") if r.found.startswith("cupy-cuda13x")]
    assert row.status == FAIL  # CUDA 13 nowhere
    facts.packages["nvidia-cuda-runtime"] = "13.0.96"  # CUDA 13's unsuffixed wheel name
    [row] = [r for r in named(rows(facts), "gpu-runtimes") if r.found.startswith("cupy-cuda13x")]
    assert row.status == WARN and "nvidia-cuda-runtime 13.0.96" in row.advice
