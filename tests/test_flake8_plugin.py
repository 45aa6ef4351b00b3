"""The real flake8, with the plugin installed through its entry point."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from cli_support import FIXTURES, WANDB_USED, run_torchlint
from extra_rules import run_with_rules, write_rule


def flake8(*args, cwd=None, input=None):
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        timeout=300,
    )


def parse(output: bytes):
    found = set()
    for line in output.decode().splitlines():
        path, row, column, rest = line.split(":", 3)
        found.add((path, int(row), int(column), rest.split()[0]))
    return found


@pytest.mark.slow
def test_plugin_is_registered():
    result = flake8("--version")
    assert "torchlint" in result.stdout.decode()


@pytest.mark.slow
def test_same_findings_as_the_cli():
    project = FIXTURES
    plugin = {f for f in parse(flake8("--select", "TL", ".", cwd=project).stdout) if f[3] != "TL000"}
    cli = run_torchlint("check", "--no-cache", "--output-format", "json", ".", cwd=project)
    expected = set()
    for item in json.loads(cli.stdout):
        if item["code"] == "TL000" or item["filename"].endswith(".ipynb"):
            continue  # flake8 reads *.py only unless `--filename` says more
        relative = "./" + str(__import__("pathlib").Path(item["filename"]).relative_to(project))
        if item["code"] == "TL004" and f" at {relative[2:]}:" not in item["message"]:
            continue  # found across files: flake8 shows a plugin one file at a time
        if item["code"] == "TL003" and re.search(r"\((reached from|called as `[^`]*` by) [^()]* of `", item["message"]):
            continue  # reached from a training loop in another file, or its criterion there
        expected.add((relative, item["location"]["row"], item["location"]["column"], item["code"]))
    assert plugin == expected
    assert plugin


@pytest.mark.slow
def test_noqa_and_stdin(tmp_path):
    source = b"import wandb  # noqa: TL001\nimport mlflow\n\n\ndef f():\n    return wandb, mlflow\n"
    result = flake8("--select", "TL", "--stdin-display-name", "mod.py", "-", input=source, cwd=tmp_path)
    assert parse(result.stdout) == {("mod.py", 2, 1, "TL001")}


@pytest.mark.slow
def test_unparsable_file_yields_only_flake8s_own_error(tmp_path):
    (tmp_path / "broken.py").write_text("import wandb\ndef f(:\n")
    result = flake8("--select", "TL,E999", "broken.py", cwd=tmp_path)
    assert {f[3] for f in parse(result.stdout)} == {"E999"}
    assert "Traceback" not in result.stderr.decode()


def test_files_without_triggers_are_not_parsed(tmp_path):
    code = "import sys\nfrom torchlint.integrations.flake8 import TorchlintChecker\n" \
           "list(TorchlintChecker(None, ['import os\\n'], 'x.py').run())\n" \
           "print('libcst' in sys.modules and not type(sys.modules['libcst']).__name__.startswith('_Lazy'))\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True)
    assert result.stdout.decode().strip() == "False", result.stderr.decode()


@pytest.mark.slow
def test_a_rule_crash_and_a_bad_config_are_shown_not_swallowed(tmp_path):
    """flake8 shows a plugin's findings only: what kept torchlint from checking the
    file fully is a TL000 on its first line, and the other rules still report."""
    rules = tmp_path / "rules"
    write_rule(rules, "TL996", "    triggers = ('wandb',)\n\n    def visit_Name(self, node):\n        1 / 0\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.torchlint]\nbogus = 1\n")
    (project / "train.py").write_text(WANDB_USED)
    result = run_with_rules(rules, "--isolated", "train.py", cwd=project, tool="flake8")
    lines = result.stdout.decode().splitlines()
    problems = [line for line in lines if ": TL000 " in line]
    assert len(problems) == 2, lines + result.stderr.decode().splitlines()
    assert any("unknown key `bogus`" in line for line in problems)
    assert any("rule TL996 crashed: ZeroDivisionError" in line for line in problems)
    assert all(line.startswith("train.py:1:1: TL000 torchlint could not check this file fully") for line in problems)
    assert any(": TL001 " in line for line in lines)


@pytest.mark.slow
def test_the_configured_baseline_hides_in_the_plugin_what_it_hides_in_the_cli(tmp_path):
    # an editor showing the plugin's findings must not flood a legacy project the CI accepts
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nbaseline = "torchlint-baseline.json"\n')
    (tmp_path / "legacy.py").write_text(WANDB_USED)
    wrote = run_torchlint("check", "--no-cache", "--write-baseline", "torchlint-baseline.json", ".", cwd=tmp_path)
    assert wrote.returncode == 0, wrote.stderr
    (tmp_path / "new.py").write_text(WANDB_USED)
    cli = run_torchlint("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    plugin = flake8("--select", "TL", ".", cwd=tmp_path)
    assert parse(plugin.stdout) == {("./new.py", 1, 1, "TL001")}
    assert b"new.py:1:1: TL001" in cli.stdout and b"legacy.py" not in cli.stdout
    (tmp_path / "torchlint-baseline.json").write_text("{")  # broken: everything shown, and why
    broken = parse(flake8("--select", "TL", ".", cwd=tmp_path).stdout)
    assert ("./legacy.py", 1, 1, "TL001") in broken and ("./legacy.py", 1, 1, "TL000") in broken
