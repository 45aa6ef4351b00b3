"""Read the GPU arch list a published torch wheel ships, for a row of torchlint/data/torch_wheels.toml.

    python tools/wheel_arch_lists.py 2.6.0 2.7.0 [--cuobjdump PATH] [--dest DIR] [--keep]

For each release: `pip download` the Linux x86_64 wheel from PyPI (the default CUDA variant of that
release), take its CUDA variant from the nvidia-cuda-runtime requirement in METADATA, unzip only
torch/lib/libtorch_cuda*.so, and list the embedded kernels with `cuobjdump --list-elf` (cubins:
sm_XY) and `--list-ptx` (PTX: compute_XY). Prints one [[archs]] row per wheel, cited by the wheel's
file name and sha256, and deletes the wheel unless --keep.

The row's arch list is what nearly every kernel file carries (TORCH_CUDA_ARCH_LIST, what
torch.cuda.get_arch_list() reports); the few kernels built for one more target only (arch-specific sm_90a,
sm_100a for CUTLASS/FlashAttention code; an sm_89 FP8 kernel) are reported on the side, not in the row.

cuobjdump: /usr/local/cuda/bin, PATH, or the `nvidia-cuda-cuobjdump` wheel (pip download it, unzip,
nvidia/cu13/bin/cuobjdump). A tool for refreshing the table; torchlint never imports it.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional, Tuple

PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64")
# CUDA 12 wheels: `nvidia-cuda-runtime-cu12 (==12.4.127)`; CUDA 13: `cuda-toolkit[cublas,cudart,...]==13.0.2`
RUNTIME = re.compile(r"^Requires-Dist: (?:nvidia-cuda-runtime(?:-cu\d+)?|cuda-toolkit\[[^]]*\bcudart\b[^]]*\])"
                     r"\s*\(?==\s*(\d+)\.(\d+)", re.M)
ELF_ENTRY = re.compile(r"\.sm_(\d+[a-z]?)\.cubin\b")
PTX_ENTRY = re.compile(r"\.sm_(\d+[a-z]?)\.ptx\b")
# an arch carried by at least this share of the largest count is part of the build-wide list
COMMON_SHARE = 0.5


def download(release: str, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--python-version", "3.11", "--progress-bar", "off", "-d", str(dest),
               # `===`: exactly this version, never a local build such as 2.13.0+cpu from a find-links folder
               f"torch==={release}"]
    for platform in PLATFORMS:
        command += ["--platform", platform]
    subprocess.run(command, check=True, stdout=sys.stderr)
    wheels = sorted(dest.glob(f"torch-{release}-*.whl"))
    if not wheels:
        raise SystemExit(f"pip downloaded no wheel for torch=={release}")
    return wheels[0]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cuda_variant(wheel: zipfile.ZipFile) -> Optional[str]:
    """'cu124' from the CUDA runtime the wheel requires, None for a CPU wheel."""
    metadata = next(name for name in wheel.namelist() if name.endswith(".dist-info/METADATA"))
    found = RUNTIME.search(wheel.read(metadata).decode("utf-8"))
    return f"cu{found.group(1)}{found.group(2)}" if found else None


def built_as(wheel: zipfile.ZipFile) -> str:
    """torch/version.py's `__version__` and `cuda` (what torch.__version__ / torch.version.cuda report)."""
    text = wheel.read("torch/version.py").decode("utf-8")
    fields = dict(re.findall(r"^(__version__|cuda)\s*(?::\s*[^=]+)?=\s*'?([^'\n]*)'?", text, re.M))
    return f"torch {fields.get('__version__')}, CUDA {fields.get('cuda')}"


def cuda_libraries(wheel: zipfile.ZipFile, into: Path) -> List[Path]:
    members = [name for name in wheel.namelist() if re.fullmatch(r"torch/lib/libtorch_cuda[^/]*\.so", name)]
    return [Path(wheel.extract(name, into)) for name in members]


def listed(cuobjdump: str, option: str, library: Path, entry: re.Pattern, prefix: str) -> Counter:
    """How many kernel files of each target the library embeds ({'sm_80': 393, ...})."""
    # cuobjdump exits non-zero when a library has no PTX at all: an empty list, not an error
    output = subprocess.run([cuobjdump, option, str(library)], capture_output=True, text=True).stdout
    return Counter(prefix + target for target in entry.findall(output))


def in_arch_order(archs) -> List[str]:
    return sorted(archs, key=lambda arch: (int(re.sub(r"\D", "", arch)), arch))


def split_common(counts: Counter) -> Tuple[List[str], List[str]]:
    """(archs nearly every kernel file carries, the rest), each in arch order."""
    if not counts:
        return [], []
    top = max(counts.values())
    ordered = in_arch_order(counts)
    common = [arch for arch in ordered if counts[arch] >= COMMON_SHARE * top]
    return common, [arch for arch in ordered if arch not in common]


def read_wheel(path: Path, cuobjdump: str, scratch: Path) -> Dict:
    with zipfile.ZipFile(path) as wheel:
        variant = cuda_variant(wheel)
        version = built_as(wheel)
        libraries = cuda_libraries(wheel, scratch)
    if not libraries:
        raise SystemExit(f"{path.name} has no torch/lib/libtorch_cuda*.so: not a CUDA build")
    cubins = {lib: listed(cuobjdump, "--list-elf", lib, ELF_ENTRY, "sm_") for lib in libraries}
    # the library with the most kernel files (libtorch_cuda.so; libtorch_cuda_cu.so where it was split)
    main = max(libraries, key=lambda lib: sum(cubins[lib].values()))
    ptx = listed(cuobjdump, "--list-ptx", main, PTX_ENTRY, "compute_")
    sass, sass_extra = split_common(cubins[main])
    ptx_common, ptx_extra = split_common(ptx)
    for lib in libraries:
        lib.unlink()
    return {"wheel": path.name, "built_as": version, "sha256": sha256(path), "variant": variant,
            "library": main.name, "archs": sass + ptx_common, "extra": sass_extra + ptx_extra,
            "counts": dict(cubins[main] + ptx),
            "other_libraries": {lib.name: in_arch_order(cubins[lib]) for lib in libraries if lib != main}}


def toml_row(release: str, found: Dict) -> str:
    archs = ", ".join(f'"{arch}"' for arch in found["archs"])
    return "\n".join([
        "[[archs]]",
        f'torch = "=={".".join(release.split(".")[:2])}"',
        f'variants = ["{found["variant"]}"]',
        f"archs = [{archs}]",
        f'source = "read with cuobjdump from the PyPI wheel {found["wheel"]} (sha256 {found["sha256"][:16]})"',
    ])


def find_cuobjdump(given: Optional[str]) -> str:
    for candidate in (given, shutil.which("cuobjdump"), "/usr/local/cuda/bin/cuobjdump"):
        if candidate and Path(candidate).is_file():
            return candidate
    raise SystemExit("no cuobjdump: pass --cuobjdump (the nvidia-cuda-cuobjdump wheel has one)")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("releases", nargs="+", help="torch releases, e.g. 2.6.0")
    parser.add_argument("--cuobjdump")
    parser.add_argument("--dest", type=Path, default=Path("/tmp/torch-wheel-archs"))
    parser.add_argument("--keep", action="store_true", help="keep the downloaded wheels")
    args = parser.parse_args(argv)
    cuobjdump = find_cuobjdump(args.cuobjdump)
    for release in args.releases:
        wheel = download(release, args.dest)
        found = read_wheel(wheel, cuobjdump, args.dest / f"lib-{release}")
        if not args.keep:
            wheel.unlink()
        print(f"# {release} ({found['built_as']}): kernel files per target in {found['library']} "
              f"{found['counts']}; targets only a few files carry (left out of the row): {found['extra'] or 'none'}; "
              f"targets of the other CUDA libraries: {found['other_libraries']}")
        print(toml_row(release, found) + "\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
