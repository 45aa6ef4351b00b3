"""Which CUDA libraries the dynamic loader would find, and whether they are the ones expected.

Probe half: `scan_libraries` lists every libcudnn*/libcublas*/libcudart*/libnccl*/libcuda*
(Windows: cudnn*64_N.dll, cublas64_N.dll, cudart64_N.dll) on LD_LIBRARY_PATH (Windows:
PATH), in site-packages (nvidia/*/lib, nvidia/*/bin, torch/lib) and in ld.so.cache, in the
order the loader searches them. Versions come from file names, symlink targets and
cudnn_version.h; nothing is ever loaded.

Check half: `check_loader` names the library that wins the search for each soname torch (or
another runtime) needs when it is not the expected one, and `check_wsl_libcuda` checks that
WSL2's libcuda comes from /usr/lib/wsl/lib.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from packaging.version import InvalidVersion, Version

from torchlint.doctor.facts import Facts, LibraryFile
from torchlint.core.runtime_requirements import Requirements
from torchlint.doctor.results import FAIL, PASS, WARN, CheckResult

# The library each family's soname check looks up: cuDNN's sub-libraries follow libcudnn.
MAIN_STEM = {"cudnn": "cudnn", "cublas": "cublas", "cudart": "cudart", "nccl": "nccl", "cuda": "cuda"}
SEARCHED_FIRST = ("LD_LIBRARY_PATH", "PATH")  # sources a user sets, that shadow the shipped copies
WSL_DRIVER_DIR = "/usr/lib/wsl/lib"
# https://docs.nvidia.com/cuda/wsl-user-guide/index.html: the Windows driver is mapped into
# WSL2 as /usr/lib/wsl/lib/libcuda.so.1; a Linux driver or toolkit stub installed inside
# WSL2 shadows it.
WSL_GUIDE = "https://docs.nvidia.com/cuda/wsl-user-guide/index.html"
LDCONFIG_TIMEOUT = 5.0

_FAMILY = "cudnn|cublas|cudart|nccl|cuda"
_LINUX_NAME = re.compile(rf"^lib(?P<stem>(?P<family>{_FAMILY})[A-Za-z_]*)\.so(?:\.(?P<version>\d+(?:\.\d+)*))?$")
_WINDOWS_NAME = re.compile(rf"^(?P<stem>(?P<family>{_FAMILY})[A-Za-z_]*?)(?:64)?_(?P<version>\d+)\.dll$",
                           re.IGNORECASE)
_LDCONFIG_LINE = re.compile(r"^\s*(?P<name>\S+)\s+\(.*\)\s+=>\s+(?P<path>\S.*)$")
_CUDNN_DEFINE = re.compile(r"#define\s+CUDNN_(MAJOR|MINOR|PATCHLEVEL)\s+(\d+)")


class LibraryName(NamedTuple):
    family: str
    stem: str
    major: Optional[int]
    version: Optional[str]


def parse_library_name(name: str) -> Optional[LibraryName]:
    """'libcudnn_cnn_infer.so.8' -> (cudnn, cudnn_cnn_infer, 8, '8'); 'cudart64_110.dll' -> (cudart, cudart, 11, None).

    The one reading of CUDA library file names, for the doctor's loader scan and for explain
    (a log that names `cudnn64_9.dll` or `libcublasLt.so.11`). None for anything else.
    """
    match = _LINUX_NAME.match(name)
    if match:
        version = match.group("version")
        major = int(version.split(".")[0]) if version else None
        return LibraryName(match.group("family"), match.group("stem"), major, version)
    match = _WINDOWS_NAME.match(name)
    if match:
        digits = match.group("version")
        # cudart64_110.dll is CUDA 11.0, cublas64_12.dll is 12, cudnn64_9.dll is cuDNN 9
        major = int(digits[:2]) if len(digits) == 3 else int(digits)
        family = match.group("family").lower()
        return LibraryName(family, match.group("stem"), major, None)
    return None


# --- probe -------------------------------------------------------------------------------


def scan_libraries(
    search_path: str,
    site_dirs: Sequence[str],
    windows: bool = False,
    ld_cache: Iterable[Tuple[str, str]] = (),
) -> List[LibraryFile]:
    """Every CUDA library the loader could find, in search order, without loading any.

    `search_path` is LD_LIBRARY_PATH (PATH on Windows); `ld_cache` the (name, path) pairs
    of `ldconfig -p`, searched after it, as ld.so does.
    """
    found: List[LibraryFile] = []
    source = "PATH" if windows else "LD_LIBRARY_PATH"
    for directory in _unique(filter(None, search_path.split(os.pathsep))):
        found.extend(_scan_directory(directory, source))
    for directory in _package_library_dirs(site_dirs):
        found.extend(_scan_directory(directory, "site-packages"))
    seen = {library.path for library in found}
    for name, path in ld_cache:
        parsed = parse_library_name(name)
        # unversioned names are link-time symlinks; the loader looks up sonames
        if parsed is None or parsed.major is None or path in seen:
            continue
        seen.add(path)
        found.append(_library(path, parsed, "ld.so.cache"))
    return found


_LD_CACHE: Dict[Optional[int], List[Tuple[str, str]]] = {}


def ld_cache_entries() -> List[Tuple[str, str]]:
    """(name, path) pairs of the CUDA libraries in ld.so.cache (`ldconfig -p`), in its order;
    run again only when /etc/ld.so.cache changes (a repeated `verify()` spawns no process)."""
    try:
        version: Optional[int] = os.stat("/etc/ld.so.cache").st_mtime_ns
    except OSError:
        version = None
    if version is None or version not in _LD_CACHE:
        found = _read_ld_cache()
        if version is None:
            return found
        _LD_CACHE.clear()
        _LD_CACHE[version] = found
    return list(_LD_CACHE[version])


def _read_ld_cache() -> List[Tuple[str, str]]:
    ldconfig = shutil.which("ldconfig") or next(
        (path for path in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(path)), None)
    if ldconfig is None:
        return []
    try:
        completed = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=LDCONFIG_TIMEOUT)
    except (OSError, subprocess.SubprocessError):
        return []
    entries = []
    for line in completed.stdout.splitlines():
        match = _LDCONFIG_LINE.match(line)
        if match and parse_library_name(match.group("name")) is not None:
            entries.append((match.group("name"), match.group("path").strip()))
    return entries


def running_on_wsl(osrelease_path: str = "/proc/sys/kernel/osrelease") -> bool:
    """True under WSL (its kernel release names Microsoft)."""
    try:
        with open(osrelease_path, encoding="utf-8", errors="replace") as handle:
            return "microsoft" in handle.read().lower()
    except OSError:
        return False


def _unique(items: Iterable[str]) -> List[str]:
    return list(dict.fromkeys(items))


def _package_library_dirs(site_dirs: Sequence[str]) -> List[str]:
    dirs: List[str] = []
    for site in _unique(site_dirs):
        nvidia = os.path.join(site, "nvidia")
        try:
            packages = sorted(os.listdir(nvidia))
        except OSError:
            packages = []
        for package in packages:
            for sub in ("lib", "bin"):
                candidate = os.path.join(nvidia, package, sub)
                if os.path.isdir(candidate):
                    dirs.append(candidate)
        torch_lib = os.path.join(site, "torch", "lib")
        if os.path.isdir(torch_lib):
            dirs.append(torch_lib)
    return dirs


def _scan_directory(directory: str, source: str) -> List[LibraryFile]:
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    parsed = [(name, parse_library_name(name)) for name in names]
    # The loader asks for a soname (libcudnn.so.8); libcudnn.so.8.9.2 and the unversioned
    # dev symlink are the same library, so one entry per (stem, major), the shortest name.
    chosen: Dict[Tuple[str, Optional[int]], Tuple[str, LibraryName]] = {}
    fullest: Dict[Tuple[str, Optional[int]], str] = {}
    for name, library in parsed:
        if library is None:
            continue
        key = (library.stem, library.major)
        current = chosen.get(key)
        if current is None or len(name) < len(current[0]):
            chosen[key] = (name, library)
        if library.version and len(library.version) > len(fullest.get(key, "")):
            fullest[key] = library.version
    majors_of = {(stem, major) for stem, major in chosen if major is not None}
    return [
        _library(os.path.join(directory, name), library._replace(version=fullest.get(key, library.version)), source)
        for key, (name, library) in sorted(chosen.items(), key=lambda item: item[1][0])
        if key[1] is not None or not any(stem == key[0] for stem, _ in majors_of)
    ]


def _library(path: str, name: LibraryName, source: str) -> LibraryFile:
    version = name.version
    target = parse_library_name(os.path.basename(os.path.realpath(path)))
    if target is not None and target.version and len(target.version) > len(version or ""):
        version = target.version
    major = name.major if name.major is not None else (target.major if target else None)
    if name.family == "cudnn" and (version is None or "." not in version):
        version = _cudnn_header_version(os.path.dirname(path), major) or version
    return LibraryFile(path=path, family=name.family, stem=name.stem, major=major, version=version, source=source)


def _cudnn_header_version(lib_dir: str, major: Optional[int]) -> Optional[str]:
    """cuDNN's version from include/cudnn_version.h beside lib/ (the nvidia-cudnn wheels' layout)."""
    for header in ("cudnn_version.h", "cudnn.h"):
        path = os.path.join(os.path.dirname(lib_dir), "include", header)
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                defines = dict(_CUDNN_DEFINE.findall(handle.read(65536)))
        except OSError:
            continue
        if "MAJOR" in defines and (major is None or int(defines["MAJOR"]) == major):
            return ".".join(defines.get(part, "0") for part in ("MAJOR", "MINOR", "PATCHLEVEL"))
    return None


# --- checks ------------------------------------------------------------------------------


class Expectation(NamedTuple):
    family: str
    major: int
    minimum: Optional[str]  # the lowest version of that major that works, when known
    who: str  # "torch 2.5.1+cu124", "onnxruntime-gpu 1.20.1"


def soname(family: str, major: Optional[int], windows: bool = False) -> str:
    """The name a loader asks for: ('cudnn', 9) -> 'libcudnn.so.9' (Windows: 'cudnn64_9.dll')."""
    if windows:
        return f"{MAIN_STEM[family]}64_{major if major is not None else '*'}.dll"
    return f"lib{MAIN_STEM[family]}.so.{major if major is not None else '*'}"


def check_loader(facts: Facts, req: Requirements, expectations: Sequence[Expectation]) -> List[CheckResult]:
    """For each soname a runtime needs: the file that wins the search, named when it is not the expected one."""
    if facts.libraries is None:
        return []
    windows = (facts.platform or "").startswith("win")
    results = []
    for family, group in _by_family(expectations).items():
        mains = [lib for lib in facts.libraries if lib.family == family and lib.stem.lower() == MAIN_STEM[family]]
        if not mains:
            continue
        results.extend(_judge_family(family, group, mains, windows))
    return results


def _by_family(expectations: Sequence[Expectation]) -> Dict[str, List[Expectation]]:
    grouped: Dict[str, List[Expectation]] = {}
    for expectation in expectations:
        grouped.setdefault(expectation.family, []).append(expectation)
    return grouped


def _judge_family(family: str, expectations: List[Expectation], mains: List[LibraryFile],
                  windows: bool) -> List[CheckResult]:
    name = "runtime-loader"
    results = []
    wanted_majors = {e.major for e in expectations}
    first = mains[0]
    if first.major not in wanted_majors and first.source in SEARCHED_FIRST:
        whom = ", ".join(f"{e.who} expects {family} {e.major}" for e in expectations)
        results.append(CheckResult(
            name, WARN, f"{_describe(first)} is first", f"{family} {' or '.join(map(str, sorted(wanted_majors)))}",
            f"{first.source} puts {first.path} first ({whom}). A library asked for by another major's soname "
            f"still loads the right file, but anything that loads the unversioned name or links against this "
            f"directory gets {family} {first.major}. Remove that directory from {first.source} unless a "
            "program needs it."))
    for expectation in expectations:
        wanted = soname(family, expectation.major, windows)
        winner = next((lib for lib in mains if lib.major == expectation.major), None)
        if winner is None:
            continue
        found = f"{wanted} -> {_describe(winner)}"
        too_old = _older(winner.version, expectation.minimum)
        shipped = next((lib for lib in mains if lib.major == expectation.major and lib.source == "site-packages"),
                       None)
        if too_old:
            results.append(CheckResult(
                name, FAIL, found, f">= {expectation.minimum} for {expectation.who}",
                f"{expectation.who} needs {family} >= {expectation.minimum} but the loader finds "
                f"{winner.path} ({winner.version}, from {winner.source}) first. Expect version-mismatch errors "
                "(torch: \"cuDNN version incompatibility\"; TensorFlow: \"Loaded runtime CuDNN library ... but "
                "source was compiled with\") or missing symbols. Remove that "
                f"directory from {winner.source} or upgrade the library there."))
        elif winner.source in SEARCHED_FIRST and shipped is not None and shipped.path != winner.path:
            results.append(CheckResult(
                name, WARN, found, f"{shipped.path} ({expectation.who})",
                f"{winner.source} shadows the copy installed with the Python packages ({shipped.path}); it "
                f"works only while the two stay the same version. Prefer removing it from {winner.source}."))
        else:
            results.append(CheckResult(name, PASS, found, f"{family} {expectation.major} for {expectation.who}"))
    return results


def _describe(library: LibraryFile) -> str:
    version = f" {library.version}" if library.version else ""
    return f"{library.path}{version} ({library.source})"


def _older(found: Optional[str], minimum: Optional[str]) -> bool:
    if not found or not minimum:
        return False
    try:
        found_version, minimum_version = Version(found), Version(minimum)
    except InvalidVersion:
        return False
    width = len(minimum_version.release)  # 9.1 needs 9.1.x: compare as many parts as the minimum gives
    if len(found_version.release) < width:
        return False  # "8" from a bare soname says nothing about the minor
    return found_version.release[:width] < minimum_version.release[:width]


def check_wsl_libcuda(facts: Facts, req: Requirements) -> List[CheckResult]:
    """On WSL2 the driver's libcuda.so.1 must be the one in /usr/lib/wsl/lib."""
    if not facts.wsl or facts.libraries is None:
        return []
    name, expected = "wsl-libcuda", f"{WSL_DRIVER_DIR}/libcuda.so.1"
    first = next((lib for lib in facts.libraries if lib.family == "cuda" and lib.stem == "cuda" and lib.major == 1),
                 None)
    if first is None:
        return [CheckResult(name, WARN, "no libcuda.so.1 found", expected,
                            f"Install or update the NVIDIA driver on Windows; WSL2 maps it into {WSL_DRIVER_DIR} "
                            f"({WSL_GUIDE}).")]
    if os.path.dirname(first.path).rstrip("/") != WSL_DRIVER_DIR:
        return [CheckResult(name, FAIL, _describe(first), expected,
                            f"{first.path} shadows the WSL2 driver library: a Linux driver or a toolkit stub "
                            "inside WSL2 cannot drive the GPU (\"CUDA driver version is insufficient\" or "
                            "\"no CUDA-capable device\"). Remove it (do not install a Linux NVIDIA driver "
                            f"inside WSL2) or take its directory off {first.source} ({WSL_GUIDE}).")]
    return [CheckResult(name, PASS, _describe(first), expected)]
