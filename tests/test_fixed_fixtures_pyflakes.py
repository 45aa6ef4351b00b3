"""No fix leaves a broken import: every `.fixed` / `.unsafe-fixed` file under fixtures/
(every rule's, not only TL1xx's) is clean of flake8's F401 (unused import), F811
(redefinition) and F821 (undefined name)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cli_support import FIXTURES

FIXED = sorted(p for p in FIXTURES.rglob("*.py.*") if p.suffix in (".fixed", ".unsafe-fixed"))
CODES = "F401,F811,F821"


def problems(files: dict, tmp_path: Path) -> list:
    """flake8's F401/F811/F821 findings on `{name: text}`, as `name:row: code message` lines."""
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", CODES,
         "--format", "%(path)s:%(row)d: %(code)s %(text)s", "."],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert result.returncode in (0, 1), result.stderr
    return sorted(result.stdout.splitlines())


def test_every_fixed_fixture_is_clean(tmp_path):
    assert any("deprecated" in p.parts for p in FIXED)
    files = {p.relative_to(FIXTURES).as_posix().replace("/", "__") + ".py": p.read_text(encoding="utf-8") for p in FIXED}
    assert problems(files, tmp_path) == []


def test_the_check_sees_a_stale_import(tmp_path):
    assert problems({"bad.py": "import os\nfrom torch import outer\n\ny = ger(1, 2)\n"}, tmp_path) == [
        "./bad.py:1: F401 'os' imported but unused",
        "./bad.py:2: F401 'torch.outer' imported but unused",
        "./bad.py:4: F821 undefined name 'ger'",
    ]
