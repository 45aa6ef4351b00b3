import io
import json

from report_builders import diag, fix

from torchlint.core.diagnostics import Applicability
from torchlint.report import render_statistics


def stats(diagnostics, ctx, fmt="full") -> str:
    buffer = io.StringIO()
    render_statistics(diagnostics, ctx, fmt, buffer)
    return buffer.getvalue()


DIAGNOSTICS = [
    diag(code="TL003", fix=fix()),
    diag(code="TL001", fix=fix()),
    diag(code="TL003", fix=fix()),
    diag(code="TL001", fix=fix(Applicability.UNSAFE)),
    diag(code="TL000"),
    *[diag(code="TL001", fix=fix()) for _ in range(8)],
]


def test_table_sorted_by_count_then_code_with_fixable_markers(make_ctx):
    assert stats(DIAGNOSTICS, make_ctx()) == (
        "10\tTL001\t[*] heavy-import-at-module-level (9 fixable)\n"
        " 2\tTL003\t[*] item-in-loop\n"
        " 1\tTL000\t[ ] syntax-error\n"
    )


def test_unsafe_fixes_make_a_rule_fixable(make_ctx):
    assert "10\tTL001\t[*] heavy-import-at-module-level\n" in stats(DIAGNOSTICS, make_ctx(unsafe_fixes=True))


def test_ties_sort_by_code_and_no_markers_when_nothing_is_fixable(make_ctx):
    diagnostics = [diag(code="TL003"), diag(code="TL001")]
    assert stats(diagnostics, make_ctx()) == (
        "1\tTL001\theavy-import-at-module-level\n1\tTL003\titem-in-loop\n"
    )


def test_json(make_ctx):
    assert json.loads(stats(DIAGNOSTICS, make_ctx(), fmt="json")) == [
        {"code": "TL001", "name": "heavy-import-at-module-level", "count": 10, "fixable": True, "fixable_count": 9},
        {"code": "TL003", "name": "item-in-loop", "count": 2, "fixable": True, "fixable_count": 2},
        {"code": "TL000", "name": "syntax-error", "count": 1, "fixable": False, "fixable_count": 0},
    ]


def test_stream_then_format(make_ctx):
    buffer = io.StringIO()
    render_statistics([diag()], make_ctx(), buffer, "json")
    assert json.loads(buffer.getvalue())[0]["code"] == "TL001"


def test_format_then_stream_is_accepted_too(make_ctx):
    buffer = io.StringIO()
    render_statistics([diag()], make_ctx(), "json", buffer)
    assert json.loads(buffer.getvalue())[0]["count"] == 1


def test_clean(make_ctx):
    assert stats([], make_ctx()) == ""
    assert stats([], make_ctx(), fmt="json") == "[]\n"


def test_colour(make_ctx):
    assert "\x1b" not in stats(DIAGNOSTICS, make_ctx())
    assert "\x1b[1;31mTL001\x1b[0m" in stats(DIAGNOSTICS, make_ctx(color=True))
