"""Nothing on disk stops a run: symlink loops and unreadable directories are skipped with a
one-line warning, and a file reached under several names is linted once."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from cli_support import WANDB_USED, run_torchlint

BAD = WANDB_USED


def concise(*args, cwd, prefix=()):
    return run_torchlint("check", "--no-cache", "--output-format", "concise", *args, cwd=cwd, prefix=prefix)


def reported(result) -> list:
    return [line.split(":")[0] for line in result.stdout.decode().splitlines() if "TL001" in line]


def warnings(result) -> list:
    lines = result.stderr.decode().splitlines()
    assert all(line.startswith("warning: ") for line in lines), lines
    return lines


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "a.py").write_text(BAD)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text(BAD)
    return tmp_path


def test_a_directory_symlink_loop_is_not_followed(tree):
    (tree / "sub" / "loop").symlink_to("..")
    result = concise(".", cwd=tree)
    assert result.returncode == 1, result.stderr.decode()
    assert reported(result) == ["a.py", "sub/b.py"]
    # as ruff: a symlink to a directory met during the walk is not entered, silently
    assert warnings(result) == []


def test_a_self_referencing_file_symlink_is_skipped_with_a_warning(tree):
    os.symlink("self.py", tree / "self.py")
    os.symlink("ping.py", tree / "sub" / "pong.py")
    os.symlink("pong.py", tree / "sub" / "ping.py")
    result = concise(".", cwd=tree)
    assert result.returncode == 1
    assert reported(result) == ["a.py", "sub/b.py"]
    assert warnings(result) == [
        "warning: self.py: symlink loop; skipped",
        "warning: sub/ping.py: symlink loop; skipped",
        "warning: sub/pong.py: symlink loop; skipped",
    ]


def test_a_symlink_loop_named_on_the_command_line_is_an_error(tree):
    os.symlink("self.py", tree / "self.py")
    result = concise("self.py", "a.py", cwd=tree)
    assert result.returncode == 2
    assert result.stderr.decode() == "error: self.py: symlink loop\n"


def test_a_directory_named_through_a_symlink_is_walked(tree):
    (tree / "link").symlink_to("sub")
    assert reported(concise("link", cwd=tree)) == ["link/b.py"]


def test_a_file_reached_under_several_names_is_linted_once_under_the_first(tree):
    (tree / "sub" / "z_alias.py").symlink_to("b.py")
    names = ["sub", "a.py", str(tree / "a.py"), "sub/../a.py", "./a.py", "sub/b.py"]
    result = concise(*names, cwd=tree)
    assert result.returncode == 1
    assert reported(result) == ["a.py", "sub/b.py"]
    # from outside the file's directory, findings show the name as given
    absolute, relative = str(tree / "a.py"), "../a.py"
    assert reported(concise(absolute, relative, cwd=tree / "sub")) == [absolute]
    assert reported(concise(relative, absolute, cwd=tree / "sub")) == [relative]


def test_a_symlinked_file_is_linted_once_even_without_its_target(tree):
    (tree / "sub" / "alias.py").symlink_to("b.py")
    assert reported(concise("sub/alias.py", cwd=tree)) == ["sub/alias.py"]
    assert reported(concise("sub", cwd=tree)) == ["sub/alias.py"]


def _without_file_permission_override():
    """A command prefix under which root obeys file modes (it drops the capabilities that
    let root read anything), or None when that cannot be arranged here."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = (setpriv, "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all", "--")
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    return prefix if probe.returncode == 0 else None


@pytest.mark.slow  # processes of their own, without root's file-permission override
def test_an_unreadable_directory_is_skipped_with_a_warning(tree):
    prefix = _without_file_permission_override()
    if prefix is None:
        pytest.skip("running as root without setpriv to drop CAP_DAC_OVERRIDE: permissions cannot be enforced")
    locked = tree / "sub" / "locked"
    locked.mkdir()
    (locked / "c.py").write_text(BAD)
    locked.chmod(0)
    try:
        result = concise(".", cwd=tree, prefix=prefix)
        named = concise("sub/locked", "a.py", cwd=tree, prefix=prefix)
    finally:
        locked.chmod(0o755)
    assert result.returncode == 1, result.stderr.decode()
    assert reported(result) == ["a.py", "sub/b.py"]
    assert warnings(result) == ["warning: sub/locked: cannot read directory (Permission denied); skipped"]
    assert named.returncode == 1 and reported(named) == ["a.py"]
    assert warnings(named) == ["warning: sub/locked: cannot read directory (Permission denied); skipped"]
