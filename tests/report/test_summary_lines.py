import pytest
from report_builders import diag, fix

from torchlint.core.diagnostics import Applicability
from torchlint.report import summary_lines

SAFE = fix()
UNSAFE = fix(Applicability.UNSAFE)
DISPLAY = fix(Applicability.DISPLAY_ONLY)


@pytest.mark.parametrize(
    "fixes, settings, expected",
    [
        ([], {}, ["All checks passed!"]),
        ([None], {}, ["Found 1 finding."]),
        ([None, None, None], {}, ["Found 3 findings."]),
        ([SAFE, SAFE, None], {}, ["Found 3 findings.", "[*] 2 fixable with the `--fix` option."]),
        (
            [SAFE, SAFE, UNSAFE],
            {},
            [
                "Found 3 findings.",
                "[*] 2 fixable with the `--fix` option "
                "(1 hidden fix can be enabled with the `--unsafe-fixes` option).",
            ],
        ),
        (
            [UNSAFE, UNSAFE],
            {},
            ["Found 2 findings.", "No fixes available (2 hidden fixes can be enabled with the `--unsafe-fixes` option)."],
        ),
        ([SAFE, UNSAFE], {"unsafe_fixes": True}, ["Found 2 findings.", "[*] 2 fixable with the --fix option."]),
        ([DISPLAY], {}, ["Found 1 finding."]),
        ([DISPLAY], {"unsafe_fixes": True}, ["Found 1 finding."]),
        ([None] * 3, {"fix_mode": True, "fixed": {"a.py": 2}}, ["Found 5 findings (2 fixed, 3 remaining)."]),
        ([], {"fix_mode": True, "fixed_codes": {"a.py": {"TL001": 1}}}, ["Found 1 finding (1 fixed, 0 remaining)."]),
        ([], {"fix_mode": True}, ["All checks passed!"]),
        ([SAFE], {"fix_mode": True, "fixed": {"a.py": 1}}, ["Found 2 findings (1 fixed, 1 remaining)."]),
        (
            [UNSAFE],
            {"fix_mode": True, "fixed": {"a.py": 1, "b.py": 3}},
            [
                "Found 5 findings (4 fixed, 1 remaining).",
                "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option).",
            ],
        ),
    ],
)
def test_wording(fixes, settings, expected, make_ctx):
    diagnostics = [diag(row=n + 1, fix=f) for n, f in enumerate(fixes)]
    assert summary_lines(diagnostics, make_ctx(**settings)) == expected


def test_marker_is_coloured_only_with_colour(make_ctx):
    [_, line] = summary_lines([diag(fix=SAFE)], make_ctx(color=True))
    assert line == "[\x1b[36m*\x1b[0m] 1 fixable with the `--fix` option."
