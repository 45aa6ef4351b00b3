"""action.yml, the composite GitHub Action: its shape, and its steps' `run:` commands run
here against a copy of the fixtures, as the runner would run them (`bash -e -o pipefail`,
`${{ ... }}` substituted, GITHUB_OUTPUT collected), with only `uses:` steps left out."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Dict

import jsonschema
import pytest
import yaml

from cli_support import FIXTURES, REPO
from package_index import require_package_index

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]
SARIF_SCHEMA = json.loads((REPO / "tests" / "report" / "sarif_minimal_schema.json").read_text())
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _step(step_id: str) -> dict:
    return next(step for step in STEPS if step.get("id") == step_id)


def test_action_is_a_composite_action_with_described_inputs():
    assert ACTION["name"] and ACTION["description"]
    assert ACTION["runs"]["using"] == "composite"
    assert set(ACTION["inputs"]) == {"paths", "args", "output", "sarif-file", "cache", "baseline"}
    for name, spec in ACTION["inputs"].items():
        assert spec.get("description"), name
        assert isinstance(spec.get("default"), str), name  # inputs reach the steps as strings


def test_every_run_step_names_its_shell_and_every_input_is_used():
    text = json.dumps(STEPS)
    for step in STEPS:
        assert ("run" in step) != ("uses" in step), step
        if "run" in step:
            assert step["shell"] == "bash", step.get("name")
    used = set(re.findall(r"inputs\.([\w-]+)", text))
    assert used == set(ACTION["inputs"])
    for output in ACTION["outputs"].values():
        step_id = re.fullmatch(r"\$\{\{ steps\.([\w-]+)\.outputs\.[\w-]+ \}\}", output["value"]).group(1)
        assert _step(step_id)


def test_torchlint_is_installed_from_the_actions_own_checkout():
    install = _step("install")["run"]
    assert 'pip install --quiet --disable-pip-version-check "${{ github.action_path }}"' in install
    assert "pip install torchlint" not in json.dumps(STEPS)


def test_cache_step_is_actions_cache_keyed_on_version_and_config():
    cache = next(step for step in STEPS if step.get("uses", "").startswith("actions/cache@"))
    assert cache["if"] == "inputs.cache == 'true'"
    # the cache and the key its entries are signed with (docs/security.md)
    assert cache["with"]["path"].split() == [".torchlint_cache", "~/.cache/torchlint"]
    key = cache["with"]["key"]
    assert "steps.install.outputs.version" in key and "hashFiles('**/pyproject.toml', '**/torchlint.toml')" in key
    assert key.startswith(cache["with"]["restore-keys"].strip())


class Runner:
    """Runs the action's `run:` steps as GitHub's runner does, for one set of inputs."""

    def __init__(self, workspace: Path, temp: Path, action_path: Path) -> None:
        self.workspace, self.temp, self.action_path = workspace, temp, action_path
        self.outputs: Dict[str, Dict[str, str]] = {}

    def value(self, expression: str, inputs: Dict[str, str]) -> str:
        if expression.startswith("inputs."):
            name = expression[len("inputs."):]
            return inputs.get(name, ACTION["inputs"][name]["default"])
        if expression == "github.action_path":
            return str(self.action_path)
        if expression == "runner.temp":
            return str(self.temp)
        match = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression)
        if match:
            return self.outputs.get(match.group(1), {}).get(match.group(2), "")
        raise AssertionError(f"this test does not emulate the expression {expression!r}")

    def substitute(self, text: str, inputs: Dict[str, str]) -> str:
        return EXPRESSION.sub(lambda match: self.value(match.group(1), inputs), text)

    def run_step(self, step: dict, inputs: Dict[str, str]) -> subprocess.CompletedProcess:
        script = self.temp / f"{step['id']}.sh"
        script.write_text(self.substitute(step["run"], inputs))
        output_file = self.temp / f"{step['id']}.output"
        output_file.write_text("")
        env = {name: self.substitute(value, inputs) for name, value in step.get("env", {}).items()}
        env = {**os.environ, "NO_COLOR": "1", "GITHUB_OUTPUT": str(output_file),
               "GITHUB_WORKSPACE": str(self.workspace), "RUNNER_TEMP": str(self.temp), **env}
        env.pop("FORCE_COLOR", None)
        result = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=self.workspace, env=env, capture_output=True, timeout=900,
        )
        lines = output_file.read_text().splitlines()
        self.outputs[step["id"]] = dict(line.split("=", 1) for line in lines if "=" in line)
        return result


@pytest.fixture(scope="module")
def runner(tmp_path_factory) -> Runner:
    """The install step, run once: the composite's venv, built from a copy of this checkout."""
    require_package_index()
    root = tmp_path_factory.mktemp("action")
    action_path = root / "action-checkout"
    shutil.copytree(REPO, action_path, ignore=shutil.ignore_patterns(
        ".git", ".venv", "*.egg-info", "build", "dist", ".torchlint_cache", "__pycache__", ".hypothesis"))
    (root / "temp").mkdir()
    (root / "workspace").mkdir()
    runner = Runner(root / "workspace", root / "temp", action_path)
    result = runner.run_step(_step("install"), {})
    assert result.returncode == 0, result.stderr.decode()
    return runner


@pytest.fixture
def workspace(runner: Runner) -> Path:
    """A fresh checkout of a project: the fixtures, in a git repository."""
    if runner.workspace.exists():
        shutil.rmtree(runner.workspace)
    shutil.copytree(FIXTURES, runner.workspace, ignore=shutil.ignore_patterns("__pycache__", "*.fixed", "*-fixed"))
    subprocess.run(["git", "init", "-q"], cwd=runner.workspace, check=True)
    return runner.workspace


def check(runner: Runner, **inputs: str) -> subprocess.CompletedProcess:
    runner.outputs.pop("check", None)
    return runner.run_step(_step("check"), inputs)


def _annotations(result) -> list:
    return [line for line in result.stdout.decode().splitlines() if line.startswith(("::error ", "::warning "))]


def _sarif(path: Path) -> dict:
    log = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(log, SARIF_SCHEMA)
    return log


@pytest.mark.slow
def test_install_step_reports_the_installed_version(runner):
    from torchlint import __version__

    assert runner.outputs["install"]["version"] == __version__


@pytest.mark.slow
def test_defaults_write_annotations_and_sarif_then_fail_the_step(runner, workspace):
    result = check(runner)
    assert result.returncode == 1, result.stderr.decode()
    annotations = _annotations(result)
    assert annotations and any("file=trainer/train.py" in line and "TL001" in line for line in annotations)
    log = _sarif(workspace / "torchlint.sarif")
    results = log["runs"][0]["results"]
    assert len(results) == len(annotations)
    assert {r["ruleId"] for r in results} >= {"TL001", "TL002", "TL003", "TL004"}
    assert runner.outputs["check"] == {"sarif-file": "torchlint.sarif", "exit-code": "1"}


@pytest.mark.slow
def test_sarif_only_prints_no_annotations_but_still_fails(runner, workspace):
    result = check(runner, output="sarif", **{"sarif-file": "out/report.sarif"})
    assert result.returncode == 1
    assert not _annotations(result)
    assert _sarif(workspace / "out" / "report.sarif")["runs"][0]["results"]
    assert runner.outputs["check"] == {"sarif-file": "out/report.sarif", "exit-code": "1"}


@pytest.mark.slow
def test_annotations_only_writes_no_sarif(runner, workspace):
    result = check(runner, output="annotations", paths="trainer\nocr")  # `paths: |` on two lines
    assert result.returncode == 1 and _annotations(result)
    assert {line.split("file=")[1].split("/")[0] for line in _annotations(result)} == {"trainer", "ocr"}
    assert not (workspace / "torchlint.sarif").exists()
    assert runner.outputs["check"] == {"exit-code": "1"}


@pytest.mark.slow
def test_args_reach_torchlint_and_a_clean_selection_passes(runner, workspace):
    result = check(runner, args="--select TL004", paths="ocr")
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
    assert not _annotations(result)
    assert _sarif(workspace / "torchlint.sarif")["runs"][0]["results"] == []


@pytest.mark.slow
def test_a_bad_output_value_is_an_error_annotation_and_exit_2(runner, workspace):
    result = check(runner, output="html")
    assert result.returncode == 2
    assert result.stdout.decode().startswith("::error title=torchlint::input 'output' must be")


@pytest.mark.slow
@pytest.mark.parametrize("args", ["--select NOPE", "--select TL9", "--config missing.toml"])
def test_a_usage_error_is_exit_2_printed_once_and_leaves_no_sarif(runner, workspace, args):
    (workspace / "torchlint.sarif").write_text("stale")  # an earlier run's file is no report of this one
    result = check(runner, args=args)
    assert result.returncode == 2
    assert runner.outputs["check"] == {"exit-code": "2"}
    errors = [line for line in result.stderr.decode().splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr.decode()
    assert not _annotations(result)
    assert not (workspace / "torchlint.sarif").exists()
    assert not list(workspace.rglob("*.sarif")) and not list(runner.temp.glob("*.sarif"))


@pytest.mark.slow
def test_readme_upload_guard_skips_exactly_when_no_valid_sarif_was_written(runner, workspace):
    steps = _readme_workflow()["jobs"]["torchlint"]["steps"]
    upload = next(step for step in steps if step.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    guarded = re.search(r"hashFiles\('([^']+)'\) != ''", upload["if"])
    assert guarded and guarded.group(1) == upload["with"]["sarif_file"]
    sarif = workspace / guarded.group(1)
    assert check(runner, args="--select NOPE").returncode == 2 and not sarif.exists()  # upload skipped
    assert check(runner).returncode == 1 and _sarif(sarif)["runs"][0]["results"]  # uploaded after findings
    assert check(runner, args="--select TL004", paths="ocr").returncode == 0 and _sarif(sarif)  # and when clean


def test_readme_names_the_annotation_levels_torchlint_writes():
    from torchlint.rule_api.registry import rule_infos

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## CI\n")[1]
    assert "error annotations per step" not in section
    bullet = section.split("- Findings are warning annotations")[1].split("\n- ")[0]
    error_codes = {code for code, info in rule_infos().items() if info.level == "error"}
    assert set(re.findall(r"TL\d{3}", bullet)) == error_codes


@pytest.mark.slow
def test_baseline_input_reports_only_new_findings(runner, workspace):
    torchlint = runner.temp / "torchlint-venv" / "bin" / "torchlint"
    written = subprocess.run([str(torchlint), "check", "--write-baseline", "baseline.json", "."], cwd=workspace, capture_output=True)
    assert written.returncode == 0, written.stderr.decode()
    result = check(runner, baseline="baseline.json")
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
    assert not _annotations(result)
    (workspace / "trainer" / "new.py").write_text("import wandb\n\n\ndef f():\n    wandb.init()\n")
    again = check(runner, baseline="baseline.json")
    assert again.returncode == 1
    assert [line for line in _annotations(again) if "file=trainer/new.py" in line]
    assert len(_annotations(again)) == 1


@pytest.mark.slow
@pytest.mark.parametrize("setting", ["fix = true", "fix = true\nunsafe-fixes = true"])
def test_a_pull_requests_config_cannot_make_the_check_rewrite_the_checkout(runner, workspace, setting):
    (workspace / "torchlint.toml").write_text(setting + "\n")
    sources = {path: path.read_bytes() for path in workspace.rglob("*.py")}
    result = check(runner)
    assert result.returncode == 1, result.stdout.decode() + result.stderr.decode()
    assert {path: path.read_bytes() for path in workspace.rglob("*.py")} == sources
    assert _annotations(result) and runner.outputs["check"]["exit-code"] == "1"


def _readme_workflow() -> dict:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## CI\n")[1].split("\n## ")[0]
    return yaml.safe_load(re.search(r"```yaml\n(.*?)\n```", section, re.S).group(1))


def _as_input(value) -> str:
    """What a `with:` value becomes for the action: a string, `true` for YAML's true."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def test_readme_workflow_grants_what_upload_sarif_needs_and_uploads_after_a_failure():
    workflow = _readme_workflow()
    assert workflow["permissions"]["security-events"] == "write"
    steps = workflow["jobs"]["torchlint"]["steps"]
    action = next(step for step in steps if step.get("uses") == "OWNER/torchlint@REF")
    assert set(action["with"]) <= set(ACTION["inputs"])
    upload = next(step for step in steps if step.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert steps.index(upload) > steps.index(action)
    assert "!cancelled()" in upload["if"] or "always()" in upload["if"]
    assert upload["with"]["sarif_file"] == action["with"]["sarif-file"]
    assert not any("pip install torchlint" in step.get("run", "") for step in steps)


@pytest.mark.slow
def test_readme_workflow_run_locally_annotates_writes_sarif_and_fails(runner, workspace):
    steps = _readme_workflow()["jobs"]["torchlint"]["steps"]
    inputs = {name: _as_input(value) for name, value in next(s for s in steps if s.get("uses") == "OWNER/torchlint@REF")["with"].items()}
    result = check(runner, **inputs)
    assert result.returncode == 1, result.stderr.decode()
    assert _annotations(result)
    upload = next(step for step in steps if step.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert _sarif(workspace / upload["with"]["sarif_file"])["runs"][0]["results"]
