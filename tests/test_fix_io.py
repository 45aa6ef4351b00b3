"""A fix never loses or corrupts user code: encoding, BOM, newlines, mode, atomic writes."""

from __future__ import annotations

import os
import stat

from cli_support import run_torchlint
from torchlint.config import Config
from torchlint.engine import lint_text
from torchlint.fix import fix_text
from torchlint.ftypes import Applicability, Edit, Fix
from torchlint.rule import Rule

BAD = "import wandb\n\n\ndef train():\n    wandb.init()\n"
FIXED = "\n\ndef train():\n    import wandb\n    wandb.init()\n"


def test_crlf_is_kept(tmp_path):
    path = tmp_path / "crlf.py"
    path.write_bytes(BAD.replace("\n", "\r\n").encode())
    run_torchlint("check", "--fix", ".", cwd=tmp_path)
    assert path.read_bytes() == FIXED.replace("\n", "\r\n").encode()


def test_bom_and_utf8_text_are_kept(tmp_path):
    path = tmp_path / "bom.py"
    source = "# Überprüfung 🚀\n" + BAD
    path.write_bytes(b"\xef\xbb\xbf" + source.encode())
    result = run_torchlint("check", "--fix", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout.decode()
    assert path.read_bytes() == b"\xef\xbb\xbf" + ("# Überprüfung 🚀\n" + FIXED).encode()


def test_latin1_cookie_is_kept(tmp_path):
    path = tmp_path / "latin.py"
    source = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + BAD
    path.write_bytes(source.encode("latin-1"))
    run_torchlint("check", "--fix", ".", cwd=tmp_path)
    assert path.read_bytes() == ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + FIXED).encode("latin-1")


def test_file_mode_is_kept_and_no_temp_files_remain(tmp_path):
    path = tmp_path / "script.py"
    path.write_text(BAD)
    os.chmod(path, 0o751)
    run_torchlint("check", "--fix", "--no-cache", ".", cwd=tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert sorted(p.name for p in tmp_path.iterdir()) == ["script.py"]


def test_columns_count_code_points_after_non_ascii(tmp_path):
    path = tmp_path / "wide.py"
    path.write_text("try:\n    é = 1; import wandb\nexcept ImportError:\n    pass\n", encoding="utf-8")
    result = run_torchlint("check", "--output-format", "concise", ".", cwd=tmp_path)
    assert "wide.py:2:12: TL001" in result.stdout.decode()


class _BreaksCode(Rule):
    """A rule whose fix would produce invalid code."""

    code = "TL998"
    name = "breaks-code"
    summary = "test"

    def visit_Import(self, node):
        self.report(node, "boom", fix=lambda p: Fix("break", (Edit(p.start(node), p.end(node), "import ("),), Applicability.SAFE))


class _Crashes(Rule):
    """A rule that raises."""

    code = "TL997"
    name = "crashes"
    summary = "test"

    def visit_Name(self, node):
        raise ZeroDivisionError("bug in rule")


def test_a_fix_that_breaks_the_code_is_refused():
    rules = [_BreaksCode]
    outcome = fix_text(BAD, lambda text: lint_text(text, "x.py", Config(), rules), unsafe=False)
    assert outcome.text == BAD and not outcome.changed
    assert "does not parse" in outcome.error


def test_a_crashing_rule_is_reported_and_others_still_run():
    from torchlint.registry import find_rule

    result = lint_text(BAD, "x.py", Config(), [_Crashes, find_rule("TL001")])
    assert [d.code for d in result.diagnostics] == ["TL001"]
    assert result.errors == ["x.py: rule TL997 crashed: ZeroDivisionError: bug in rule"]


def test_overlapping_fixes_converge_over_iterations():
    source = "from torch.utils import tensorboard, data\nimport wandb\n\n\ndef f():\n    return tensorboard, data, wandb\n"
    from torchlint.registry import find_rule

    rules = [find_rule("TL001")]
    outcome = fix_text(source, lambda text: lint_text(text, "x.py", Config(), rules), unsafe=False)
    assert outcome.text == (
        "from torch.utils import data\n\n\ndef f():\n    import wandb\n"
        "    from torch.utils import tensorboard\n    return tensorboard, data, wandb\n"
    ) or outcome.text == (
        "from torch.utils import data\n\n\ndef f():\n    from torch.utils import tensorboard\n"
        "    import wandb\n    return tensorboard, data, wandb\n"
    )
    assert sum(outcome.applied.values()) == 2


class _FixCrashes(Rule):
    """A rule whose fix raises while positions are resolved."""

    code = "TL996"
    name = "fix-crashes"
    summary = "test"

    def visit_Import(self, node):
        self.report(node, "boom", fix=lambda positions: 1 / 0)


def test_a_rule_crashing_while_building_its_fix_is_contained():
    from torchlint.registry import find_rule

    result = lint_text(BAD, "x.py", Config(), [_FixCrashes, find_rule("TL001")])
    assert [d.code for d in result.diagnostics] == ["TL001"]
    assert result.errors == ["x.py: rule TL996 crashed: ZeroDivisionError: division by zero"]
