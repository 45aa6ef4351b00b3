"""README.md stays true: its rules table, the two Quick start commands that .ci/run runs
verbatim, and command 1's promise that linting installs and imports no torch."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from packaging.requirements import Requirement

from cli_support import FIXTURES, REPO
from torchlint.report.rule_pages import rules_table
from torchlint.core.diagnostics import RULE_PAGES_DIR
from torchlint.rule_api.registry import SYNTAX_ERROR, all_rules

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

README = (REPO / "README.md").read_text(encoding="utf-8")
CI = (REPO / ".ci" / "run").read_text(encoding="utf-8")


def _quick_start_commands():
    """The first and the last command of Quick start (between them: other ways to install)."""
    section = README.split("## Quick start\n")[1].split("\n## ")[0]
    found = re.findall(r"```bash\n(.*?)\n```", section, re.S)
    return found[0], found[-1]


def test_rules_table_is_generated_from_the_rules():
    table = README.split("<!-- rules-table:start -->\n")[1].split("\n<!-- rules-table:end -->")[0]
    assert table == rules_table([SYNTAX_ERROR] + [rule.info() for rule in all_rules()], page_dir=RULE_PAGES_DIR)


def test_quick_start_is_two_one_line_commands_install_and_lint_then_install_and_test():
    install_and_lint, install_and_test = _quick_start_commands()
    assert "\n" not in install_and_lint and "\n" not in install_and_test
    assert install_and_lint == "python -m pip install -e . && torchlint check fixtures/"
    assert "torch" not in install_and_lint.replace("torchlint", "")
    assert install_and_test.startswith("python -m pip install 'torch==")
    assert install_and_test.endswith("&& python -m pytest -q")


def test_ci_runs_the_readme_commands_verbatim_and_nothing_else_installs():
    install_and_lint, install_and_test = _quick_start_commands()
    lines = [line.strip() for line in CI.splitlines()]
    # command 1 must exit 1 (the fixtures have findings): CI records its status
    assert f"{install_and_lint} || status=$?" in lines
    assert 'if [ "$status" -ne 1 ]; then' in lines
    assert install_and_test in lines
    installs = [line for line in lines if "pip install" in line and not line.startswith("#")]
    assert installs == [f"{install_and_lint} || status=$?", install_and_test]
    assert lines.index(install_and_test) > lines.index(f"{install_and_lint} || status=$?")


def test_the_package_depends_on_torch_only_through_extras():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "torch" not in {Requirement(spec).name for spec in project["dependencies"]}
    assert "torch" in {Requirement(spec).name for spec in project["optional-dependencies"]["runtime"]}


@pytest.mark.slow
def test_linting_the_fixtures_never_imports_torch(tmp_path):
    # a `torch` first on the path that records any import, in this process or a worker
    marker = tmp_path / "torch-was-imported"
    poison = tmp_path / "poison" / "torch"
    poison.mkdir(parents=True)
    (poison / "__init__.py").write_text(
        f"open({str(marker)!r}, 'a').write(__name__)\nraise ImportError('torch is not installed')\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "torchlint", "check", "--no-cache", "--jobs", "2", "--output-format", "concise", "fixtures/"],
        cwd=FIXTURES.parent,
        env={"PYTHONPATH": str(poison.parent), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
        capture_output=True,
        timeout=300,
    )
    codes = {line.split()[1] for line in result.stdout.decode().splitlines() if ": TL" in line}
    assert result.returncode == 1, result.stderr.decode()
    assert codes >= {"TL001", "TL002", "TL003", "TL004"}
    assert not marker.exists(), "linting imported torch"


def _option_table() -> list:
    """The rows of the README's `<!-- options: torchlint check -->` table: (flags, setting)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- options: torchlint check -->", 1)[1].split("\n\n", 1)[0]
    rows = []
    for line in block.splitlines()[3:]:  # the marker line, the header, the rule
        option, _, setting = [cell.strip() for cell in line.strip("|").split("|")]
        flags = re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", option)
        rows.append((flags, setting.strip("`")))
    return rows


def test_the_option_table_lists_every_flag_of_check_and_only_those():
    from torchlint.commands.check import build_parser

    flags = {flag for action in build_parser()._actions for flag in action.option_strings} - {"-h", "--help"}
    listed = {flag for row_flags, _ in _option_table() for flag in row_flags}
    assert listed == flags


def test_every_setting_the_option_table_names_is_a_config_key():
    from torchlint.core.config import KEYS

    settings = {setting for _, setting in _option_table() if setting}
    assert settings and settings <= set(KEYS)
