"""Links and special files committed to a repository cannot hang a run, exhaust its memory,
hide findings or make it write outside the project (issue 34, item 2).

A run that must not hang or balloon is a child process with a timeout and a bounded
address space, so that a regression fails the test instead of the machine.
"""

from __future__ import annotations

import os
import shutil
import stat
import time

import pytest

from cli_support import WANDB_USED, run_torchlint, run_torchlint_process

BOUNDED = (shutil.which("prlimit") or "prlimit", "--as=3000000000", "--")  # 3 GB of address space
needs_prlimit = pytest.mark.skipif(shutil.which("prlimit") is None, reason="prlimit (util-linux) bounds the child")


def concise(*args, cwd):
    return run_torchlint("check", "--no-cache", "--output-format", "concise", *args, cwd=cwd)


def bounded_run(cwd, *args):
    started = time.monotonic()
    result = run_torchlint_process("check", "--no-cache", "--output-format", "concise", *args, cwd=cwd,
                                   prefix=BOUNDED, timeout=60)
    return result, time.monotonic() - started


@needs_prlimit
def test_special_and_huge_files_named_py_are_refused_unread(tmp_path):
    (tmp_path / "good.py").write_text(WANDB_USED)
    os.mkfifo(tmp_path / "x.py")
    with open(tmp_path / "big.py", "wb") as handle:
        handle.truncate(1 << 30)  # sparse: a GiB read, no disk used
    devices = os.getuid() == 0
    if devices:
        os.mknod(tmp_path / "zero.py", 0o644 | stat.S_IFCHR, os.makedev(1, 5))  # what /dev/zero is
    result, seconds = bounded_run(tmp_path, ".")
    assert seconds < 20
    lines = result.stdout.decode().splitlines()
    assert "good.py:1:1: TL001 " in "\n".join(lines)
    assert "x.py:1:1: TL000 Cannot read file: not a regular file" in lines
    assert "big.py:1:1: TL000 Cannot read file: larger than 128 MiB" in lines
    if devices:
        assert "zero.py:1:1: TL000 Cannot read file: not a regular file" in lines
    assert result.returncode == 1 and b"Traceback" not in result.stderr


@needs_prlimit
def test_a_fifo_as_gitignore_does_not_hang_discovery(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "good.py").write_text(WANDB_USED)
    os.mkfifo(tmp_path / ".gitignore")
    result, seconds = bounded_run(tmp_path, ".")
    assert seconds < 20 and result.returncode == 1
    assert b"good.py:1:1: TL001" in result.stdout
    assert result.stderr.decode().splitlines() == [f"warning: {tmp_path / '.gitignore'}: not read (not a regular file)"]


def test_a_gitignore_linked_out_of_the_project_is_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "ignore-all").write_text("*.py\n")
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "train.py").write_text(WANDB_USED)
    (project / ".gitignore").symlink_to(outside / "ignore-all")  # would hide every finding
    result = concise(".", cwd=project)
    assert result.returncode == 1 and b"train.py:1:1: TL001" in result.stdout
    assert result.stderr.decode().splitlines() == [f"warning: {project / '.gitignore'}: a symbolic link; not read"]


@pytest.mark.parametrize("link", ["to a file outside", "dangling"])
def test_write_baseline_replaces_a_committed_link_never_writes_through_it(tmp_path, link):
    outside = tmp_path / "home"
    outside.mkdir()
    secret = outside / ("authorized_keys" if link == "to a file outside" else "created-through-the-link")
    if link == "to a file outside":
        secret.write_text("ssh-ed25519 AAAA user@host\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(WANDB_USED)
    (project / "torchlint-baseline.json").symlink_to(secret)
    result = run_torchlint("check", "--no-cache", "--write-baseline", "torchlint-baseline.json", ".", cwd=project)
    assert result.returncode == 0, result.stderr
    baseline = project / "torchlint-baseline.json"
    assert not baseline.is_symlink() and '"code": "TL001"' in baseline.read_text()
    if link == "to a file outside":
        assert secret.read_text() == "ssh-ed25519 AAAA user@host\n"
    else:
        assert not secret.exists()
    assert sorted(path.name for path in project.iterdir()) == ["torchlint-baseline.json", "train.py"]  # no temp left


def _project_with_links(tmp_path, config_text: str, link: str, target_text: str):
    """A project whose `link` is a symbolic link to a file outside it holding `target_text`."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target").write_text(target_text)
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(WANDB_USED)
    if config_text:
        (project / "torchlint.toml").write_text(config_text)
    (project / link).symlink_to(outside / "target")
    return project


def test_a_config_linked_out_of_the_project_is_refused_in_one_line(tmp_path):
    project = _project_with_links(tmp_path, "", "torchlint.toml", 'ignore = ["TL001"]\n')
    result = concise(".", cwd=project)
    assert result.returncode == 2 and b"TL001" not in result.stdout
    assert result.stderr.decode().splitlines() == [
        f"error: {project / 'torchlint.toml'}: cannot read: a symbolic link out of the project"
    ]
    named = concise("--config", "torchlint.toml", ".", cwd=project)  # named by the user: theirs to follow
    assert named.returncode == 0 and b"TL001" not in named.stdout


def test_a_config_linked_within_the_project_is_read(tmp_path):
    project = tmp_path / "project"
    (project / "configs").mkdir(parents=True)
    (project / "train.py").write_text(WANDB_USED)
    (project / "configs" / "torchlint.toml").write_text('ignore = ["TL001"]\n')
    (project / "torchlint.toml").symlink_to(project / "configs" / "torchlint.toml")
    result = concise(".", cwd=project)
    assert (result.returncode, result.stderr) == (0, b"")


def test_a_configured_baseline_linked_out_of_the_project_is_refused(tmp_path):
    hiding = '{"version": 1, "findings": []}\n'
    project = _project_with_links(tmp_path, 'baseline = "baseline.json"\n', "baseline.json", hiding)
    baseline = project / "baseline.json"
    result = concise(".", cwd=project)
    assert result.returncode == 2
    assert result.stderr.decode().splitlines() == [
        f"error: {baseline}: cannot read the baseline: a symbolic link out of the project"
    ]
    named = concise("--baseline", "baseline.json", ".", cwd=project)  # named on the command line
    assert named.returncode == 1 and b"train.py:1:1: TL001" in named.stdout
