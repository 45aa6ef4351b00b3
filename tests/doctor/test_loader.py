"""The loader scan (file names, symlinks, headers; nothing loaded) and the WSL2 libcuda check."""

import os

import pytest

from torchlint.doctor.facts import Facts, LibraryFile
from torchlint.doctor.loader import (
    check_wsl_libcuda,
    parse_library_name,
    running_on_wsl,
    scan_libraries,
    soname,
)
from torchlint.core.runtime_requirements import Requirements
from torchlint.doctor.results import FAIL, PASS, WARN


@pytest.mark.parametrize("name, family, stem, major", [
    ("libcudnn.so.8", "cudnn", "cudnn", 8),
    ("libcudnn_cnn_infer.so.8", "cudnn", "cudnn_cnn_infer", 8),
    ("libcudnn.so.9.1.0", "cudnn", "cudnn", 9),
    ("libcublasLt.so.12", "cublas", "cublasLt", 12),
    ("libcudart.so.11.0", "cudart", "cudart", 11),
    ("libnccl.so.2", "nccl", "nccl", 2),
    ("libcuda.so.1", "cuda", "cuda", 1),
    ("libcudnn.so", "cudnn", "cudnn", None),
    ("cudnn64_9.dll", "cudnn", "cudnn", 9),
    ("cudnn_cnn_infer64_8.dll", "cudnn", "cudnn_cnn_infer", 8),
    ("cudart64_110.dll", "cudart", "cudart", 11),
    ("cublasLt64_12.dll", "cublas", "cublasLt", 12),
])
def test_parse_library_name(name, family, stem, major):
    parsed = parse_library_name(name)
    assert (parsed.family, parsed.stem, parsed.major) == (family, stem, major)


@pytest.mark.parametrize("name", ["libcufft.so.11", "libtorch_cuda.so", "libcudnn.a", "nvcuda.dll", "cudnn.h"])
def test_other_files_are_not_cuda_libraries(name):
    assert parse_library_name(name) is None


def test_soname():
    assert soname("cudnn", 9) == "libcudnn.so.9" and soname("cudart", 11, windows=True) == "cudart64_11.dll"


def touch(path, text=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_scan_follows_the_search_order_and_reads_versions_without_loading(tmp_path):
    stale = tmp_path / "opt" / "cuda" / "lib64"
    touch(stale / "libcudnn.so.8.5.0", "not an ELF: a loaded file would fail loudly")
    os.symlink("libcudnn.so.8.5.0", stale / "libcudnn.so.8")
    os.symlink("libcudnn.so.8", stale / "libcudnn.so")
    site = tmp_path / "site"
    touch(site / "nvidia" / "cudnn" / "lib" / "libcudnn.so.9")
    touch(site / "nvidia" / "cudnn" / "lib" / "libcudnn_cnn.so.9")
    touch(site / "nvidia" / "cudnn" / "include" / "cudnn_version.h",
          "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n")
    touch(site / "nvidia" / "cublas" / "lib" / "libcublas.so.12")
    touch(site / "nvidia" / "cublas" / "lib" / "libcublasLt.so.12")
    cache = [("libcudnn.so.8", "/usr/lib/x86_64-linux-gnu/libcudnn.so.8"), ("libcudnn.so", "/usr/lib/libcudnn.so")]
    found = scan_libraries(f"{stale}{os.pathsep}{tmp_path / 'missing'}", [str(site), str(site)], ld_cache=cache)
    assert [(lib.path, lib.major, lib.version, lib.source) for lib in found] == [
        (str(stale / "libcudnn.so.8"), 8, "8.5.0", "LD_LIBRARY_PATH"),
        (str(site / "nvidia/cublas/lib/libcublas.so.12"), 12, "12", "site-packages"),
        (str(site / "nvidia/cublas/lib/libcublasLt.so.12"), 12, "12", "site-packages"),
        (str(site / "nvidia/cudnn/lib/libcudnn.so.9"), 9, "9.1.0", "site-packages"),
        (str(site / "nvidia/cudnn/lib/libcudnn_cnn.so.9"), 9, "9.1.0", "site-packages"),
        ("/usr/lib/x86_64-linux-gnu/libcudnn.so.8", 8, "8", "ld.so.cache"),
    ]


def test_scan_on_windows_reads_dll_names_from_path(tmp_path):
    bin_dir = tmp_path / "CUDA" / "v11.8" / "bin"
    for name in ("cudnn64_8.dll", "cudnn_cnn_infer64_8.dll", "cudart64_110.dll", "cublas64_11.dll", "nvcuda.dll"):
        touch(bin_dir / name)
    found = scan_libraries(str(bin_dir), [], windows=True)
    assert {(lib.stem, lib.major, lib.source) for lib in found} == {
        ("cudnn", 8, "PATH"), ("cudnn_cnn_infer", 8, "PATH"), ("cudart", 11, "PATH"), ("cublas", 11, "PATH")}


def wsl_facts(*paths):
    return Facts(platform="linux", wsl=True, libraries=[
        LibraryFile(path=path, family="cuda", stem="cuda", major=1, source=source) for path, source in paths])


def test_wsl_libcuda_must_come_from_usr_lib_wsl_lib():
    shadowed = wsl_facts(("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "ld.so.cache"),
                         ("/usr/lib/wsl/lib/libcuda.so.1", "ld.so.cache"))
    [row] = check_wsl_libcuda(shadowed, Requirements())
    assert row.status == FAIL and "/usr/lib/x86_64-linux-gnu/libcuda.so.1" in row.found
    [row] = check_wsl_libcuda(wsl_facts(("/usr/lib/wsl/lib/libcuda.so.1", "ld.so.cache")), Requirements())
    assert row.status == PASS
    [row] = check_wsl_libcuda(wsl_facts(), Requirements())
    assert row.status == WARN
    assert check_wsl_libcuda(Facts(platform="linux", wsl=False, libraries=[]), Requirements()) == []


def test_running_on_wsl_reads_the_kernel_release(tmp_path):
    assert running_on_wsl(str(touch(tmp_path / "wsl", "5.15.153.1-microsoft-standard-WSL2\n")))
    assert not running_on_wsl(str(touch(tmp_path / "native", "6.8.0-45-generic\n")))
    assert not running_on_wsl(str(tmp_path / "absent"))
