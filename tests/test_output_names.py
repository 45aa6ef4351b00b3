"""A file name that is not UTF-8 is printed by every format (escaped as `\\xff`; SARIF
percent-encodes the raw bytes), in file names and in messages that quote one."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from cli_support import run_torchlint
from test_tl004_cudnn_rnn_double_backward import GRU_MODEL, penalty

BAD = "import wandb\n\n\ndef train():\n    wandb.init()\n"
NAME = "bad\\xff.py"  # how bad<0xff>.py is spelled in output
SITE = "train\\xff.py"  # quoted by TL004's message about models.py


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("names")
    (root / os.fsdecode(b"bad\xff.py")).write_text(BAD)
    (root / "models.py").write_text(GRU_MODEL)
    (root / os.fsdecode(b"train\xff.py")).write_text(penalty("from models import Critic"))
    return root


def output(project: Path, fmt: str, *extra: str) -> str:
    result = run_torchlint("check", "--no-cache", "--output-format", fmt, *extra, ".", cwd=project)
    assert result.returncode == 1 and result.stderr == b"", result.stderr
    return result.stdout.decode("utf-8")  # strict: the output is valid UTF-8


@pytest.mark.parametrize("fmt", ["concise", "full"])
def test_human_formats(project, fmt):
    text = output(project, fmt)
    assert f"{NAME}:1:1: TL001" in text
    assert f"at {SITE}:7" in text


@pytest.mark.parametrize("fmt", ["json", "json-lines"])
def test_json_formats(project, fmt):
    text = output(project, fmt)
    items = json.loads(text) if fmt == "json" else [json.loads(line) for line in text.splitlines()]
    by_code = {item["code"]: item for item in items}
    assert by_code["TL001"]["filename"] == os.path.join(str(project), NAME)
    assert f"at {SITE}:7" in by_code["TL004"]["message"]


def test_sarif(project):
    log = json.loads(output(project, "sarif"))
    results = {r["ruleId"]: r for r in log["runs"][0]["results"]}
    location = results["TL001"]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "bad%FF.py", "uriBaseId": "%SRCROOT%"}
    assert f"at {SITE}:7" in results["TL004"]["message"]["text"]


def test_junit(project):
    suites = ElementTree.fromstring(output(project, "junit"))
    names = {suite.get("name") for suite in suites}
    assert NAME in names
    assert any(SITE in failure.get("message") for failure in suites.iter("failure"))


def test_github(project):
    text = output(project, "github")
    assert f"file={NAME}," in text and f"::{NAME}:1:1: TL001" in text


def test_statistics_and_show_fixes(project):
    assert "TL001" in output(project, "concise", "--statistics")
    fixed = project.parent / "fixed"
    fixed.mkdir(exist_ok=True)
    (fixed / os.fsdecode(b"bad\xff.py")).write_text(BAD)
    result = run_torchlint("check", "--no-cache", "--fix", "--show-fixes", ".", cwd=fixed)
    assert result.returncode == 0 and result.stderr == b""
    assert f"- {NAME}:" in result.stdout.decode("utf-8")


def test_junit_holds_a_file_name_with_control_characters(tmp_path):
    (tmp_path / "ctl\x01\x1b.py").write_text(BAD)
    result = run_torchlint("check", "--no-cache", "--output-format", "junit", ".", cwd=tmp_path)
    assert result.returncode == 1 and result.stderr == b"", result.stderr
    suites = ElementTree.fromstring(result.stdout.decode("utf-8"))  # XML 1.0 rejects raw \x01
    assert {suite.get("name") for suite in suites} == {"ctl\\x01\\x1b.py"}


FORGED = "t\n::add-mask::secret\n::error title=forged::\u202eyp.py"  # a pull request's file name
FORGED_SHOWN = "t\\n::add-mask::secret\\n::error title=forged::\\u202eyp.py"


@pytest.mark.parametrize("fmt", ["full", "concise", "github"])
def test_a_file_name_cannot_forge_lines_or_reorder_the_terminal(tmp_path, fmt):
    (tmp_path / FORGED).write_text(BAD)
    result = run_torchlint("check", "--no-cache", "--output-format", fmt, ".", cwd=tmp_path)
    assert result.returncode == 1 and result.stderr == b"", result.stderr
    text = result.stdout.decode("utf-8")
    assert "\u202e" not in text
    lines = text.splitlines()
    if fmt == "github":
        assert [line.split(" ")[0] for line in lines] == ["::warning"]  # one finding, one command
    else:
        assert not any(line.startswith("::") for line in lines), lines
        assert f"{FORGED_SHOWN}:1:1: TL001" in text


@pytest.mark.parametrize("fmt", ["json", "json-lines"])
def test_json_keeps_names_exact_and_tells_undecodable_ones_apart(tmp_path, fmt):
    (tmp_path / FORGED).write_text(BAD)
    (tmp_path / os.fsdecode(b"bad\xff.py")).write_text(BAD)
    (tmp_path / NAME).write_text(BAD)  # named with the four characters `\xff`
    result = run_torchlint("check", "--no-cache", "--output-format", fmt, ".", cwd=tmp_path)
    text = result.stdout.decode("utf-8")
    items = json.loads(text) if fmt == "json" else [json.loads(line) for line in text.splitlines()]
    names = sorted((item["filename"], item.get("filename_uri") or "") for item in items)
    assert names == sorted([
        (os.path.join(str(tmp_path), FORGED), ""),
        (os.path.join(str(tmp_path), NAME), ""),
        (os.path.join(str(tmp_path), NAME), (tmp_path / "bad").as_uri() + "%FF.py"),
    ])
