"""Pinned real-world corpora: a released package's files, fetched by name with pip.

A corpus is unpacked once into `<cache>/<name>-<version>/` (outside the repository)
and reused from there; the benchmark works on a throw-away copy of it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

# transformers 5.23.0 and espnet 202511 were the newest releases on the index when pinned.
PINNED = {
    "timm": "1.0.31",
    "transformers": "5.23.0",
    "espnet": "202511",
    # the training corpus: trainers, RL, distillation, detection, robotics (newest when pinned)
    "trl": "1.16.0",
    "stable-baselines3": "2.9.2",
    "torchdistill": "1.1.5",
    "ultralytics": "8.4.190",
    "lerobot": "0.4.4",
    "pytorch-lightning": "2.6.6",
}
# `--corpus training` in bench/run.py: training loops, trainers and losses, where TL001,
# TL003 and TL005 look (timm and transformers are mostly model code)
TRAINING = ("trl", "stable-baselines3", "torchdistill", "ultralytics", "lerobot", "pytorch-lightning")
DEFAULT_CACHE = Path.home() / ".cache" / "torchlint-bench" / "corpora"


def corpus_dir(name: str, cache: Path) -> Path:
    return cache / f"{name}-{PINNED[name]}"


def fetch(name: str, cache: Path) -> Path:
    """The unpacked corpus, downloaded (`pip download --no-deps`) if not cached yet."""
    target = corpus_dir(name, cache)
    if target.is_dir():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".fetch-") as scratch:
        downloads = Path(scratch) / "download"
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
             "-d", str(downloads), f"{name}=={PINNED[name]}"],
            check=True,
        )
        (archive,) = downloads.iterdir()
        unpacked = Path(scratch) / "unpacked"
        unpack(archive, unpacked)
        unpacked.rename(target)  # same filesystem: appears whole or not at all
    return target


def unpack(archive: Path, destination: Path) -> None:
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as bundle:
            bundle.extractall(destination)
    else:
        with tarfile.open(archive) as bundle:
            bundle.extractall(destination, filter="data")


def working_copy(tree: Path, scratch: Path) -> Path:
    """A copy the benchmark may write into (cache directory, the touched file)."""
    copy = scratch / tree.name
    shutil.copytree(tree, copy, ignore=shutil.ignore_patterns(".torchlint_cache", "__pycache__", ".ruff_cache"))
    return copy
