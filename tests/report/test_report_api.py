import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from torchlint.report import FORMATS, render, render_statistics, summary_lines

from report_builders import diag, output


def test_formats_are_the_documented_ones():
    assert FORMATS == ("full", "concise", "json", "json-lines", "github", "sarif", "junit")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_renders_a_finding_without_source(fmt, make_ctx):
    text = output(fmt, [diag(filename="missing.py")], make_ctx())
    assert "missing.py" in text


def test_unknown_format_is_a_value_error(make_ctx):
    with pytest.raises(ValueError, match="unknown output format 'xml'"):
        render("xml", [], make_ctx(), io.StringIO())


def _modules_after(code: str) -> set:
    probe = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    repo = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": repo}
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env
    )
    return set(result.stdout.split())


def test_importing_the_package_does_not_import_rich():
    modules = _modules_after("import torchlint.report")
    assert "torchlint.report" in modules
    assert "rich" not in modules


@pytest.mark.parametrize("fmt", ["concise", "json", "json-lines", "github", "sarif", "junit"])
def test_non_full_formats_do_not_import_rich(fmt):
    code = (
        "import io, pathlib\n"
        "from torchlint.report import render, ReportContext, summary_lines, render_statistics\n"
        "from torchlint.core.diagnostics import Diagnostic, Location\n"
        "d = [Diagnostic('TL001', 'm', 'a.py', Location(1, 1), Location(1, 2))]\n"
        "ctx = ReportContext(rules={}, root=pathlib.Path('.'), color=True)\n"
        f"render({fmt!r}, d, ctx, io.StringIO())\n"
        "summary_lines(d, ctx); render_statistics(d, ctx, io.StringIO())"
    )
    assert "rich" not in _modules_after(code)


def test_full_with_colour_uses_rich():
    code = (
        "import io, pathlib\n"
        "from torchlint.report import render, ReportContext\n"
        "render('full', [], ReportContext(rules={}, root=pathlib.Path('.'), color=True), io.StringIO())"
    )
    assert "rich" in _modules_after(code)


def test_statistics_and_summary_are_reachable_from_the_package(make_ctx):
    buffer = io.StringIO()
    render_statistics([diag()], make_ctx(), buffer)
    assert buffer.getvalue() == "1\tTL001\theavy-import-at-module-level\n"
    assert summary_lines([diag()], make_ctx()) == ["Found 1 finding."]
