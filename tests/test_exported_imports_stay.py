"""TL001 keeps a module-level import that the module exports: after `check --fix`, the
finding says there is no automatic fix, the file is unchanged, and `from m import *`
still finds the name. (Every other way of exporting or looking up the name is one of the
rule's INVALID examples, which test_rule_examples.py runs.)"""

from __future__ import annotations

import subprocess
import sys

from cli_support import run_torchlint

EXPORTED = 'import wandb\n__all__ = ["wandb", "train"]\n\n\ndef train():\n    wandb.init()\n'


def test_an_exported_import_is_reported_without_a_fix_and_star_import_still_finds_it(tmp_path):
    (tmp_path / "wandb.py").write_text("def init():\n    return 'run'\n")
    module = tmp_path / "m.py"
    module.write_text(EXPORTED)
    result = run_torchlint("check", "--fix", "--no-cache", "--output-format", "concise", "m.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr.decode()
    assert "m.py:" in result.stdout.decode() and "TL001" in result.stdout.decode()
    assert "no automatic fix" in result.stdout.decode()
    assert module.read_text() == EXPORTED
    star = subprocess.run(
        [sys.executable, "-c", "from m import *; print(wandb.init())"], cwd=tmp_path, capture_output=True
    )
    assert star.stdout.decode().strip() == "run", star.stderr.decode()
