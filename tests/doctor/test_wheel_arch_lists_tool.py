"""tools/wheel_arch_lists.py, which reads the rows of torchlint/data/torch_wheels.toml from published wheels."""

import importlib.util
import shutil
import subprocess
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("wheel_arch_lists", REPO / "tools" / "wheel_arch_lists.py")
tool = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(tool)

# libtorch_cuda.so of the 2.8.0 PyPI wheel, as the tool counted it
COUNTS_2_8 = {"sm_70": 393, "sm_75": 393, "sm_80": 393, "sm_86": 393, "sm_90": 393, "sm_100": 393, "sm_120": 393,
              "sm_90a": 4, "sm_89": 1, "sm_100a": 1, "sm_120a": 1}


def _wheel(tmp_path, requirement, version, cuda="12.4"):
    path = tmp_path / "torch-9.9.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("torch-9.9.0.dist-info/METADATA",
                       f"Name: torch\nRequires-Dist: filelock\nRequires-Dist: {requirement}\n")
        wheel.writestr("torch/version.py", f"__version__ = '{version}'\ndebug = False\ncuda: Optional[str] = '{cuda}'\n")
    return zipfile.ZipFile(path)


@pytest.mark.parametrize("requirement, variant", [
    ('nvidia-cuda-runtime-cu12 (==12.4.127) ; platform_system == "Linux" and platform_machine == "x86_64"', "cu124"),
    ('nvidia-cuda-runtime-cu12==12.8.90; platform_system == "Linux"', "cu128"),
    ('cuda-toolkit[cublas,cudart,cufft,nvrtc]==13.0.2; platform_system == "Linux"', "cu130"),
    ("cuda-toolkit[cublas]==13.0.2", None),  # no CUDA runtime among the extras
    ("nvidia-nccl-cu12==2.21.5", None),
])
def test_the_variant_comes_from_the_cuda_runtime_the_wheel_requires(tmp_path, requirement, variant):
    assert tool.cuda_variant(_wheel(tmp_path, requirement, "9.9.0+cu124")) == variant


def test_the_build_is_read_from_torch_version_py(tmp_path):
    assert tool.built_as(_wheel(tmp_path, "filelock", "2.6.0+cu124")) == "torch 2.6.0+cu124, CUDA 12.4"


def test_the_row_is_what_nearly_every_kernel_file_carries():
    common, few = tool.split_common(COUNTS_2_8)
    assert common == ["sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
    assert few == ["sm_89", "sm_90a", "sm_100a", "sm_120a"]
    assert tool.split_common({}) == ([], [])


def test_a_printed_row_is_a_row_of_the_table():
    found = {"wheel": "torch-2.8.0-cp311-cp311-manylinux_2_28_x86_64.whl", "sha256": "c12fa219f51a933d" + "0" * 48,
             "variant": "cu128", "archs": tool.split_common(COUNTS_2_8)[0]}
    row = tomllib.loads(tool.toml_row("2.8.0", found))["archs"][0]
    table = tomllib.loads((REPO / "torchlint" / "data" / "torch_wheels.toml").read_text())["archs"]
    existing = next(r for r in table if r["torch"] == "==2.8" and r["variants"] == ["cu128"])
    assert (row["torch"], row["variants"], row["archs"]) == (existing["torch"], existing["variants"], existing["archs"])
    assert row["source"] == ("read with cuobjdump from the PyPI wheel torch-2.8.0-cp311-cp311-manylinux_2_28_x86_64.whl "
                             "(sha256 c12fa219f51a933d)")


def test_torchlint_never_imports_the_tool():
    assert not [path for path in (REPO / "torchlint").rglob("*.py") if "wheel_arch_lists" in path.read_text()]


CUOBJDUMP = shutil.which("cuobjdump") or next(
    (str(path) for path in [Path("/usr/local/cuda/bin/cuobjdump")] if path.is_file()), None)
NVCC = shutil.which("nvcc") or next((str(path) for path in [Path("/usr/local/cuda/bin/nvcc")] if path.is_file()), None)


@pytest.mark.slow
@pytest.mark.skipif(not (CUOBJDUMP and NVCC), reason="needs nvcc and cuobjdump")
def test_cubins_and_ptx_are_counted_from_a_real_library(tmp_path):
    (tmp_path / "k.cu").write_text("__global__ void k(float *x) { x[threadIdx.x] += 1; }\n"
                                   "void run(float *x) { k<<<1, 1>>>(x); }\n")
    subprocess.run([NVCC, "-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_75,code=sm_75",
                    "-gencode", "arch=compute_90,code=[sm_90,compute_90]", "k.cu", "-o", "libk.so"],
                   cwd=tmp_path, check=True)
    library = tmp_path / "libk.so"
    assert sorted(tool.listed(CUOBJDUMP, "--list-elf", library, tool.ELF_ENTRY, "sm_")) == ["sm_75", "sm_90"]
    assert list(tool.listed(CUOBJDUMP, "--list-ptx", library, tool.PTX_ENTRY, "compute_")) == ["compute_90"]
