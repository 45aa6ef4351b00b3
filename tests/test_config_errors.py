"""Bad globs are configuration errors (exit 2, one line naming the file or flag and the
key); `--jobs` never forks more workers than there are files or than twice the cores."""

from __future__ import annotations

import os

import pytest

from cli_support import WANDB_USED, run_torchlint

BAD = WANDB_USED


@pytest.mark.parametrize(
    "table, key",
    [
        ('[tool.torchlint.per-file-ignores]\n"[" = ["TL001"]\n', "per-file-ignores"),
        ('[tool.torchlint.per-file-ignores]\n"tests/[z-a]*.py" = ["TL001"]\n', "per-file-ignores"),
        ('[tool.torchlint]\nexclude = ["build", "["]\n', "exclude"),
        ('[tool.torchlint]\nextend-exclude = ["gen/[!"]\n', "extend-exclude"),
        ('[tool.torchlint]\nextend-exclude = ["\\\\"]\n', "extend-exclude"),
    ],
)
def test_an_invalid_glob_in_the_config_is_an_error(tmp_path, table, key):
    (tmp_path / "pyproject.toml").write_text(table)
    (tmp_path / "a.py").write_text(BAD)
    result = run_torchlint("check", "--no-cache", ".", cwd=tmp_path)
    stderr = result.stderr.decode().splitlines()
    assert result.returncode == 2 and result.stdout == b""
    assert len(stderr) == 1 and stderr[0].startswith("error: ")
    assert "pyproject.toml" in stderr[0] and f"`{key}`" in stderr[0] and "invalid glob" in stderr[0]


@pytest.mark.parametrize("flag", ["--exclude", "--extend-exclude"])
def test_an_invalid_glob_on_the_command_line_is_an_error(tmp_path, flag):
    (tmp_path / "a.py").write_text(BAD)
    result = run_torchlint("check", "--no-cache", flag, "build,[", ".", cwd=tmp_path)
    stderr = result.stderr.decode().splitlines()
    assert result.returncode == 2 and len(stderr) == 1 and stderr[0].startswith(f"error: {flag}: ")


def test_valid_globs_are_accepted(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchlint]\nextend-exclude = ["gen/[ab]*", "!keep.py", "# a comment"]\n'
        '[tool.torchlint.per-file-ignores]\n"tests/**/test_*.py" = ["TL001"]\n'
    )
    (tmp_path / "a.py").write_text(BAD)
    assert run_torchlint("check", "--no-cache", ".", cwd=tmp_path).returncode == 1


FORK_COUNTER = """
import atexit, os
_parent, _children, _fork = os.getpid(), [], os.fork
def _counting_fork():
    pid = _fork()
    if pid:
        _children.append(pid)
    return pid
os.fork = _counting_fork
@atexit.register
def _report():
    if os.getpid() == _parent:
        with open(os.environ["FORK_COUNT_FILE"], "w") as out:
            out.write(str(len(_children)))
"""


@pytest.mark.slow
def test_jobs_is_capped_by_the_files_and_the_cores(tmp_path):
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(FORK_COUNTER)
    project = tmp_path / "project"
    project.mkdir()
    for index in range(30):  # enough to run in parallel
        (project / f"m{index}.py").write_text(BAD)
    count = tmp_path / "forks"
    env = {"PYTHONPATH": str(hook), "FORK_COUNT_FILE": str(count)}
    result = run_torchlint("check", "--no-cache", "--jobs", "300", "-q", ".", cwd=project, env=env)
    serial = run_torchlint("check", "--no-cache", "--jobs", "1", "-q", ".", cwd=project)
    assert result.returncode == 1 and result.stdout == serial.stdout
    cores = len(os.sched_getaffinity(0))
    assert 1 <= int(count.read_text()) <= min(30, 2 * cores)
