"""What a ruff user expects beside torchlint (issue 32, items 3 and 4): ruff's and flake8's
file-level exemptions, `torchlint clean`, and `# noqa: TL...` comments kept by ruff's
RUF100 when the README's `lint.external` is set."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from cli_support import WANDB_USED, run_torchlint


def concise(*args, cwd):
    return run_torchlint("check", "--no-cache", "--output-format", "concise", *args, cwd=cwd)


@pytest.mark.parametrize(
    "directive, hidden",
    [("# flake8: noqa", True), ("# ruff: noqa", True), ("# ruff: noqa: TL001", True), ("# ruff: noqa: TL2", False),
     ("# FLAKE8: NOQA", True), ('"""# flake8: noqa"""', False), ("# ruff: noqa: N806", False),
     ("# ruff: noqa: N806, TL001", True), ("# ruff: noqa: N806\n# flake8: noqa", True)],
)
def test_ruff_and_flake8_file_exemptions_are_honoured(tmp_path, directive, hidden):
    (tmp_path / "train.py").write_text(f"{directive}\n{WANDB_USED}")
    result = concise(".", cwd=tmp_path)
    assert (result.returncode, b"TL001" in result.stdout) == ((0, False) if hidden else (1, True))


def test_another_tools_file_exemption_costs_no_tokenizing(monkeypatch):
    """`# ruff: noqa: N806` (common in model code) names no torchlint code: the file is not
    tokenized to tell a comment from a string, and the codes kept are torchlint's alone."""
    from torchlint.core import noqa

    source = "# ruff: noqa: N806\nimport torch\n"
    assert noqa.file_exemption(source) == (False, frozenset())
    assert noqa.file_exemption("# ruff: noqa: N806, TL001\n") == (False, frozenset({"TL001"}))

    def no_tokens(text):
        raise AssertionError("tokenized")

    monkeypatch.setattr(noqa, "tokens", no_tokens)
    assert noqa.file_exemption(source) == (False, frozenset())
    with pytest.raises(AssertionError, match="tokenized"):
        noqa.file_exemption("# ruff: noqa: TL001\n")


def test_clean_removes_the_cache_and_nothing_else(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\n")
    (tmp_path / "train.py").write_text(WANDB_USED)
    (tmp_path / "sub").mkdir()
    assert run_torchlint("check", ".", cwd=tmp_path).returncode == 1
    assert (tmp_path / ".torchlint_cache").is_dir()
    cleaned = run_torchlint("clean", cwd=tmp_path / "sub")  # from anywhere in the project
    assert cleaned.returncode == 0, cleaned.stderr
    assert cleaned.stderr.decode() == f"Removing cache at: {tmp_path / '.torchlint_cache'}\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["pyproject.toml", "sub", "train.py"]
    again = run_torchlint("clean", cwd=tmp_path)
    assert (again.returncode, again.stdout, again.stderr) == (0, b"", b"")


def test_clean_keeps_what_torchlint_did_not_write_and_follows_no_link(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious").write_text("keep")
    project = tmp_path / "project"
    project.mkdir()
    (project / ".torchlint_cache").symlink_to(elsewhere)  # committed by the repository
    refused = run_torchlint("clean", cwd=project)
    assert refused.returncode == 2 and b"not removed" in refused.stderr
    assert (elsewhere / "precious").read_text() == "keep"
    (project / ".torchlint_cache").unlink()
    (project / "train.py").write_text(WANDB_USED)
    run_torchlint("check", ".", cwd=project)
    (project / ".torchlint_cache" / "notes.txt").write_text("mine")
    assert run_torchlint("clean", cwd=project).returncode == 0
    assert [path.name for path in (project / ".torchlint_cache").iterdir()] == ["notes.txt"]


def _ruff():
    beside = os.path.join(os.path.dirname(sys.executable), "ruff")
    return shutil.which("ruff") or (beside if os.path.exists(beside) else None)


@pytest.mark.skipif(_ruff() is None, reason="ruff is not installed")
def test_ruffs_unused_noqa_fix_keeps_torchlints_codes_with_the_readmes_lint_external(tmp_path):
    # Some ruff releases report a code they do not know (`# noqa: TL001`) as unused and
    # delete it under RUF100's fix; the README's `external = ["TL"]` tells ruff the codes are
    # another tool's. The same ruff keeps deleting a directive of its own that is unused.
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nextend-select = ["RUF100"]\nexternal = ["TL"]\n')
    (tmp_path / "train.py").write_text(WANDB_USED.replace("import wandb", "import os  # noqa: E501\nimport wandb"))
    assert run_torchlint("check", "--no-cache", "--add-noqa", ".", cwd=tmp_path).returncode == 0
    assert "import wandb  # noqa: TL001" in (tmp_path / "train.py").read_text()
    subprocess.run([_ruff(), "check", "--fix", "--no-cache", "."], cwd=tmp_path, capture_output=True, timeout=120)
    text = (tmp_path / "train.py").read_text()
    assert "import wandb  # noqa: TL001" in text and "E501" not in text  # RUF100 did run
    assert concise(".", cwd=tmp_path).returncode == 0
