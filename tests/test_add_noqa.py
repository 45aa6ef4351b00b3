"""`--add-noqa` writes `# noqa: TLxxx` on each finding's noqa_row, merging with what is
there, never inside a string, keeping the file's bytes otherwise; a second run adds nothing."""

from __future__ import annotations

import ast
import os
import stat
from pathlib import Path

import pytest

from cli_support import run_torchlint

USES = "\n\ndef train():\n    wandb.init()\n"


def add_noqa(path: Path, *args):
    return run_torchlint("check", "--no-cache", "--add-noqa", *args, path.name, cwd=path.parent)


def write(tmp_path: Path, text: str, name: str = "train.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "before, after",
    [
        ("import wandb" + USES, "import wandb  # noqa: TL001" + USES),
        ("import wandb   " + USES, "import wandb  # noqa: TL001" + USES),
        ("import wandb  # noqa: E501" + USES, "import wandb  # noqa: E501, TL001" + USES),
        ("import wandb  # noqa:E501,W291" + USES, "import wandb  # noqa:E501,W291, TL001" + USES),
        ("import wandb  # tracking" + USES, "import wandb  # tracking  # noqa: TL001" + USES),
        ("import wandb, mlflow" + USES, "import wandb, mlflow  # noqa: TL001" + USES),
        # the directive goes where flake8 and torchlint read it: the logical line's end
        ("from wandb import (\n    init,\n)\n\n\ndef f():\n    init()\n",
         "from wandb import (\n    init,\n)  # noqa: TL001\n\n\ndef f():\n    init()\n"),
        # never inside a multi-line string, even one holding `#` and `noqa`
        ('import wandb; DOC = """# noqa: E501\n# not a comment\n"""' + USES,
         'import wandb; DOC = """# noqa: E501\n# not a comment\n"""  # noqa: TL001' + USES),
    ],
)
def test_directive_is_added_on_the_noqa_row(tmp_path, before, after):
    path = write(tmp_path, before)
    result = add_noqa(path)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stderr.decode() == "Added 1 noqa directive.\n"
    assert result.stdout == b""
    assert path.read_text() == after
    assert ast.dump(ast.parse(after)) == ast.dump(ast.parse(before))
    assert run_torchlint("check", "--no-cache", path.name, cwd=tmp_path).returncode == 0


def test_second_run_adds_nothing(tmp_path):
    path = write(tmp_path, "import wandb\nimport mlflow  # noqa: E501\n" + USES + "    mlflow.log()\n")
    first = add_noqa(path)
    assert first.stderr.decode() == "Added 2 noqa directives.\n"
    written = path.read_bytes()
    second = add_noqa(path)
    assert second.returncode == 0
    assert second.stderr.decode() == "Added 0 noqa directives.\n"
    assert path.read_bytes() == written


def test_existing_noqa_for_other_codes_is_extended_not_duplicated(tmp_path):
    # TL003 is suppressed by its own directive; TL001 on the same line is added to it
    path = write(tmp_path, "import wandb  # noqa: TL003\n" + USES)
    add_noqa(path)
    assert path.read_text().splitlines()[0] == "import wandb  # noqa: TL003, TL001"


@pytest.mark.parametrize(
    "data",
    [
        b"import wandb\r\n\r\n\r\ndef train():\r\n    wandb.init()\r\n",
        b"\xef\xbb\xbfimport wandb\n\n\ndef train():\n    wandb.init('\xc3\xa9')\n",
        b"# -*- coding: latin-1 -*-\nimport wandb\n\n\ndef train():\n    wandb.init('\xe9')\n",
    ],
    ids=["crlf", "bom", "latin-1"],
)
def test_encoding_bom_newlines_and_mode_are_kept(tmp_path, data):
    path = tmp_path / "train.py"
    path.write_bytes(data)
    os.chmod(path, 0o751)
    result = add_noqa(path)
    assert result.returncode == 0, result.stderr.decode()
    newline = b"\r\n" if b"\r\n" in data else b"\n"
    assert path.read_bytes() == data.replace(b"import wandb" + newline, b"import wandb  # noqa: TL001" + newline)
    assert stat.S_IMODE(path.stat().st_mode) == 0o751


@pytest.mark.parametrize("flag", ["--fix", "--diff"])
def test_cannot_be_combined_with_fixing(tmp_path, flag):
    path = write(tmp_path, "import wandb" + USES)
    result = add_noqa(path, flag)
    assert result.returncode == 2
    [line] = result.stderr.decode().splitlines()
    assert line.startswith("error: --add-noqa cannot be combined with --fix or --diff")
    assert path.read_text() == "import wandb" + USES


def test_config_fix_true_does_not_fix(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\nfix = true\n")
    path = write(tmp_path, "import wandb" + USES)
    assert add_noqa(path).returncode == 0
    assert path.read_text() == "import wandb  # noqa: TL001" + USES


def test_fixtures_are_silenced_and_their_code_unchanged(fixtures_copy):
    for project in sorted(p for p in fixtures_copy.iterdir() if p.is_dir()):
        before = {p: p.read_text(encoding="utf-8") for p in project.rglob("*.py")}
        result = run_torchlint("check", "--no-cache", "--add-noqa", ".", cwd=project)
        assert result.returncode == 0, result.stderr.decode()
        *warnings, added = result.stderr.decode().splitlines()
        assert added.startswith("Added ")
        assert all("--add-noqa does not write into notebooks" in line for line in warnings)
        for path, text in before.items():
            after = path.read_text(encoding="utf-8")
            try:
                tree = ast.dump(ast.parse(text))
            except SyntaxError:  # TL000 cannot be silenced by a comment: left alone
                assert after == text
                continue
            assert ast.dump(ast.parse(after)) == tree, path
        left = run_torchlint("check", "--no-cache", "--output-format", "concise", ".", cwd=project)
        left_in_files = [line for line in left.stdout.decode().splitlines() if ": TL" in line and ".ipynb:" not in line]
        assert {line.split()[1] for line in left_in_files} <= {"TL000"}
