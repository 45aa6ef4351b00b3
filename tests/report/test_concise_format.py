from report_builders import diag, fix, output

from torchlint.core.diagnostics import Applicability


def test_one_line_per_finding_with_fix_marker(make_ctx):
    diagnostics = [
        diag(row=3, col=1, fix=fix()),
        diag(code="TL003", row=9, col=17, message="`.item()` in a loop"),
    ]
    assert output("concise", diagnostics, make_ctx()) == (
        "train.py:3:1: TL001 [*] Module-level import of `wandb`\n"
        "train.py:9:17: TL003 `.item()` in a loop\n"
    )


def test_unsafe_fix_is_marked_only_with_unsafe_fixes(make_ctx):
    diagnostics = [diag(fix=fix(Applicability.UNSAFE))]
    assert "[*]" not in output("concise", diagnostics, make_ctx())
    assert "TL001 [*] Module" in output("concise", diagnostics, make_ctx(unsafe_fixes=True))


def test_display_only_fix_is_never_marked(make_ctx):
    diagnostics = [diag(fix=fix(Applicability.DISPLAY_ONLY))]
    assert "[*]" not in output("concise", diagnostics, make_ctx(unsafe_fixes=True))


def test_no_markers_after_fix_ran(make_ctx):
    assert "[*]" not in output("concise", [diag(fix=fix())], make_ctx(fix_mode=True))


def test_paths_are_relative_to_the_working_directory(make_ctx, in_project):
    absolute = str(in_project / "pkg" / "model.py")
    assert output("concise", [diag(filename=absolute)], make_ctx()).startswith("pkg/model.py:1:1: ")


def test_paths_outside_the_working_directory_are_kept(make_ctx):
    assert output("concise", [diag(filename="/elsewhere/x.py")], make_ctx()).startswith("/elsewhere/x.py:")


def test_colour_only_when_asked(make_ctx):
    plain = output("concise", [diag(fix=fix())], make_ctx())
    coloured = output("concise", [diag(fix=fix())], make_ctx(color=True))
    assert "\x1b[" not in plain
    assert "\x1b[1;31mTL001\x1b[0m" in coloured


def test_show_fixes_lists_fixes_per_file_and_rule(make_ctx):
    ctx = make_ctx(
        show_fixes=True,
        fixed={"b.py": 14, "a.py": 1},
        fixed_codes={"b.py": {"TL001": 2, "TL003": 12}, "a.py": {"TL001": 1}},
    )
    assert output("concise", [], ctx) == (
        "\n"
        "Fixed 15 findings:\n"
        "- a.py:\n"
        "     1 × TL001 (heavy-import-at-module-level)\n"
        "- b.py:\n"
        "    12 × TL003 (item-in-loop)\n"
        "     2 × TL001 (heavy-import-at-module-level)\n"
        "\n"
    )


def test_show_fixes_with_codes_only(make_ctx):
    ctx = make_ctx(show_fixes=True, fixed_codes={"a.py": {"TL003": 2}})
    assert output("concise", [], ctx) == "\nFixed 2 findings:\n- a.py:\n    2 × TL003 (item-in-loop)\n\n"


def test_show_fixes_with_plain_counts(make_ctx):
    ctx = make_ctx(show_fixes=True, fixed={"a.py": 1, "b.py": 0})
    assert output("concise", [], ctx) == "\nFixed 1 finding:\n- a.py:\n    1 × fix\n\n"


def test_fixes_are_not_listed_without_show_fixes(make_ctx):
    assert output("concise", [], make_ctx(fixed={"a.py": 1}, fixed_codes={"a.py": {"TL001": 1}})) == ""
