"""`--write-baseline` records today's findings; `--baseline` (or `baseline = "FILE"`) reports
only new ones, in every output format and in the exit code, and counts the stale entries."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cli_support import WANDB_READ_LATER, run_torchlint

LEGACY = "import wandb\n\n\ndef train():\n    wandb.init()\n"
NEW_FINDING = "import mlflow\n\n\ndef log():\n    mlflow.log_metric('loss', 1.0)\n"


def check(project: Path, *args):
    return run_torchlint("check", "--no-cache", *args, cwd=project)


def lines(stream: bytes):
    return stream.decode().splitlines()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.torchlint]\n")
    (root / "src" / "train.py").write_text(LEGACY)
    (root / "src" / "clean.py").write_text("import torch\n")
    return root


def write_baseline(project: Path, name: str = "baseline.json"):
    result = check(project, "--write-baseline", name, ".")
    assert result.returncode == 0, result.stderr.decode()
    return json.loads((project / name).read_text())


def test_write_baseline_records_findings_and_exits_zero(project):
    data = write_baseline(project)
    assert data["version"] == 1
    assert [(f["path"], f["code"], f["count"]) for f in data["findings"]] == [("src/train.py", "TL001", 1)]
    assert len(data["findings"][0]["fingerprint"]) == 16


def test_baseline_fingerprint_is_the_sarif_fingerprint(project):
    data = write_baseline(project)
    sarif = json.loads(check(project, "--output-format", "sarif", ".").stdout)
    [result] = sarif["runs"][0]["results"]
    assert result["partialFingerprints"]["primaryLocationLineHash"] == data["findings"][0]["fingerprint"] + ":1"


def test_baseline_file_is_sorted_and_stable(fixtures_copy):
    project = fixtures_copy / "trainer"
    first = (write_baseline(project), (project / "baseline.json").read_bytes())
    again = (write_baseline(project), (project / "baseline.json").read_bytes())
    assert first[1] == again[1]
    keys = [(f["path"], f["code"], f["fingerprint"]) for f in first[0]["findings"]]
    assert keys == sorted(keys) and len(keys) > 3
    assert all(not Path(f["path"]).is_absolute() for f in first[0]["findings"])


def test_baselined_findings_are_hidden(project):
    write_baseline(project)
    result = check(project, "--baseline", "baseline.json", ".")
    assert result.returncode == 0, result.stdout.decode()
    assert lines(result.stdout) == ["All checks passed!", "1 finding hidden by the baseline."]


def test_new_findings_are_reported_despite_line_shifts_and_unrelated_edits(project):
    write_baseline(project)
    train = project / "src" / "train.py"
    # lines above the finding, an edit of another line, and a new finding
    train.write_text('"""Training."""\nimport os\n\n' + LEGACY.replace("wandb.init()", "wandb.init(project=os.getcwd())"))
    (project / "src" / "log.py").write_text(NEW_FINDING)
    result = check(project, "--baseline", "baseline.json", "--output-format", "concise", ".")
    assert result.returncode == 1
    output = lines(result.stdout)
    assert [line for line in output if "TL001" in line] == [
        line for line in output if line.startswith("src/log.py:1:1: TL001")
    ]
    assert len([line for line in output if "TL001" in line]) == 1
    assert "1 finding hidden by the baseline." in output


def test_identical_findings_in_a_file_are_counted(project):
    # three identical imports share one fingerprint: the baseline holds two of them
    train = project / "src" / "train.py"
    train.write_text("import wandb\nimport wandb\n" + WANDB_READ_LATER)
    data = write_baseline(project)
    assert [f["count"] for f in data["findings"]] == [2]
    train.write_text("import wandb\nimport wandb\nimport wandb\n" + WANDB_READ_LATER)
    result = check(project, "--baseline", "baseline.json", "--output-format", "json", ".")
    assert result.returncode == 1
    assert len(json.loads(result.stdout)) == 1
    train.write_text("import wandb\n" + WANDB_READ_LATER)
    result = check(project, "--baseline", "baseline.json", ".")
    assert result.returncode == 0
    assert lines(result.stdout)[-1] == (
        "1 finding hidden by the baseline; 1 baseline entry no longer occurs "
        "(run --write-baseline baseline.json to prune)."
    )


def test_stale_entries_counted_only_for_files_checked_or_deleted(project):
    (project / "src" / "log.py").write_text(NEW_FINDING)
    write_baseline(project)
    (project / "src" / "train.py").write_text("import torch\n")  # its finding is gone
    only_log = check(project, "--baseline", "baseline.json", "src/log.py")
    assert lines(only_log.stdout) == ["All checks passed!", "1 finding hidden by the baseline."]
    everything = check(project, "--baseline", "baseline.json", ".")
    assert "1 baseline entry no longer occurs" in everything.stdout.decode()
    (project / "src" / "train.py").unlink()
    only_log = check(project, "--baseline", "baseline.json", "src/log.py")
    assert "1 baseline entry no longer occurs" in only_log.stdout.decode()


def test_configured_baseline_is_relative_to_the_config_file(project):
    (project / "ci").mkdir()
    write_baseline(project, "ci/baseline.json")
    (project / "pyproject.toml").write_text('[tool.torchlint]\nbaseline = "ci/baseline.json"\n')
    from_subdir = run_torchlint("check", "--no-cache", ".", cwd=project / "src")
    assert from_subdir.returncode == 0, from_subdir.stdout.decode()
    assert "1 finding hidden by the baseline." in from_subdir.stdout.decode()
    (project / "src" / "log.py").write_text(NEW_FINDING)
    assert check(project, ".").returncode == 1


def test_write_baseline_ignores_the_configured_baseline(project):
    write_baseline(project)
    (project / "pyproject.toml").write_text('[tool.torchlint]\nbaseline = "baseline.json"\n')
    (project / "src" / "log.py").write_text(NEW_FINDING)
    data = write_baseline(project)
    assert sorted(f["path"] for f in data["findings"]) == ["src/log.py", "src/train.py"]


@pytest.mark.parametrize("value", ["3", '""', "[\"a.json\"]"])
def test_bad_baseline_setting_is_a_config_error(project, value):
    (project / "pyproject.toml").write_text(f"[tool.torchlint]\nbaseline = {value}\n")
    result = check(project, ".")
    assert result.returncode == 2
    [line] = lines(result.stderr)
    assert line.startswith("error: ") and "`baseline`" in line and "pyproject.toml" in line


@pytest.mark.parametrize(
    "content",
    [
        None,  # missing
        "{",
        "[]",
        '{"version": 2, "findings": []}',
        '{"version": 1, "findings": [{"path": "src/train.py", "code": "TL001"}]}',
        '{"version": 1, "findings": [{"path": "a.py", "code": "TL001", "fingerprint": "x", "count": 0}]}',
    ],
)
def test_missing_or_malformed_baseline_is_one_line_and_exit_2(project, content):
    if content is not None:
        (project / "baseline.json").write_text(content)
    result = check(project, "--baseline", "baseline.json", ".")
    assert result.returncode == 2
    assert result.stdout == b""
    [line] = lines(result.stderr)
    assert line.startswith("error: baseline.json: ")


def test_unwritable_baseline_is_one_line_and_exit_2(project):
    result = check(project, "--write-baseline", "no/such/dir/baseline.json", ".")
    assert result.returncode == 2
    [line] = lines(result.stderr)
    assert line.startswith("error: no/such/dir/baseline.json: cannot write the baseline")


def _reported(fmt: str, output: bytes) -> str:
    """What a format says about findings (SARIF also carries every rule's doc, whose
    examples may name any file)."""
    if fmt == "sarif":
        return json.dumps(json.loads(output)["runs"][0]["results"])
    return output.decode()


FORMATS = ["full", "concise", "json", "json-lines", "github", "sarif", "junit"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_baseline_applies_to_every_format_and_the_exit_code(project, fmt):
    write_baseline(project)
    hidden = check(project, "--baseline", "baseline.json", "--output-format", fmt, ".")
    assert hidden.returncode == 0
    assert "train.py" not in _reported(fmt, hidden.stdout)
    (project / "src" / "log.py").write_text(NEW_FINDING)
    shown = check(project, "--baseline", "baseline.json", "--output-format", fmt, ".")
    assert shown.returncode == 1
    reported = _reported(fmt, shown.stdout)
    assert "log.py" in reported and "train.py" not in reported
    machine = fmt not in ("full", "concise")
    summary = "1 finding hidden by the baseline."
    assert (summary in shown.stderr.decode()) == machine
    assert (summary in shown.stdout.decode()) != machine


def test_baseline_applies_to_statistics(project):
    write_baseline(project)
    (project / "src" / "log.py").write_text(NEW_FINDING)
    result = check(project, "--baseline", "baseline.json", "--statistics", "--output-format", "json", ".")
    assert result.returncode == 1
    assert [(row["code"], row["count"]) for row in json.loads(result.stdout)] == [("TL001", 1)]


@pytest.mark.slow
def test_pre_commit_honours_the_configured_baseline(tmp_path):
    from test_packaging import git_project, run

    from cli_support import REPO

    repo, env = git_project(tmp_path)
    (repo / "pyproject.toml").write_text('[tool.torchlint]\nbaseline = "torchlint-baseline.json"\n')
    write_baseline(repo, "torchlint-baseline.json")
    run("git", "add", ".", cwd=repo)
    pre_commit = [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "torchlint", "--all-files"]
    passed = run(*pre_commit, cwd=repo, env=env, check=False)
    assert passed.returncode == 0, passed.stdout.decode()
    (repo / "log.py").write_text(NEW_FINDING)
    run("git", "add", "log.py", cwd=repo)
    failed = run(*pre_commit, cwd=repo, env=env, check=False)
    assert failed.returncode == 1, failed.stdout.decode()
    assert "log.py:1:1: TL001" in failed.stdout.decode()
