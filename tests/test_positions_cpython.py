"""Rows and columns follow CPython's reading of the file (a form feed in indentation,
tabs, CRLF, lone CR, non-ASCII), and fixes land where the finding is: through the CLI
and through flake8."""

from __future__ import annotations

import json
import pytest

from cli_support import run_torchlint
from flake8_support import run_flake8

LIGHTNING = (
    "import lightning.pytorch as pl\n\n\n"
    "class Model(pl.LightningModule):\n"
    "{i}def training_step(self, batch, batch_idx):\n"
    "{i}{i}loss = self.net(batch)\n"
    "{ff}{i}{i}self.log(\"loss\", loss.item())  # é\n"
    "{i}{i}return loss\n"
)
CONV = (
    "import torch\nimport torch.nn as nn\n\n\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.conv = nn.Conv2d(3, 8, 3)\n\n"
    "    def forward(self, x):\n"
    "        z = 1\n"
    "{ff}        return self.conv(x)\n"
)
MODEL_INPUTS = "[tool.torchlint.unvalidated-conv-input]\ncheck-model-inputs = true\n"


def _write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    compile(text, name, "exec")  # valid Python: CPython is the reference
    return path


def _findings(path, code: str):
    completed = run_torchlint("check", "--no-cache", "--output-format", "json", "--select", code, str(path))
    assert completed.returncode == 1, completed.stderr.decode()
    assert completed.stderr == b""
    return json.loads(completed.stdout)


def _expected_column(text: str, row: int, needle: str) -> int:
    """1-based code-point column of `needle` on `row`, rows split as CPython splits them."""
    line = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")[row - 1]
    return line.index(needle) + 1


def _fixed(path) -> str:
    completed = run_torchlint("check", "--no-cache", "--fix", str(path))
    assert completed.stderr == b"", completed.stderr.decode()
    return path.read_bytes().decode("utf-8")


@pytest.mark.parametrize(
    "indent, form_feed, newline",
    [
        ("    ", "", "\n"),
        ("\t", "", "\n"),  # tab indentation counts one column per tab, as ruff does
        ("    ", "\x0c", "\n"),  # a form feed resets CPython's indentation count
        ("    ", "  \x0c", "\n"),
        ("    ", "    \x0c    \x0c", "\n"),
        ("\t", "\x0c", "\n"),
        ("    ", "", "\r"),  # lone CR ends a line for CPython
        ("    ", "\x0c", "\r"),
        ("    ", "", "\r\n"),
    ],
)
def test_position_and_in_place_fix_follow_cpython(tmp_path, indent, form_feed, newline):
    text = LIGHTNING.format(i=indent, ff=form_feed).replace("\n", newline)
    path = _write(tmp_path, "model.py", text)
    (finding,) = _findings(path, "TL003")
    assert finding["location"]["row"] == 7
    assert finding["location"]["column"] == _expected_column(text, 7, "loss.item()")
    assert _fixed(path) == text.replace("loss.item()", "loss.detach()")


@pytest.mark.parametrize("form_feed", ["\x0c", "  \x0c", "\x0c\x0c", "    \x0c"])
def test_inserted_lines_land_above_a_statement_indented_with_a_form_feed(tmp_path, form_feed):
    # The same module without the form feed is the reference: the fix must insert the
    # same lines, and leave the form-feed line exactly as it was. The fix's mechanics are
    # under test, so TL002 reports the model's entry conv (not its default shape).
    (tmp_path / "pyproject.toml").write_text(MODEL_INPUTS, encoding="utf-8")
    plain = _write(tmp_path, "plain.py", CONV.format(ff=""))
    expected = _fixed(plain).replace("        return self.conv(x)\n", f"{form_feed}        return self.conv(x)\n")
    assert "torch._assert(" in expected
    text = CONV.format(ff=form_feed)
    path = _write(tmp_path, "net.py", text)
    (finding,) = _findings(path, "TL002")
    assert (finding["location"]["row"], finding["location"]["column"]) == (12, _expected_column(text, 12, "self.conv(x)"))
    assert _fixed(path) == expected


def test_form_feed_before_a_top_level_statement(tmp_path):
    plain = "import wandb\n\n\ndef f():\n    wandb.init()\n"
    expected = _fixed(_write(tmp_path, "plain.py", plain))
    assert expected != plain and "    import wandb" in expected
    path = _write(tmp_path, "top.py", "\x0c" + plain)
    (finding,) = _findings(path, "TL001")
    assert (finding["location"]["row"], finding["location"]["column"]) == (1, 2)
    assert _fixed(path) == expected  # the whole line goes, its form feed with it


def test_a_form_feed_in_a_multiline_string_is_string_content(tmp_path):
    text = LIGHTNING.format(i="    ", ff="").replace(
        "        loss = self.net(batch)\n", '        doc = """\n\x0c    text\n"""; loss = self.net(batch)\n'
    )
    path = _write(tmp_path, "model.py", text)
    (finding,) = _findings(path, "TL003")
    assert (finding["location"]["row"], finding["location"]["column"]) == (9, _expected_column(text, 9, "loss.item()"))
    assert _fixed(path) == text.replace("loss.item()", "loss.detach()")


@pytest.mark.slow
def test_flake8_reports_the_cpython_column(tmp_path):
    text = LIGHTNING.format(i="    ", ff="  \x0c")
    path = _write(tmp_path, "model.py", text)
    completed = run_flake8("--select", "TL", "--format", "%(row)d:%(col)d:%(code)s", str(path), cwd=tmp_path)
    assert completed.stdout.split() == [f"7:{_expected_column(text, 7, 'loss.item()')}:TL003"], completed.stderr
