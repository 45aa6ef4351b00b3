"""A fix never loses or corrupts user code: encoding, BOM, newlines, mode, atomic writes."""

from __future__ import annotations

import os
import stat

import pytest

from cli_support import WANDB_READ_LATER, run_torchlint
from process_support import make_tree, start_cli, stop, wait_for_children
from torchlint.core.config import Config
from torchlint.engine import lint_text
from torchlint.fixing.apply import fix_text
from torchlint.core.diagnostics import Applicability, Edit, Fix
from torchlint.rule_api.rule import Rule

BAD = "import wandb\n\n\ndef train():\n    wandb.init()\n"
FIXED = "def train():\n    import wandb\n\n    wandb.init()\n"
FIXED_AFTER_COMMENT = "\n\n" + FIXED  # blank lines are removed only at the top of a file


def test_crlf_is_kept(tmp_path):
    path = tmp_path / "crlf.py"
    path.write_bytes(BAD.replace("\n", "\r\n").encode())
    run_torchlint("check", "--fix", ".", cwd=tmp_path)
    assert path.read_bytes() == FIXED.replace("\n", "\r\n").encode()


def test_bom_and_utf8_text_are_kept(tmp_path):
    path = tmp_path / "bom.py"
    source = "# Überprüfung 🚀\n" + BAD
    path.write_bytes(b"\xef\xbb\xbf" + source.encode())
    result = run_torchlint("check", "--fix", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout.decode()
    assert path.read_bytes() == b"\xef\xbb\xbf" + ("# Überprüfung 🚀\n" + FIXED_AFTER_COMMENT).encode()


def test_latin1_cookie_is_kept(tmp_path):
    path = tmp_path / "latin.py"
    source = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + BAD
    path.write_bytes(source.encode("latin-1"))
    run_torchlint("check", "--fix", ".", cwd=tmp_path)
    assert path.read_bytes() == ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + FIXED_AFTER_COMMENT).encode("latin-1")


def test_file_mode_is_kept_and_no_temp_files_remain(tmp_path):
    path = tmp_path / "script.py"
    path.write_text(BAD)
    os.chmod(path, 0o751)
    run_torchlint("check", "--fix", "--no-cache", ".", cwd=tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert sorted(p.name for p in tmp_path.iterdir()) == ["script.py"]


def test_columns_count_code_points_after_non_ascii(tmp_path):
    path = tmp_path / "wide.py"
    path.write_text("try:\n    é = 1; import wandb\nexcept ImportError:\n    pass\n" + WANDB_READ_LATER, encoding="utf-8")
    result = run_torchlint("check", "--output-format", "concise", ".", cwd=tmp_path)
    assert "wide.py:2:12: TL001" in result.stdout.decode()


class _BreaksCode(Rule):
    """A rule whose fix would produce invalid code."""

    code = "TL998"
    name = "breaks-code"
    summary = "test"

    def visit_Import(self, node):
        self.report(node, "boom", fix=lambda p: Fix("break", (Edit(p.start(node), p.end(node), "import ("),), Applicability.SAFE))


class _Crashes(Rule):
    """A rule that raises."""

    code = "TL997"
    name = "crashes"
    summary = "test"

    def visit_Name(self, node):
        raise ZeroDivisionError("bug in rule")


def test_a_fix_that_breaks_the_code_is_refused():
    rules = [_BreaksCode]
    outcome = fix_text(BAD, lambda text: lint_text(text, "x.py", Config(), rules), unsafe=False)
    assert outcome.text == BAD and not outcome.changed
    assert "does not parse" in outcome.error


def test_a_crashing_rule_is_reported_and_others_still_run():
    from torchlint.rule_api.registry import find_rule

    result = lint_text(BAD, "x.py", Config(), [_Crashes, find_rule("TL001")])
    assert [d.code for d in result.diagnostics] == ["TL001"]
    assert result.errors == ["x.py: rule TL997 crashed: ZeroDivisionError: bug in rule"]


def test_overlapping_fixes_converge_over_iterations():
    source = "from torch.utils import tensorboard, data\nimport wandb\n\n\ndef f():\n    return tensorboard, data, wandb\n"
    from torchlint.rule_api.registry import find_rule

    rules = [find_rule("TL001")]
    outcome = fix_text(source, lambda text: lint_text(text, "x.py", Config(), rules), unsafe=False)
    assert outcome.text == (
        "from torch.utils import data\n\n\ndef f():\n    import wandb\n"
        "    from torch.utils import tensorboard\n\n    return tensorboard, data, wandb\n"
    ) or outcome.text == (
        "from torch.utils import data\n\n\ndef f():\n    from torch.utils import tensorboard\n"
        "    import wandb\n\n    return tensorboard, data, wandb\n"
    )
    assert sum(outcome.applied.values()) == 2


class _FixCrashes(Rule):
    """A rule whose fix raises while positions are resolved."""

    code = "TL996"
    name = "fix-crashes"
    summary = "test"

    def visit_Import(self, node):
        self.report(node, "boom", fix=lambda positions: 1 / 0)


def test_a_rule_crashing_while_building_its_fix_is_contained():
    from torchlint.rule_api.registry import find_rule

    result = lint_text(BAD, "x.py", Config(), [_FixCrashes, find_rule("TL001")])
    assert [d.code for d in result.diagnostics] == ["TL001"]
    assert result.errors == ["x.py: rule TL996 crashed: ZeroDivisionError: division by zero"]


def _fixed_as_a_plain_file(tmp_path, data: bytes) -> bytes:
    """What `--fix` makes of these bytes in a plain file (the reference for other ways in)."""
    reference = tmp_path / "reference"
    reference.mkdir()
    (reference / "x.py").write_bytes(data)
    run_torchlint("check", "--fix", "--no-cache", "x.py", cwd=reference)
    fixed = (reference / "x.py").read_bytes()
    assert fixed != data
    return fixed


def test_a_symlink_is_kept_and_its_target_is_fixed(tmp_path):
    target = tmp_path / "real.py"
    target.write_text(BAD)
    link = tmp_path / "link.py"
    link.symlink_to("real.py")
    result = run_torchlint("check", "--fix", "--no-cache", "link.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()
    assert link.is_symlink() and os.readlink(link) == "real.py"
    assert target.read_bytes() == _fixed_as_a_plain_file(tmp_path, BAD.encode())


def test_hard_links_stay_one_file(tmp_path):
    first = tmp_path / "first.py"
    first.write_text(BAD)
    os.chmod(first, 0o640)
    second = tmp_path / "other" / "second.py"
    second.parent.mkdir()
    os.link(first, second)
    result = run_torchlint("check", "--fix", "--no-cache", "first.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()
    assert os.path.samefile(first, second) and first.stat().st_nlink == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first.py", "other"]
    assert second.read_bytes() == _fixed_as_a_plain_file(tmp_path, BAD.encode())
    assert stat.S_IMODE(first.stat().st_mode) == 0o640


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file away")
def test_owner_and_group_are_kept(tmp_path):
    path = tmp_path / "theirs.py"
    path.write_text(BAD)
    os.chown(path, 4321, 8765)
    os.chmod(tmp_path, 0o777)
    result = run_torchlint("check", "--fix", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()
    assert path.read_text() != BAD
    assert (path.stat().st_uid, path.stat().st_gid) == (4321, 8765)


@pytest.mark.slow
def test_a_file_changed_during_the_run_is_not_overwritten(tmp_path):
    # Every file is read before the workers start; once they are seen, the largest file
    # (read and fixed first) is edited, as an editor would, while the run goes on.
    make_tree(tmp_path / "tree", files=60)
    big = tmp_path / "tree" / "big.py"
    big.write_text(BAD + "".join(f"\n\ndef f{n}():\n    return {n}\n" for n in range(200)))
    process = start_cli("check", "--fix", "--no-cache", "--jobs", "2", "tree", cwd=tmp_path)
    workers = wait_for_children(process, 2)
    try:
        big.write_text("# edited by hand during the run\n" + BAD)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        stop(process, workers)
    assert big.read_text() == "# edited by hand during the run\n" + BAD
    # the write guard doing its job: a warning, the file's findings stay, exit 1 (issue 23, 15)
    assert process.returncode == 1
    name = os.path.join("tree", "big.py")
    assert stderr.decode().splitlines() == [f"warning: {name}: changed during the run, so its fixes were not written; its findings stay"]
    assert f"{name}:1:1: TL001" in stdout.decode()
    assert "internal error" not in stdout.decode()
    assert "import wandb" not in (tmp_path / "tree" / "m000.py").read_text().split("def")[0]  # the others are fixed


def test_snapshot_tells_a_changed_file(tmp_path):
    from torchlint.fixing.write import ChangedDuringRun, Snapshot, write_fixed

    path = tmp_path / "x.py"
    path.write_bytes(b"a = 1\n")
    linted = Snapshot.of(b"a = 1\n")
    path.write_bytes(b"a = 2\n")  # same size, other bytes
    with pytest.raises(ChangedDuringRun):
        write_fixed(path, b"a = 3\n", linted)
    assert path.read_bytes() == b"a = 2\n"
    write_fixed(path, b"a = 3\n", Snapshot.of(b"a = 2\n"))
    assert path.read_bytes() == b"a = 3\n"



def test_a_directory_swapped_for_a_link_after_it_was_opened_is_not_followed(tmp_path, monkeypatch):
    # The fix is written relative to the directory opened first: swapping the directory for a
    # link to another one (a repository trick, or a race with another process) cannot move
    # the write there (issue 34).
    import torchlint.fixing.write as write
    from torchlint.fixing.write import Snapshot, write_fixed

    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "x.py").write_bytes(b"a = 1\n")
    (elsewhere / "x.py").write_bytes(b"a = 1\n")
    opened = write.open_directory

    def open_then_swap(path):
        handle = opened(path)
        os.rename(project, tmp_path / "moved")
        os.symlink(elsewhere, project)
        return handle

    monkeypatch.setattr(write, "open_directory", open_then_swap)
    write_fixed(project / "x.py", b"a = 2\n", Snapshot.of(b"a = 1\n"))
    assert (tmp_path / "moved" / "x.py").read_bytes() == b"a = 2\n"
    assert (elsewhere / "x.py").read_bytes() == b"a = 1\n"
    assert sorted(os.listdir(elsewhere)) == ["x.py"]


LATIN1 = "# -*- coding: latin-1 -*-\n# caf\xe9\n"


@pytest.mark.parametrize(
    "original",
    [(LATIN1 + BAD).encode("latin-1"), b"\xef\xbb\xbf# \xc3\xa9\n" + BAD.encode(), BAD.replace("\n", "\r\n").encode()],
    ids=["latin-1", "bom", "crlf"],
)
@pytest.mark.parametrize("stdout_encoding", ["utf-8", "ascii"])
def test_stdin_fix_writes_the_files_own_bytes(tmp_path, original, stdout_encoding):
    result = run_torchlint(
        "check", "--fix", "--stdin-filename", "x.py", "-",
        cwd=tmp_path, input=original, env={"PYTHONIOENCODING": stdout_encoding},
    )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout == _fixed_as_a_plain_file(tmp_path, original)


def test_stdin_without_fixes_comes_back_unchanged(tmp_path):
    original = (LATIN1 + "x = 1\n").encode("latin-1")
    result = run_torchlint(
        "check", "--fix", "--stdin-filename", "x.py", "-", cwd=tmp_path, input=original, env={"PYTHONIOENCODING": "ascii"}
    )
    assert result.returncode == 0 and result.stdout == original


def test_a_file_deleted_before_the_write_is_reported_not_recreated(tmp_path):
    from torchlint.fixing.write import ChangedDuringRun, Snapshot, write_fixed

    path = tmp_path / "gone.py"
    with pytest.raises(ChangedDuringRun):
        write_fixed(path, b"a = 3\n", Snapshot.of(b"a = 1\n"))
    assert not path.exists()


@pytest.mark.slow
def test_a_writable_file_in_a_read_only_directory_is_fixed_in_place(tmp_path):
    from test_discovery_faults import _without_file_permission_override

    prefix = _without_file_permission_override()
    if prefix is None:
        pytest.skip("root cannot be made to obey file modes here")
    locked = tmp_path / "locked"
    locked.mkdir()
    path = locked / "x.py"
    path.write_text(BAD)
    locked.chmod(0o555)
    try:
        result = run_torchlint("check", "--fix", "--no-cache", "x.py", cwd=locked, prefix=prefix)
    finally:
        locked.chmod(0o755)
    assert result.returncode == 0, result.stderr.decode()
    assert path.read_bytes() == _fixed_as_a_plain_file(tmp_path, BAD.encode())
    assert [p.name for p in locked.iterdir()] == ["x.py"]


def test_a_coding_cookie_in_a_lone_cr_file_is_read(tmp_path):
    # Python ends lines at a lone \r; the cookie is on the first of them
    path = tmp_path / "cr.py"
    source = "# -*- coding: latin-1 -*-\rimport wandb\r\r\rdef f():\r    return 'caf\xe9', wandb\r"
    path.write_bytes(source.encode("latin-1"))
    result = run_torchlint("check", "--fix", "--no-cache", "cr.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
    expected = "# -*- coding: latin-1 -*-\r\r\rdef f():\r    import wandb\r\r    return 'caf\xe9', wandb\r"
    assert path.read_bytes() == expected.encode("latin-1")
