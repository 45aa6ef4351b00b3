"""The torch wheels that exist: CUDA variants per release and the kernels each variant ships.

Read from torchlint/data/torch_wheels.toml. Install advice names only a variant published for the
release in question, and prefers one whose shipped arch list runs the GPU at hand.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional, Tuple

from packaging.specifiers import SpecifierSet

from torchlint.doctor.archs import kernel_coverage
from torchlint.doctor.compat import cuda_builds_for, cuda_of_tag

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TABLE_PATH = Path(__file__).resolve().parent.parent / "data" / "torch_wheels.toml"
INDEX_URL = "https://download.pytorch.org/whl/"
PREVIOUS_VERSIONS_PAGE = "https://pytorch.org/get-started/previous-versions/"


@dataclass(frozen=True)
class Shipped:
    release: str
    variant: str
    archs: Tuple[str, ...]
    source: str


@dataclass(frozen=True)
class WheelTable:
    variants: Dict[str, Tuple[str, ...]]  # "2.8" -> ("cu126", "cu128", "cu129")
    shipped: Tuple[Tuple[SpecifierSet, str, Shipped], ...]  # (releases, "linux"/"windows", row)
    partial: FrozenSet[str]  # releases whose variants are known only from their [[archs]] rows


@lru_cache(maxsize=1)
def load_table() -> WheelTable:
    data = tomllib.loads(TABLE_PATH.read_text(encoding="utf-8"))
    variants = {row["torch"]: tuple(row["variants"]) for row in data["release"]}
    shipped = tuple((SpecifierSet(row["torch"]), row.get("platform", "linux"),
                     Shipped(row["torch"].lstrip("="), variant, tuple(row["archs"]), row["source"]))
                    for row in data["archs"] for variant in row["variants"])
    # a release without a [[release]] row: the variants its arch rows were read from exist
    seen: Dict[str, Dict[str, None]] = {}
    for row in data["archs"]:
        release = row["torch"][2:] if row["torch"].startswith("==") else None
        if release is not None and release not in variants:
            seen.setdefault(release, {}).update(dict.fromkeys(row["variants"]))
    found = {release: tuple(sorted(names, key=_cuda_order)) for release, names in seen.items()}
    return WheelTable({**variants, **found}, shipped, frozenset(found))


def _cuda_order(variant: str) -> Tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", variant)) or (0,)


def release_of(torch_version: str) -> str:
    """'2.8.0+cu128' -> '2.8'."""
    return ".".join(torch_version.split("+")[0].split(".")[:2])


def variants_of(torch_version: str) -> Optional[Tuple[str, ...]]:
    """The CUDA variants published for this torch release, or None if the table does not know it."""
    return load_table().variants.get(release_of(torch_version))


def shipped(torch_version: str, variant: str, platform: Optional[str] = None) -> Optional[Shipped]:
    """The arch list the wheels of this release and variant ship on this platform (Linux unless it names
    Windows), if the table has it."""
    wanted = "windows" if (platform or "linux").lower().startswith("win") else "linux"
    release = release_of(torch_version)
    for spec, row_platform, row in load_table().shipped:
        if (row.variant == variant and row_platform == wanted
                and spec.contains(release + ".0" if release.count(".") == 1 else release)):
            return row
    return None


def runs_on(archs: Tuple[str, ...], capability: str) -> bool:
    """Whether a wheel with these archs has kernels this GPU runs, judged as torch does (a cubin of its major)."""
    cubin, _ = kernel_coverage(capability, list(archs))
    return cubin is not None


def variant_runs(torch_version: str, variant: str, capability: str, platform: Optional[str] = None) -> Optional[bool]:
    """Whether the wheels of this variant run the GPU: from their arch list; without one, False only when the
    variant's CUDA cannot build kernels for the GPU at all (a cu126 wheel has no sm_37); else unknown."""
    row = shipped(torch_version, variant, platform)
    if row is not None:
        return runs_on(row.archs, capability)
    cuda = cuda_of_tag(variant)
    support = cuda_builds_for(cuda, capability) if cuda else None
    return False if support is not None and not support[0] else None


def variants_for_gpu(torch_version: str, capability: Optional[str],
                     platform: Optional[str] = None) -> List[Tuple[str, Optional[bool]]]:
    """Each published variant of the release, newest first, with whether its wheels run the GPU
    (None when that is not known, or the GPU is unknown)."""
    return [(variant, variant_runs(torch_version, variant, capability, platform) if capability else None)
            for variant in reversed(variants_of(torch_version) or ())]


def install_command(torch_version: str, variant: str) -> str:
    return f"pip install torch=={torch_version.split('+')[0]} --index-url {INDEX_URL}{variant}"


def cuda_install_advice(torch_version: str, capability: Optional[str] = None, platform: Optional[str] = None) -> str:
    """How to get a CUDA build of this torch release: a variant that exists, one that runs the GPU if known."""
    options = variants_for_gpu(torch_version, capability, platform)
    if not options:
        return (f"No CUDA variants of torch {release_of(torch_version)} are in torchlint's table; pick one that "
                f"exists at {PREVIOUS_VERSIONS_PAGE}.")
    running = [variant for variant, ok in options if ok]
    unknown = [variant for variant, ok in options if ok is None]
    chosen = (running or unknown or [options[0][0]])[0]
    published = ", ".join(variant for variant, _ in reversed(options))
    if release_of(torch_version) in load_table().partial:
        published = f"at least {published}"
    note = ""
    if capability and not running and not unknown:
        note = (f" None of these ships kernels for sm_{capability.replace('.', '')}: use an older torch release "
                f"({PREVIOUS_VERSIONS_PAGE}).")
    return (f"`{install_command(torch_version, chosen)}` (torch {release_of(torch_version)} was published for "
            f"{published}).{note}")
