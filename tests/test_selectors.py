"""Rule selection says what it does: `TL` and `ALL` select every rule, a selector that
matches no rule is an error naming it (a CI gate must never be turned off silently), and
a misspelt key or option names what was probably meant."""

from __future__ import annotations

import pytest

from cli_support import FIXTURES, WANDB_USED, write_tree
from flake8_support import run_flake8
from torchlint.cli import main
from torchlint.rule_api.registry import all_rules

TL3_ONLY = "import torch\n\n\ndef f(x):\n    return torch.exp(x) - 1\n"  # TL302


def _check(capsys, *argv):
    code = main(["check", "--no-cache", "--output-format", "concise", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _codes(out: str) -> set:
    return {line.split()[1] for line in out.splitlines() if ": TL" in line}


@pytest.mark.parametrize("selector", ["TL", "ALL", "tl", "all"])
def test_tl_and_all_select_every_rule_on_the_flag(tmp_path, capsys, selector):
    write_tree(tmp_path, {"a.py": WANDB_USED, "b.py": TL3_ONLY})
    code, out, err = _check(capsys, "--select", selector, str(tmp_path))
    assert code == 1, err
    assert _codes(out) == {"TL001", "TL302"}


@pytest.mark.parametrize("selector", ["TL", "ALL"])
def test_tl_and_all_select_every_rule_in_the_config(tmp_path, capsys, selector, monkeypatch):
    # a rule that is off by default (TL301) comes on, as with ruff's ALL
    write_tree(tmp_path, {
        "pyproject.toml": f'[tool.torchlint]\nselect = ["{selector}"]\n',
        "a.py": "import torch\n\n\ndef f(x):\n    return torch.log(1 + x)\n",
    })
    monkeypatch.chdir(tmp_path)
    code, out, err = _check(capsys, ".")
    assert code == 1, err
    assert "TL301" in _codes(out)
    assert not [rule for rule in all_rules() if not rule.code.startswith("TL")]


@pytest.mark.parametrize("flag", ["--select", "--extend-select", "--ignore"])
@pytest.mark.parametrize("selector", ["TL9", "TL4", "TL010", "TL399"])
def test_a_flag_selector_matching_no_rule_is_an_error_naming_it(tmp_path, capsys, flag, selector):
    write_tree(tmp_path, {"a.py": WANDB_USED})
    code, out, err = _check(capsys, flag, f"TL001,{selector}", str(tmp_path))
    assert code == 2
    assert f"argument {flag}: '{selector}' matches no rule" in err
    assert out == ""


@pytest.mark.parametrize(
    "table, key",
    [
        ('select = ["TL4"]', "select"),
        ('extend-select = ["TL9"]', "extend-select"),
        ('ignore = ["TL001", "TL4"]', "ignore"),
        ('[tool.torchlint.per-file-ignores]\n"tests/*.py" = ["TL4"]', "per-file-ignores.tests/*.py"),
    ],
)
def test_a_config_selector_matching_no_rule_is_an_error_naming_file_and_key(tmp_path, capsys, monkeypatch, table, key):
    write_tree(tmp_path, {"pyproject.toml": f"[tool.torchlint]\n{table}\n", "a.py": WANDB_USED})
    monkeypatch.chdir(tmp_path)
    code, out, err = _check(capsys, ".")
    assert code == 2
    assert "pyproject.toml: " in err and f"`{key}` has 'TL" in err and "matches no rule" in err
    assert "All checks passed" not in out


def test_each_prefix_of_a_rule_selects_it(tmp_path, capsys):
    write_tree(tmp_path, {"a.py": WANDB_USED, "b.py": TL3_ONLY})
    for selector in ("TL0", "TL00", "TL001"):
        code, out, _ = _check(capsys, "--select", selector, str(tmp_path))
        assert (code, _codes(out)) == (1, {"TL001"}), selector
    for selector in ("TL3", "TL30", "TL302"):
        code, out, _ = _check(capsys, "--select", selector, str(tmp_path))
        assert (code, _codes(out)) == (1, {"TL302"}), selector
    code, out, err = _check(capsys, "--ignore", "TL000", str(tmp_path))  # the syntax code is a code
    assert code == 1, err


@pytest.mark.slow
def test_flake8_select_tl_runs_the_plugin(tmp_path):
    write_tree(tmp_path, {"a.py": WANDB_USED, "pyproject.toml": '[tool.torchlint]\nselect = ["TL"]\n'})
    result = run_flake8("--select", "TL", "a.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert ": TL001 " in result.stdout
    assert "checked with the default settings" not in result.stdout + result.stderr


@pytest.mark.slow
def test_flake8_reports_a_config_selector_matching_no_rule(tmp_path):
    write_tree(tmp_path, {"a.py": WANDB_USED, "pyproject.toml": '[tool.torchlint]\nselect = ["TL4"]\n'})
    result = run_flake8("--select", "TL", "a.py", cwd=tmp_path)
    assert "`select` has 'TL4', which matches no rule" in result.stdout + result.stderr


# did you mean


def test_an_unknown_config_key_suggests_the_known_one(tmp_path, capsys, monkeypatch):
    write_tree(tmp_path, {"pyproject.toml": '[tool.torchlint]\nselct = ["TL001"]\n', "a.py": "x = 1\n"})
    monkeypatch.chdir(tmp_path)
    code, _, err = _check(capsys, ".")
    assert code == 2
    assert "unknown key `selct` in [tool.torchlint]; did you mean `select`?" in err


def test_an_unknown_rule_option_suggests_the_known_one(tmp_path, capsys, monkeypatch):
    write_tree(tmp_path, {
        "pyproject.toml": "[tool.torchlint.host-sync-in-hot-path]\ncheck-host-value = true\n",
        "a.py": "x = 1\n",
    })
    monkeypatch.chdir(tmp_path)
    code, _, err = _check(capsys, ".")
    assert code == 2
    assert "`host-sync-in-hot-path.check-host-value`; did you mean `check-host-values`?" in err


def test_an_unknown_runtime_key_suggests_the_known_one(tmp_path, capsys, monkeypatch):
    write_tree(tmp_path, {"pyproject.toml": "[tool.torchlint.runtime]\nrequire-gpus = true\n"})
    monkeypatch.chdir(tmp_path)
    assert main(["doctor"]) == 2
    assert "unknown key `require-gpus` in [tool.torchlint.runtime]; did you mean `require-gpu`?" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, meant",
    [
        (["check", "--ignroe", "TL001"], "--ignore"),
        (["--ignroe", "TL001"], "--ignore"),
        (["check", "--selct=TL001"], "--select"),
        (["check", "--statistcs"], "--statistics"),
        (["doctor", "--smoek"], "--smoke"),
        (["explain", "--formt", "json"], "--format"),
        (["rule", "--outptu-format", "json"], "--output-format"),
    ],
)
def test_an_unknown_option_suggests_the_known_one(tmp_path, capsys, monkeypatch, argv, meant):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unrecognized arguments: ") and f"did you mean `{meant}`?" in err


def test_an_option_like_nothing_known_gets_no_guess(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--zzzzzz", str(FIXTURES)]) == 2
    assert "did you mean" not in capsys.readouterr().err
