"""The flags and settings a ruff user reaches for (issue 32, item 5), with ruff's names,
precedence (flags > `--config KEY=VALUE` > the config file > what it `extend`s) and output."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from cli_support import WANDB_USED, run_torchlint, write_tree

LOAD = "import torch\n\n\ndef restore(path):\n    return torch.load(path)\n"


def concise(*args, cwd, env=None):
    return run_torchlint("check", "--no-cache", "--output-format", "concise", *args, cwd=cwd, env=env)


def codes(result) -> list:
    return sorted(line.split(": ")[1].split()[0] for line in result.stdout.decode().splitlines() if ": TL" in line)


@pytest.fixture
def project(tmp_path):
    return write_tree(tmp_path, {"pyproject.toml": '[tool.torchlint]\nignore = ["TL001"]\n', "train.py": WANDB_USED,
                                 "load.py": LOAD})


def test_output_file_takes_the_report_and_the_exit_code_stays(project):
    result = concise("--output-file", "report.txt", ".", cwd=project)
    assert result.returncode == 1 and result.stdout == b""
    assert "load.py:5:12: TL201" in (project / "report.txt").read_text()
    by_env = concise(".", cwd=project, env={"TORCHLINT_OUTPUT_FILE": "env.txt"})
    assert by_env.stdout == b"" and "TL201" in (project / "env.txt").read_text()
    unwritable = concise("-o", "missing/dir/report.txt", ".", cwd=project)
    assert unwritable.returncode == 2 and unwritable.stderr.decode().startswith("error: missing/dir/report.txt: cannot write")


def test_config_settings_override_the_file_and_flags_override_them(project):
    assert codes(concise(".", cwd=project)) == ["TL201"]
    assert codes(concise("--config", "ignore = []", ".", cwd=project)) == ["TL001", "TL201"]
    assert codes(concise("--config", "ignore = []", "--config", 'ignore = ["TL2"]', ".", cwd=project)) == ["TL001"]
    assert codes(concise("--config", "ignore = []", "--ignore", "TL001", ".", cwd=project)) == ["TL201"]
    both = concise("--config", "pyproject.toml", "--config", "ignore = []", ".", cwd=project)  # a file and a setting
    assert codes(both) == ["TL001", "TL201"]


@pytest.mark.parametrize("value, message", [
    ("bogus = 1", "error: --config: unknown key `bogus` in [tool.torchlint]"),
    ("ignore = [", "error: --config: 'ignore = [' is neither a file nor a `KEY = VALUE` setting"),
    ("line-length = 0", "error: --config: `line-length` must be an integer from 1 to 320"),
])
def test_a_bad_config_setting_is_one_line_and_exit_2(project, value, message):
    result = concise("--config", value, ".", cwd=project)
    assert result.returncode == 2 and len(result.stderr.decode().splitlines()) == 1
    assert result.stderr.decode().startswith(message), result.stderr


def test_isolated_ignores_every_config_file(project):
    assert codes(concise("--isolated", ".", cwd=project)) == ["TL001", "TL201"]
    assert codes(concise("--isolated", "--config", "select = ['TL001']", ".", cwd=project)) == ["TL001"]
    clash = concise("--isolated", "--config", "pyproject.toml", ".", cwd=project)
    assert clash.returncode == 2 and b"--isolated" in clash.stderr


def test_show_settings_prints_the_settings_in_effect(project):
    result = run_torchlint("check", "--show-settings", "--config", "line-length = 100", ".", cwd=project)
    lines = result.stdout.decode().splitlines()
    assert result.returncode == 0
    assert lines[:2] == ["Resolved settings for: .", f"Settings path: {project / 'pyproject.toml'}"]
    assert 'ignore = ["TL001"]' in lines and "line-length = 100" in lines and "baseline = # not set" in lines


def test_show_files_lists_what_would_be_checked_notebooks_included(project):
    write_tree(project, {"build/gen.py": "x = 1\n", "nb.ipynb": '{"cells": [], "metadata": {}, "nbformat": 4, '
                                                              '"nbformat_minor": 5}'})
    result = run_torchlint("check", "--show-files", ".", cwd=project)
    assert result.returncode == 0
    assert result.stdout.decode().splitlines() == ["load.py", "nb.ipynb", "train.py"]


def test_extend_inherits_settings_the_extending_file_overrides_and_adds_to(tmp_path):
    write_tree(tmp_path, {
        "pyproject.toml": '[tool.torchlint]\nignore = ["TL001"]\nextend-exclude = ["gen"]\nline-length = 100\n',
        "pkg/pyproject.toml": '[tool.torchlint]\nextend = "../pyproject.toml"\nextend-exclude = ["old"]\n'
                              "line-length = 120\n",
        "pkg/train.py": WANDB_USED, "pkg/load.py": LOAD, "pkg/gen/a.py": LOAD, "pkg/old/b.py": LOAD,
    })
    package = tmp_path / "pkg"
    assert codes(concise(".", cwd=package)) == ["TL201"]  # TL001 ignored by the base, gen/ and old/ excluded
    shown = run_torchlint("check", "--show-settings", ".", cwd=package).stdout.decode().splitlines()
    assert 'extend-exclude = ["gen", "old"]' in shown and "line-length = 120" in shown
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nextend = "pkg/pyproject.toml"\n')
    cycle = concise(".", cwd=package)
    assert cycle.returncode == 2 and b"`extend` forms a cycle" in cycle.stderr


def test_unfixable_rules_are_reported_but_not_fixed(tmp_path):
    step = ("import pytorch_lightning as pl\n\n\nclass M(pl.LightningModule):\n"
            "    def training_step(self, batch, batch_idx):\n        loss = self(batch).mean()\n"
            '        self.log("loss", loss.item())\n        return loss\n')
    write_tree(tmp_path, {"pyproject.toml": '[tool.torchlint]\nunfixable = ["TL001"]\n', "train.py": WANDB_USED,
                          "step.py": step})
    before = concise(".", cwd=tmp_path)
    assert "[*] 1 fixable" in before.stdout.decode()  # TL003's fix only
    fixed = concise("--fix", ".", cwd=tmp_path)
    assert fixed.returncode == 1 and codes(fixed) == ["TL001"]
    assert (tmp_path / "train.py").read_text() == WANDB_USED and "loss.detach()" in (tmp_path / "step.py").read_text()
    (tmp_path / "step.py").write_text(step)
    only = concise("--fix", "--fixable", "TL001", "--unfixable", "TL3", ".", cwd=tmp_path)  # flags over the file
    assert codes(only) == ["TL003"] and (tmp_path / "step.py").read_text() == step


@pytest.mark.slow  # a process of its own, signalled
def test_watch_checks_again_on_every_change_until_interrupted(tmp_path):
    (tmp_path / "train.py").write_text("x = 1\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "torchlint", "check", "--watch", "--no-cache", "--output-format", "concise", "."],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1", "PYTHONFAULTHANDLER": "1"},
        # ^C as a terminal delivers it, even where the tests run in the background (a shell's `&`
        # starts them with SIGINT ignored, which the child would inherit: then ^C does nothing)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        def wait_for(stream_text, needle, timeout=60):
            deadline = time.monotonic() + timeout
            while needle not in stream_text() and time.monotonic() < deadline:
                time.sleep(0.2)
            return needle in stream_text()

        out = []
        import threading

        reader = threading.Thread(target=lambda: out.extend(iter(lambda: process.stdout.read1(4096), b"")), daemon=True)
        reader.start()
        assert wait_for(lambda: b"".join(out), b"All checks passed!")
        (tmp_path / "train.py").write_text(WANDB_USED)
        assert wait_for(lambda: b"".join(out), b"train.py:1:1: TL001")
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)  # faulthandler prints where every thread is
            process.wait(timeout=30)
            pytest.fail("still running 30 s after ^C:\n" + process.stderr.read().decode())
        assert process.returncode == 0
        err = process.stderr.read().decode()
        assert err.splitlines()[:2] == ["Starting linter in watch mode...", "File change detected..."]
    finally:
        if process.poll() is None:
            process.kill()
