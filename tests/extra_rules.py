"""Run the real CLI with test-only rules added to `torchlint.rules` (in the child process
only: product code has no hook for this)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

_DRIVER = textwrap.dedent(
    """
    import sys
    import torchlint.rules
    torchlint.rules.__path__.append(sys.argv.pop(1))
    from {main} import main
    sys.exit(main(sys.argv[1:]))
    """
)
MAINS = {"torchlint": "torchlint.cli", "flake8": "flake8.main.cli"}

HEADER = (
    "from torchlint.core.diagnostics import Applicability, Edit, Fix, Location\n"
    "from torchlint.rule_api.rule import Rule\n\n\n"
)


def run_with_rules(rules_dir: Path, *args, cwd=None, input=None, tool="torchlint"):
    """`torchlint ARGS` (or `flake8 ARGS`, with the plugin) with every module in
    `rules_dir` discovered as a rule module."""
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-c", _DRIVER.format(main=MAINS[tool]), str(rules_dir), *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        env=env,
        timeout=300,
    )


def write_rule(rules_dir: Path, code: str, visitor: str) -> None:
    """A rule module for `run_with_rules`: rule `code` with this visitor method (source
    indented as a method)."""
    rules_dir.mkdir(exist_ok=True)
    header = f'class TestRule(Rule):\n    code = "{code}"\n    name = "test-{code.lower()}"\n    summary = "test"\n'
    (rules_dir / f"{code.lower()}.py").write_text(HEADER + header + visitor)
