"""Docs that cannot rot: every fenced shell, TOML, YAML and JSON block of README.md and
docs/**/*.md is run or validated here.

- TOML is parsed; a `[tool.torchlint]` table is loaded by `torchlint check` itself.
- YAML is parsed; a pre-commit config names this repository's hooks, a workflow gives the
  action only the inputs action.yml declares.
- Shell commands run, in order, in a temp copy of the fixtures (as `fixtures/` and `src/`)
  and must exit 0 or 1 (2 is a usage error); a transcript's `echo $?` must show the status
  of the command before it. `pip install` is not run: its requirements are parsed, and a
  torchlint requirement must be one pip can satisfy here (a path or a git URL, with extras
  that exist), never a name on a package index. A block marked `<!-- not run: REASON -->`
  is parsed (`bash -n`) only.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from cli_support import FIXTURES, REPO
from docs_blocks import Block, all_blocks, commands, doc_files
from torchlint.cli import main

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

BLOCKS = all_blocks()
SHELL_BLOCKS = [block for block in BLOCKS if block.is_shell]
KNOWN_LANGS = {"python", "toml", "yaml", "json", "lua", "text", "bash", "sh", "shell", "console", ""}
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
ACTION_INPUTS = set(yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))["inputs"])
HOOK_IDS = {hook["id"] for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
PIP_INSTALL = re.compile(r"(?:python3? -m )?pip install [^`&|;]*")
FENCED = re.compile(r"^\s*```.*?^\s*```", re.S | re.M)


def _of(*langs: str):
    chosen = [block for block in BLOCKS if block.lang in langs]
    return pytest.mark.parametrize("block", chosen, ids=[block.where for block in chosen])


def test_the_harness_finds_the_blocks_it_must_keep_true():
    kinds = {(block.path.name, block.lang) for block in BLOCKS}
    assert {("README.md", "toml"), ("README.md", "yaml"), ("README.md", "bash"), ("README.md", "json")} <= kinds
    assert sum(block.is_shell for block in BLOCKS) >= 10
    assert {block.lang for block in BLOCKS} <= KNOWN_LANGS, "a new kind of block: teach this harness to check it"


@_of("toml")
def test_toml_block_parses_and_torchlint_accepts_its_tables(block, tmp_path, monkeypatch, capsys):
    data = tomllib.loads(block.text)
    if "torchlint" not in data.get("tool", {}):
        return  # another tool's file (Helix's languages.toml): parsing is what we can check
    (tmp_path / "pyproject.toml").write_text(block.text, encoding="utf-8")
    (tmp_path / "clean.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    baseline = data["tool"]["torchlint"].get("baseline")
    if baseline:  # made as the README says, before the configuration names it
        assert main(["check", "--no-cache", "--write-baseline", baseline, "."]) == 0, capsys.readouterr().err
    code = main(["check", "--no-cache", "."])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "deprecated" not in err, err  # the docs show the current keys


@_of("yaml")
def test_yaml_block_parses_and_names_only_what_exists(block):
    data = yaml.safe_load(block.text)
    if "repos" in data:  # a .pre-commit-config.yaml
        hooks = [hook["id"] for repo in data["repos"] for hook in repo["hooks"]]
        commented = re.findall(r"#\s*- id: ([\w-]+)", block.text)
        assert hooks and set(hooks + commented) <= HOOK_IDS
    if "jobs" in data:  # a workflow that uses this action
        steps = [step for job in data["jobs"].values() for step in job["steps"]]
        ours = [step for step in steps if step.get("uses", "").startswith("OWNER/torchlint@")]
        assert ours and all(set(step.get("with", {})) <= ACTION_INPUTS for step in ours)


@_of("json")
def test_json_block_parses(block):
    json.loads(block.text)


def _pip_requirements(command: str):
    """The requirement arguments of one `pip install ...` command."""
    words = shlex.split(command)
    args = words[words.index("install") + 1:]
    takes_value = {"--index-url", "-i", "--extra-index-url", "-r", "-c", "--target", "-t"}
    found, skip = [], False
    for word in args:
        if skip:
            skip = False
        elif word in takes_value:
            skip = True
        elif word == "-e" or word.startswith("-"):
            continue
        else:
            found.append(word)
    return found


def _check_requirement(word: str, where: str) -> None:
    extras = set(PROJECT["optional-dependencies"])
    if word.startswith((".", "/")):  # a path, here this checkout
        path, _, rest = word.partition("[")
        assert (REPO / path).resolve() == REPO, f"{where}: {word}"
        assert set(rest.rstrip("]").split(",")) - {""} <= extras, f"{where}: {word}: no such extra"
        return
    requirement = Requirement(word)
    if requirement.name == PROJECT["name"]:
        # no package index serves torchlint: only a URL (or a path, above) installs it
        assert requirement.url and requirement.url.startswith("git+"), f"{where}: `{word}` needs an index"
        assert requirement.extras <= extras, f"{where}: {word}: no such extra"


def _pip_commands_in_docs():
    """`pip install` in the shell blocks and in the prose's code spans (a span may wrap
    onto the next line); what a transcript prints is output, not advice to check here."""
    found = []
    for block in SHELL_BLOCKS:
        found += [(block.where, match.group(0).strip()) for step in commands(block) for match in PIP_INSTALL.finditer(step.text)]
    for path in doc_files():
        prose = FENCED.sub(lambda match: "\n" * match.group(0).count("\n"), path.read_text(encoding="utf-8"))
        for span in re.finditer(r"`([^`]+)`", prose):
            for match in PIP_INSTALL.finditer(" ".join(span.group(1).split())):
                line = prose.count("\n", 0, span.start()) + 1
                found.append((f"{path.relative_to(REPO)}:{line}", match.group(0).strip()))
    return found


PIP_COMMANDS = _pip_commands_in_docs()


@pytest.mark.parametrize("where, command", PIP_COMMANDS, ids=[where for where, _ in PIP_COMMANDS])
def test_pip_install_lines_name_requirements_pip_can_satisfy(where, command):
    requirements = _pip_requirements(command)
    assert requirements, f"{where}: {command}"
    for word in requirements:
        _check_requirement(word, where)


def test_pip_install_lines_are_found_in_blocks_and_prose():
    assert len(PIP_COMMANDS) >= 4
    assert any("[server]" in command for _, command in PIP_COMMANDS)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("docs")
    ignore = shutil.ignore_patterns("__pycache__", "*.fixed", "*-fixed")
    for name in ("fixtures", "src"):
        shutil.copytree(FIXTURES, root / name, ignore=ignore)
    for name in ("tests/doctor/facts", "tests/explain/samples"):
        shutil.copytree(REPO / name, root / name)
    return root


def _shell_env() -> dict:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("FORCE_COLOR", None)
    return env



def _table_columns(output: str) -> list:
    """The column names of each table header (`┃ check ┃ status ┃ ...`) in `output`."""
    return [[cell.strip() for cell in line.strip("┃ ").split("┃")] for line in output.splitlines() if line.startswith("┃")]


@pytest.mark.parametrize(
    "block",
    # a block that runs starts real processes (slow); one marked `not run` is only parsed
    [pytest.param(block, marks=() if block.not_run else pytest.mark.slow) for block in SHELL_BLOCKS],
    ids=[block.where for block in SHELL_BLOCKS],
)
def test_shell_block_runs(block: Block, workspace: Path):
    steps = commands(block)
    assert steps, block.where
    script = "\n".join(step.text for step in steps)
    parsed = subprocess.run(["bash", "-n"], input=script.encode(), capture_output=True)
    assert parsed.returncode == 0, f"{block.where}: {parsed.stderr.decode()}"
    if block.not_run:
        return
    status = None
    for step in steps:
        if step.text.strip() == "echo $?":
            assert step.output.strip() == str(status), f"{block.where}: the transcript shows another status"
            continue
        parts = [part.strip() for part in step.text.split("&&")]
        for part in [part for part in parts if PIP_INSTALL.match(part)]:
            for word in _pip_requirements(part):
                _check_requirement(word, block.where)
        runnable = " && ".join(part for part in parts if not PIP_INSTALL.match(part))
        result = subprocess.run(["bash", "-o", "pipefail", "-c", runnable], cwd=workspace, env=_shell_env(),
                                capture_output=True, timeout=300)
        status = result.returncode
        assert status in (0, 1), f"{block.where}: `{runnable}` exited {status}: {result.stderr.decode()[-2000:]}"
        shown_columns = _table_columns(step.output)
        if shown_columns:  # a table the transcript shows has the columns, in the order, the command prints
            assert shown_columns == _table_columns(result.stdout.decode()), f"{block.where}: another table header"


def test_the_servers_install_hint_gives_commands_that_work_without_an_index(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pygls", None)  # pygls not importable, as without the extra
    assert main(["server"]) == 2
    err = capsys.readouterr().err
    hints = re.findall(r"`([^`]*pip install [^`]*)`", err)
    assert len(hints) == 2, err
    server_extra = {Requirement(text).name: Requirement(text) for text in PROJECT["optional-dependencies"]["server"]}
    for hint in hints:
        for word in _pip_requirements(hint):
            _check_requirement(word, "torchlint server")
            if not word.startswith("."):  # pygls itself, at the version the extra asks for
                assert Requirement(word).specifier == server_extra[Requirement(word).name].specifier
    assert "[server]" in " ".join(hints)
