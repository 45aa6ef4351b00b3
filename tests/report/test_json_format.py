import json
import os

from report_builders import diag, fix, output

from torchlint.core.diagnostics import Applicability, Diagnostic

RUFF_FIELDS = ["cell", "code", "end_location", "filename", "fix", "location", "message", "noqa_row", "url"]


def test_fields_are_exactly_ruffs(make_ctx):
    [item] = json.loads(output("json", [diag(fix=fix(), noqa_row=1)], make_ctx()))
    assert list(item) == RUFF_FIELDS
    assert list(item["fix"]) == ["applicability", "edits", "message"]
    assert list(item["fix"]["edits"][0]) == ["content", "end_location", "location"]
    assert list(item["location"]) == ["column", "row"]


def test_values(make_ctx, in_project):
    [item] = json.loads(output("json", [diag(row=2, col=8, end=(2, 13), fix=fix(), noqa_row=2)], make_ctx()))
    assert item["cell"] is None
    assert item["filename"] == os.path.join(str(in_project), "train.py")
    assert item["location"] == {"row": 2, "column": 8}
    assert item["end_location"] == {"row": 2, "column": 13}
    assert item["fix"]["applicability"] == "safe"
    assert item["url"] == "https://github.com/torchlint/torchlint/blob/main/docs/rules/TL001.md"


def test_unknown_rule_has_null_url(make_ctx):
    [item] = json.loads(output("json", [diag(code="TL999")], make_ctx()))
    assert item["url"] is None
    assert item["fix"] is None


def test_round_trip_through_diagnostic_from_json(make_ctx, in_project):
    original = [
        diag(row=1, col=1, fix=fix(), noqa_row=1),
        diag(code="TL003", row=4, col=9, end=(5, 2), fix=fix(Applicability.UNSAFE), message="ünïcode ✓"),
        diag(code="TL000", filename=str(in_project / "bad.py"), message="Syntax error"),
    ]
    items = json.loads(output("json", original, make_ctx()))
    for item in items:
        del item["url"], item["cell"]
    restored = [Diagnostic.from_json(item) for item in items]
    expected = [
        Diagnostic(d.code, d.message, os.path.abspath(d.filename), d.location, d.end_location, d.fix, d.noqa_row)
        for d in original
    ]
    assert restored == expected


def test_empty_is_an_empty_array(make_ctx):
    assert output("json", [], make_ctx()) == "[]\n"


def test_non_ascii_is_written_as_is(make_ctx):
    assert "✓" in output("json", [diag(message="✓")], make_ctx())


def test_json_lines_one_compact_object_per_line(make_ctx):
    diagnostics = [diag(row=1), diag(row=2, fix=fix())]
    text = output("json-lines", diagnostics, make_ctx())
    lines = text.splitlines()
    assert len(lines) == 2 and text.endswith("\n")
    assert lines[0].startswith('{"cell":null,"code":"TL001","end_location":{"column":2,"row":1},')
    assert [json.loads(line) for line in lines] == json.loads(output("json", diagnostics, make_ctx()))


def test_json_lines_empty_is_empty(make_ctx):
    assert output("json-lines", [], make_ctx()) == ""
