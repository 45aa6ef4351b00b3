"""Every file that CPython cannot parse is TL000, whether or not it mentions anything a
rule looks for; code too deeply nested for CPython is TL000 too, never an internal error.
flake8 reports such files itself (E999): the plugin adds nothing."""

from __future__ import annotations

import json
import pytest

from cli_support import run_torchlint
from flake8_support import run_flake8

UNPARSABLE = {
    "bad-def": ("def f(:\n", (1, 7)),
    "indent": ("x = 1\n    y = 2\n", None),
    "unclosed": ("values = [1, 2\n", (1, 10)),
    "null-byte": ("x = 1\x00\n", (1, 1)),
    "parentheses": ("x = " + "(" * 250 + "1" + ")" * 250 + "\n", None),
    "attribute-chain": ("x = a" + ".b" * 50_000 + "\n", (1, 1)),
    "elif-5000": (
        "def f(a):\n    if a == 0:\n        pass\n" + "    elif a == 1:\n        pass\n" * 5000,
        (1, 1),
    ),
    "with-trigger": ("import wandb\ndef f(:\n", (2, 7)),
}


def _cpython_rejects(text: str) -> bool:
    try:
        compile(text, "bad.py", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    return False


@pytest.mark.parametrize("name", sorted(UNPARSABLE))
def test_every_unparsable_file_is_tl000(tmp_path, name):
    text, where = UNPARSABLE[name]
    assert _cpython_rejects(text)
    (tmp_path / "bad.py").write_text(text)
    completed = run_torchlint("check", "--no-cache", "--output-format", "json", "bad.py", cwd=tmp_path)
    assert completed.stderr.decode() == ""
    assert completed.returncode == 1
    (finding,) = json.loads(completed.stdout)
    assert finding["code"] == "TL000"
    if where is not None:
        assert (finding["location"]["row"], finding["location"]["column"]) == where


def test_one_bad_file_among_good_ones(tmp_path):
    (tmp_path / "good.py").write_text("x = 1\n")
    (tmp_path / "bad.py").write_text("def f(:\n")
    completed = run_torchlint("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert completed.returncode == 1
    assert completed.stdout.decode().splitlines()[0] == "bad.py:1:7: TL000 SyntaxError: invalid syntax"


def test_file_level_noqa_silences_tl000(tmp_path):
    (tmp_path / "bad.py").write_text("# torchlint: noqa\ndef f(:\n")
    completed = run_torchlint("check", "--no-cache", "bad.py", cwd=tmp_path)
    assert completed.returncode == 0, completed.stdout.decode()


@pytest.mark.slow
def test_flake8_reports_e999_alone(tmp_path):
    (tmp_path / "bad.py").write_text("import wandb\ndef f(:\n")
    completed = run_flake8("--select", "E999,TL", "--format", "%(code)s", "bad.py", cwd=tmp_path)
    assert completed.stdout.split() == ["E999"], completed.stderr
