"""Fixes that append or replace an argument are right for any argument shape, and a fix
that is refused (by the re-parse guard, or because the file changed during the run) is a
warning: the finding stays and the run exits 1, never 2 (issue 23, items 10 and 15)."""

from __future__ import annotations

import ast

import pytest

from torchlint.run import runner
from torchlint.cli import main

HEADER = "import torch\nimport torchvision\nfrom torch.utils.checkpoint import checkpoint\n\n\n"


def fix(tmp_path, monkeypatch, capsys, body: str, *flags: str):
    """`torchlint check --fix --unsafe-fixes` on a file of `body`: (exit code, fixed body, stdout, stderr)."""
    path = tmp_path / "a.py"
    path.write_text(HEADER + body)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    capsys.readouterr()
    code = main(["check", "--fix", "--unsafe-fixes", "--no-cache", "--select", "TL201,TL202,TL204", *flags, "a.py"])
    out, err = capsys.readouterr()
    return code, path.read_text()[len(HEADER) :], out, err


@pytest.mark.parametrize(
    "body, fixed",
    [
        (  # the reported case: a parenthesized conditional as the last argument
            "def f(p, a, b):\n    return torch.load(p, map_location=(a if b else None))\n",
            "def f(p, a, b):\n    return torch.load(p, map_location=(a if b else None), weights_only=True)\n",
        ),
        (
            "def f(fn, x):\n    return checkpoint(fn, (x))\n",
            "def f(fn, x):\n    return checkpoint(fn, (x), use_reentrant=False)\n",
        ),
        (
            "def f(fn, x):\n    return checkpoint(fn, ((x)))\n",
            "def f(fn, x):\n    return checkpoint(fn, ((x)), use_reentrant=False)\n",
        ),
        (
            "m = torchvision.models.resnet18(pretrained=(True))\n",
            "m = torchvision.models.resnet18(\n    weights=torchvision.models.ResNet18_Weights.IMAGENET1K_V1\n)\n",
        ),
        (  # a trailing comma on the same line stays after the new argument
            "def f(p, a):\n    return torch.load(p, map_location=(a),)\n",
            "def f(p, a):\n    return torch.load(p, map_location=(a), weights_only=True,)\n",
        ),
        (  # one argument per line with a trailing comma: the new one gets its own line
            "def f(p, a):\n    return torch.load(\n        p,\n        map_location=(\n            a\n        ),\n    )\n",
            "def f(p, a):\n    return torch.load(\n        p,\n        map_location=(\n            a\n        ),\n"
            "        weights_only=True,\n    )\n",
        ),
        (  # a comment after the last argument stays after it
            "def f(p, a):\n    return torch.load(p,  # the file\n                      (a)  # where\n                      )\n",
            "def f(p, a):\n    return torch.load(p,  # the file\n                      (a), weights_only=True  # where\n"
            "                      )\n",
        ),
        (
            "def f(fn, x):\n    return checkpoint(fn, lambda y: y if x else -y)\n",
            "def f(fn, x):\n    return checkpoint(fn, lambda y: y if x else -y, use_reentrant=False)\n",
        ),
        (
            "def f(fn, x):\n    return checkpoint(fn, [x for x in (x, x)])\n",
            "def f(fn, x):\n    return checkpoint(fn, [x for x in (x, x)], use_reentrant=False)\n",
        ),
    ],
    ids=["conditional", "paren-name", "double-paren", "paren-true", "trailing-comma", "exploded", "comments", "lambda", "listcomp"],
)
def test_the_appended_or_replaced_argument_is_right_for_any_argument_shape(tmp_path, monkeypatch, capsys, body, fixed):
    code, text, out, err = fix(tmp_path, monkeypatch, capsys, body)
    assert (code, err) == (0, ""), out + err
    assert text == fixed
    ast.parse(HEADER + text)
    again = fix(tmp_path, monkeypatch, capsys, text)
    assert again[:2] == (0, text)  # a second --fix changes nothing


def test_a_bare_generator_argument_gets_no_fix_and_the_finding_stays(tmp_path, monkeypatch, capsys):
    # `f(x for x in y)` takes no second argument: no edit can add one
    body = "def f(ys):\n    return torch.load(y for y in ys)\n"
    code, text, out, err = fix(tmp_path, monkeypatch, capsys, body)
    assert (code, text, err) == (1, body, "")
    assert "a.py:7:12: TL201" in out


def test_a_file_changed_before_its_fixes_are_written_keeps_its_findings_and_exits_1(tmp_path, monkeypatch, capsys):
    # an editor saves the file between the lint and the write (the project pass is the
    # last step before writing); the real run then meets a file that is no longer what it read
    edited = HEADER + "# saved by an editor\n"
    real_fix_project = runner.fix_project

    def then_edit(*args, **kwargs):
        found = real_fix_project(*args, **kwargs)
        (tmp_path / "a.py").write_text(edited)
        return found

    monkeypatch.setattr(runner, "fix_project", then_edit)
    body = "def f(p, a, b):\n    return torch.load(p, map_location=(a if b else None))\n"
    code, _, out, err = fix(tmp_path, monkeypatch, capsys, body)
    assert (tmp_path / "a.py").read_text() == edited
    assert code == 1
    assert err.splitlines() == ["warning: a.py: changed during the run, so its fixes were not written; its findings stay"]
    assert "a.py:7:12: TL201" in out and "internal error" not in out
    assert "Found 1 finding" in out and "fixed" not in out
