"""torchlint runs from a checkout that is not installed: a copy of the repository's
`torchlint/`, `rules/` and `pyproject.toml` first on `sys.path`, with any editable-install
finder of this environment taken out, finds its rules (`torchlint.rules` is the checkout's
`rules/`); a `rules` package beside torchlint that is not its checkout is never loaded."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import REPO, WANDB_USED

pytestmark = pytest.mark.slow

RUN_FROM_CHECKOUT = """
import sys
checkout, target = sys.argv[1], sys.argv[2]
sys.meta_path[:] = [f for f in sys.meta_path
                    if "editable" not in type(f).__name__.lower() and "editable" not in repr(f).lower()]
sys.path.insert(0, checkout)
import torchlint.cli
rule = torchlint.cli.main(["rule", "TL002"])
check = torchlint.cli.main(["check", "--no-cache", "--output-format", "concise", target])
import torchlint.rules
print("loaded from", torchlint.cli.__file__, sys.modules["torchlint.rules"].__file__)
print("exit codes", rule, check)
"""


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("checkout")
    for package in ("torchlint", "rules"):
        shutil.copytree(REPO / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def test_rule_and_check_run_from_a_checkout(checkout, tmp_path):
    target = tmp_path / "train.py"
    target.write_text(WANDB_USED, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-c", RUN_FROM_CHECKOUT, str(checkout), str(target)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1] == "exit codes 0 1", result.stdout + result.stderr
    cli_file, rules_file = lines[-2].removeprefix("loaded from ").split(" ")
    assert Path(cli_file).is_relative_to(checkout) and Path(rules_file).is_relative_to(checkout), lines[-2]
    assert "unvalidated-conv-input" in result.stdout
    findings = [line for line in lines if "TL001" in line and "train.py" in line]
    assert len(findings) == 1, result.stdout


def test_a_foreign_rules_package_beside_torchlint_is_not_loaded(tmp_path):
    """As in a site-packages where torchlint's rules are missing and another distribution
    installed a top-level `rules`: torchlint says its rules are missing and runs none of it."""
    site = tmp_path / "site"
    shutil.copytree(REPO / "torchlint", site / "torchlint", ignore=shutil.ignore_patterns("__pycache__"))
    (site / "rules").mkdir()
    marker = tmp_path / "ran"
    (site / "rules" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    target = tmp_path / "train.py"
    target.write_text(WANDB_USED, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-c", RUN_FROM_CHECKOUT, str(site), str(target)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert "No module named 'torchlint.rules'" in result.stderr
    assert not marker.exists()
