"""The content cache (hits, misses, corruption) and parallel == serial output."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import torchlint.run.cache
from cli_support import FIXTURES, run_torchlint
from torchlint.core.config import Config
from torchlint.rule_api.registry import all_rules
from torchlint.run.jobs import RunSettings
from torchlint.run.runner import run

BAD = "import wandb\n\n\ndef train():\n    wandb.init()\n"


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(BAD)
    config = Config(root=tmp_path)
    return path, RunSettings(config=config, codes=tuple(r.code for r in all_rules()))


def lint(path: Path, settings: RunSettings):
    return run([(path.name, path, None)], settings, workers=1).outcomes[0]


def test_second_run_hits_and_gives_the_same_findings(project):
    path, settings = project
    first, second = lint(path, settings), lint(path, settings)
    assert not first.cached and second.cached
    assert first.diagnostics == second.diagnostics and first.diagnostics


def test_edit_config_and_version_changes_miss(project, monkeypatch):
    path, settings = project
    lint(path, settings)
    path.write_text(BAD + "# edited\n")
    assert not lint(path, settings).cached
    assert lint(path, settings).cached
    other = replace(settings, config=replace(settings.config, rule_options=(("heavy-import-at-module-level", (("lazy-imports", ("wandb", "numba")),)),)))
    assert not lint(path, other).cached
    monkeypatch.setattr(torchlint.run.cache, "__version__", "999.0")
    assert not lint(path, settings).cached


def test_corrupt_and_foreign_entries_are_ignored_and_rebuilt(project):
    path, settings = project
    expected = lint(path, settings).diagnostics
    entries = list((settings.config.root / ".torchlint_cache").rglob("*.json"))
    assert len(entries) == 1
    for garbage in (b"\x00not json", b'{"key": "someone else"}', b'{"key": null, "diagnostics": 3}', b"[]"):
        entries[0].write_bytes(garbage)
        outcome = lint(path, settings)
        assert not outcome.cached and outcome.diagnostics == expected
    assert lint(path, settings).cached


def test_no_cache_neither_reads_nor_writes(project):
    path, settings = project
    lint(path, replace(settings, use_cache=False))
    assert not (settings.config.root / ".torchlint_cache").exists()


def _generated_tree(root: Path, count: int) -> None:
    templates = [
        BAD,
        "import torch\n\n\ndef f(x):\n    return torch.relu(x)\n",
        "from torch.utils.tensorboard import SummaryWriter\n\n\nclass T:\n    def go(self):\n        return SummaryWriter()\n",
        # a finding without a fix (TL001 no longer reports a name used at import time)
        "try:\n    import numba\nexcept ImportError:\n    pass\n\n\ndef jit():\n    return numba.njit\n",
        "def broken(:\n    wandb\n",
    ]
    for index in range(count):
        package = root / f"pkg{index % 7}"
        package.mkdir(exist_ok=True)
        (package / f"mod{index:03}.py").write_text(templates[index % len(templates)])


def test_parallel_and_serial_output_are_identical(tmp_path):
    _generated_tree(tmp_path, 120)  # 60 chunks of the pool's two files
    serial = run_torchlint("check", "--no-cache", "--jobs", "1", "--output-format", "concise", ".", cwd=tmp_path)
    parallel = run_torchlint("check", "--no-cache", "--jobs", "2", "--output-format", "concise", ".", cwd=tmp_path)
    assert serial.returncode == parallel.returncode == 1
    assert serial.stdout == parallel.stdout and serial.stdout.count(b"TL00") >= 96


def test_parallel_and_serial_identical_on_fixtures():
    serial = run_torchlint("check", "--no-cache", "--jobs", "1", "--output-format", "json", ".", cwd=FIXTURES)
    parallel = run_torchlint("check", "--no-cache", "--jobs", "2", "--output-format", "json", ".", cwd=FIXTURES)
    assert serial.stdout == parallel.stdout


def test_warm_cache_gives_the_cold_output(tmp_path):
    _generated_tree(tmp_path, 60)
    cold = run_torchlint("check", "--output-format", "json", ".", cwd=tmp_path)
    warm = run_torchlint("check", "--output-format", "json", ".", cwd=tmp_path)
    assert cold.stdout == warm.stdout


@pytest.mark.slow
def test_concurrent_runs_on_one_cache_agree_and_leave_it_valid(tmp_path):
    import os
    import shutil
    import subprocess
    import sys

    tree = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, tree)
    reference = run_torchlint("check", "--no-cache", "--output-format", "concise", ".", cwd=tree)
    command = [sys.executable, "-m", "torchlint", "check", "--output-format", "concise", "."]
    env = {**os.environ, "NO_COLOR": "1"}
    runs = [subprocess.Popen(command, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for _ in range(4)]
    for process in runs:
        stdout, stderr = process.communicate(timeout=300)
        assert (process.returncode, stdout, stderr) == (reference.returncode, reference.stdout, reference.stderr)
    warm = run_torchlint("check", "--output-format", "concise", ".", cwd=tree)
    assert (warm.returncode, warm.stdout) == (reference.returncode, reference.stdout)
    assert not list((tree / ".torchlint_cache").glob("v*/*.tmp"))
