import hashlib
import json
from pathlib import Path

import jsonschema
import pytest
from report_builders import RULES, diag, fix, output

from torchlint.report.sarif import to_sarif

SCHEMA = json.loads((Path(__file__).parent / "sarif_minimal_schema.json").read_text())


def sarif(diagnostics, ctx) -> dict:
    return json.loads(output("sarif", diagnostics, ctx))


def results(diagnostics, ctx) -> list:
    return sarif(diagnostics, ctx)["runs"][0]["results"]


def region(result) -> dict:
    return result["locations"][0]["physicalLocation"]["region"]


def fingerprint(result) -> str:
    return result["partialFingerprints"]["primaryLocationLineHash"]


def test_valid_against_the_structural_schema(make_ctx, in_project):
    source = "import wandb\nx = 1\n"
    ctx = make_ctx(sources={str(in_project / "train.py"): source}, tool_version="0.1.0")
    diagnostics = [
        diag(filename=str(in_project / "train.py"), fix=fix()),
        diag(code="TL000", filename="/outside/b.py"),
        diag(code="TL999"),
    ]
    jsonschema.validate(sarif(diagnostics, ctx), SCHEMA)
    jsonschema.validate(sarif([], ctx), SCHEMA)


def test_schema_rejects_a_result_without_locations(make_ctx):
    log = sarif([diag()], make_ctx())
    del log["runs"][0]["results"][0]["locations"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(log, SCHEMA)


def test_log_header_and_driver(make_ctx, in_project):
    log = sarif([], make_ctx(tool_version="1.2.3"))
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    [run] = log["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("torchlint", "1.2.3")
    assert driver["informationUri"].startswith("https://")
    assert run["columnKind"] == "utf16CodeUnits"
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": in_project.as_uri() + "/"}}
    assert run["results"] == []


def test_every_rule_is_listed_with_its_help(make_ctx):
    rules = sarif([], make_ctx())["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(RULES)
    tl001 = rules[1]
    assert tl001["name"] == "heavy-import-at-module-level"
    assert tl001["shortDescription"] == {"text": "Heavy import at module level"}
    assert tl001["fullDescription"] == {"text": "Checks for heavy imports at module level."}
    assert tl001["help"] == {"text": RULES["TL001"].doc, "markdown": RULES["TL001"].doc}
    assert tl001["helpUri"] == RULES["TL001"].url
    assert tl001["defaultConfiguration"] == {"level": "warning", "enabled": True}
    assert rules[2]["defaultConfiguration"]["enabled"] is False
    assert rules[2]["fullDescription"] == {"text": "`.item()` in a loop"}


def test_result_fields(make_ctx, in_project):
    d = diag(code="TL003", filename=str(in_project / "src" / "my model.py"), row=2, col=3, end=(4, 5), message="m")
    [result] = results([d], make_ctx())
    assert result["ruleId"] == "TL003"
    assert result["ruleIndex"] == 2
    assert result["level"] == "warning"
    assert result["message"] == {"text": "m"}
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "src/my%20model.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 2, "startColumn": 3, "endLine": 4, "endColumn": 5}


def test_file_outside_root_gets_an_absolute_uri(make_ctx):
    [result] = results([diag(filename="/outside/b.py")], make_ctx())
    assert result["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "file:///outside/b.py"}


def test_unknown_rule_has_no_rule_index(make_ctx):
    [result] = results([diag(code="TL999")], make_ctx())
    assert "ruleIndex" not in result


def test_columns_count_utf16_code_units_after_astral_characters(make_ctx):
    # "😀" is one code point but two UTF-16 code units; "é" is one of each.
    source = "x = '😀😀é'; wandb.init()\n"
    ctx = make_ctx(sources={"train.py": source})
    [result] = results([diag(row=1, col=13, end=(1, 25))], ctx)
    assert region(result) == {"startLine": 1, "startColumn": 15, "endLine": 1, "endColumn": 27}


def test_columns_unchanged_without_astral_characters_or_source(make_ctx):
    d = diag(row=1, col=9, end=(1, 12))
    assert region(results([d], make_ctx(sources={"train.py": "x = 'é'; f()\n"}))[0])["startColumn"] == 9
    assert region(results([d], make_ctx())[0])["startColumn"] == 9


def test_fix_edits_use_utf16_columns(make_ctx):
    ctx = make_ctx(sources={"train.py": "😀 = 1\nimport wandb\n"})
    [result] = results([diag(fix=fix())], ctx)
    [change] = result["fixes"][0]["artifactChanges"]
    assert result["fixes"][0]["description"] == {"text": "Move the import into the function"}
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 1, "startColumn": 1, "endLine": 2, "endColumn": 1},
            "insertedContent": {"text": ""},
        }
    ]


def test_fingerprints_are_stable_when_code_moves(make_ctx):
    before = make_ctx(sources={"train.py": "import wandb\n"})
    after = make_ctx(sources={"train.py": "import os\n\n\n  import wandb\n"})
    [a] = results([diag(row=1, col=1)], before)
    [b] = results([diag(row=4, col=3)], after)
    assert fingerprint(a) == fingerprint(b)


def test_fingerprints_differ_for_identical_findings(make_ctx):
    ctx = make_ctx(sources={"train.py": "import wandb\nimport wandb\n"})
    first, second = results([diag(row=1), diag(row=2)], ctx)
    assert fingerprint(first).endswith(":1") and fingerprint(second).endswith(":2")
    assert fingerprint(first) != fingerprint(second)


@pytest.mark.parametrize(
    "other",
    [
        {"code": "TL003"},
        {"filename": "other.py"},
        {"row": 2},  # different line text
    ],
)
def test_fingerprints_depend_on_rule_path_and_line_text(other, make_ctx):
    sources = {"train.py": "import wandb\nimport torch\n", "other.py": "import wandb\n"}
    ctx = make_ctx(sources=sources)
    [base] = results([diag()], ctx)
    [changed] = results([diag(**other)], ctx)
    assert fingerprint(base) != fingerprint(changed)


def test_fingerprints_are_pinned_across_releases(make_ctx):
    # Changing the recipe would re-open every alert users have triaged.
    ctx = make_ctx(sources={"train.py": "  import wandb  \n"})
    expected = hashlib.sha256(b"TL001\0train.py\0import wandb").hexdigest()[:16]
    assert fingerprint(to_sarif([diag()], ctx)["runs"][0]["results"][0]) == f"{expected}:1"
