"""The command line a person meets: top-level help, `help COMMAND`, a misspelt command,
`torchlint PATHS` as a shorthand, and a warning when no Python file was found."""

from __future__ import annotations

import pytest

from cli_support import run_torchlint
from test_cli import BAD, write
from torchlint.commands import COMMANDS

NO_FILES = "warning: No Python files found under the given path(s)"


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_top_level_help_lists_commands_and_options_as_ruff_does(flag):
    result = run_torchlint(flag)
    out = result.stdout.decode()
    assert result.returncode == 0, result.stderr.decode()
    assert "Usage: torchlint [OPTIONS] <COMMAND>" in out
    commands = out.split("Commands:\n")[1].split("\n\n")[0].splitlines()
    names = [line.split()[0] for line in commands if line[2] != " "]  # not a wrapped summary's next line
    assert names == ["check", "rule", "doctor", "explain", "server", "clean", "help"]
    options = out.split("Options:\n")[1]
    assert "-h, --help" in options and "-V, --version" in options
    assert "usage: torchlint check" not in out


def test_help_without_a_command_is_the_top_level_help():
    assert run_torchlint("help").stdout == run_torchlint("--help").stdout


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - {"help"}))
def test_help_command_prints_that_commands_help(command):
    result = run_torchlint("help", command)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().startswith(f"usage: torchlint {command}")
    assert result.stdout == run_torchlint(command, "--help").stdout


def test_help_for_an_unknown_command_is_one_line_and_exit_2():
    result = run_torchlint("help", "chek")
    err = result.stderr.decode()
    assert result.returncode == 2
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and "`check`" in err


def test_a_misspelt_command_is_neither_a_command_nor_a_path(tmp_path):
    result = run_torchlint("chek", ".", cwd=tmp_path)
    err = result.stderr.decode()
    assert result.returncode == 2
    assert err == "error: `chek` is neither a command nor a path; did you mean `check`? (see `torchlint --help`)\n"
    assert result.stdout == b""


def test_a_directory_named_like_a_command_is_still_a_path(tmp_path):
    write(tmp_path, "chek/train.py", BAD)
    result = run_torchlint("--no-cache", "--output-format", "concise", "chek", cwd=tmp_path)
    assert result.returncode == 1, result.stderr.decode()
    assert "TL001" in result.stdout.decode()


def test_a_missing_file_unlike_any_command_is_reported_as_missing(tmp_path):
    result = run_torchlint("train_model.py", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.decode() == "error: train_model.py: no such file or directory\n"


def test_paths_alone_mean_check_and_fix_works_without_the_subcommand(tmp_path):
    path = write(tmp_path, "src/train.py", BAD)
    assert run_torchlint("--no-cache", "src", cwd=tmp_path).returncode == 1
    fixed = run_torchlint("--no-cache", "--fix", "src/", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout.decode() + fixed.stderr.decode()
    assert path.read_text() != BAD
    assert run_torchlint("--no-cache", "src", cwd=tmp_path).returncode == 0


def test_an_empty_directory_warns_that_no_python_files_were_found(tmp_path):
    (tmp_path / "empty").mkdir()
    result = run_torchlint("check", "empty", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stderr.decode() == NO_FILES + "\n"
    assert "All checks passed!" in result.stdout.decode()


def test_a_path_holding_only_excluded_files_warns_too(tmp_path):
    write(tmp_path, "project/.venv/lib/site.py", BAD)
    write(tmp_path, "project/build/lib/train.py", BAD)
    result = run_torchlint("check", "--no-cache", "project", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stderr.decode() == NO_FILES + "\n"


def test_no_warning_when_files_were_found(tmp_path):
    write(tmp_path, "ok.py", "x = 1\n")
    result = run_torchlint("check", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == b""
