"""A rule's level ("error" for removed APIs, else "warning") reaches SARIF, GitHub and JUnit;
the real TL101 is an error and the other rules warnings."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace

from report_builders import RULES, diag, output

from cli_support import run_torchlint
from torchlint.rule_api.registry import rule_infos

ERROR_RULES = {**RULES, "TL001": replace(RULES["TL001"], level="error")}


def test_sarif_levels_follow_the_rule(make_ctx):
    log = json.loads(output("sarif", [diag(), diag(code="TL003")], make_ctx(rules=ERROR_RULES)))
    run = log["runs"][0]
    levels = {rule["id"]: rule["defaultConfiguration"]["level"] for rule in run["tool"]["driver"]["rules"]}
    assert levels == {"TL000": "warning", "TL001": "error", "TL003": "warning"}
    assert [result["level"] for result in run["results"]] == ["error", "warning"]


def test_github_annotation_command_follows_the_rule(make_ctx):
    lines = output("github", [diag(), diag(code="TL003")], make_ctx(rules=ERROR_RULES)).splitlines()
    assert lines[0].startswith("::error title=torchlint (TL001),")
    assert lines[1].startswith("::warning title=torchlint (TL003),")


def test_junit_failure_type_follows_the_rule(make_ctx):
    text = output("junit", [diag(), diag(code="TL003")], make_ctx(rules=ERROR_RULES))
    root = ET.fromstring(text.split("\n", 1)[1])
    assert [f.get("type") for f in root.iter("failure")] == ["error", "warning"]


def test_unknown_code_is_an_error(make_ctx):
    assert output("github", [diag(code="TL999")], make_ctx()).startswith("::error ")


def test_registered_levels():
    infos = rule_infos()
    assert infos["TL101"].level == "error" and infos["TL000"].level == "error"
    assert {infos[code].level for code in ("TL001", "TL102", "TL103")} == {"warning"}


def test_cli_sarif_marks_a_removed_api_as_an_error(tmp_path):
    (tmp_path / "m.py").write_text("import torch\n\nx = torch.solve(b, A)\ny = torch.range(0, 9)\n")
    result = run_torchlint("check", "--no-cache", "--output-format", "sarif", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr.decode()
    levels = {r["ruleId"]: r["level"] for r in json.loads(result.stdout)["runs"][0]["results"]}
    assert levels == {"TL101": "error", "TL102": "warning"}
