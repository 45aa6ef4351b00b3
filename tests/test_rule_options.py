"""Rule options live in `[tool.torchlint.<rule-name>]`. TL001's module list moved there
from the top of `[tool.torchlint]`: the old keys are still read, with a warning that says
where they go now, and giving a key in both places is an error. Through `cli.main`."""

from __future__ import annotations

from cli_support import run_torchlint, write_tree

PLOTS = "import matplotlib\n\n\ndef show():\n    matplotlib.use('Agg')\n"
TRACKING = "import wandb\n\n\ndef log():\n    wandb.log({})\n"
TABLE = "[tool.torchlint.heavy-import-at-module-level]\n"


def _check(root, *args):
    result = run_torchlint("check", "--output-format", "concise", *args, ".", cwd=root)
    return result.returncode, result.stdout.decode(), result.stderr.decode()


def test_rule_table_extends_and_replaces_the_module_list(tmp_path):
    write_tree(tmp_path, {"plots.py": PLOTS, "track.py": TRACKING, "pyproject.toml": TABLE + "extend-lazy-imports = ['matplotlib']\n"})
    code, out, err = _check(tmp_path, "--no-cache")
    assert code == 1 and err == ""
    assert "plots.py:1:1: TL001" in out and "track.py:1:1: TL001" in out
    (tmp_path / "pyproject.toml").write_text(TABLE + "lazy-imports = ['matplotlib']\n")
    code, out, err = _check(tmp_path, "--no-cache")
    assert "plots.py:1:1: TL001" in out and "track.py" not in out and err == ""


def test_old_top_level_keys_are_read_with_a_warning_naming_the_new_place(tmp_path):
    write_tree(tmp_path, {"plots.py": PLOTS, "track.py": TRACKING, "pyproject.toml": "[tool.torchlint]\nextend-lazy-imports = ['matplotlib']\n"})
    code, out, err = _check(tmp_path, "--no-cache")
    assert code == 1 and "plots.py:1:1: TL001" in out and "track.py:1:1: TL001" in out
    assert err.splitlines() == [
        f"warning: {tmp_path / 'pyproject.toml'}: `extend-lazy-imports` in [tool.torchlint] is deprecated; "
        "use `extend-lazy-imports` in [tool.torchlint.heavy-import-at-module-level]"
    ]
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\nlazy-imports = ['matplotlib']\n")
    code, out, err = _check(tmp_path, "--no-cache")
    assert "plots.py:1:1: TL001" in out and "track.py" not in out
    assert "`lazy-imports` in [tool.torchlint] is deprecated; use `lazy-imports` in [tool.torchlint.heavy-import-at-module-level]" in err


def test_old_and_new_keys_together(tmp_path):
    both = "[tool.torchlint]\nlazy-imports = ['wandb']\n" + TABLE + "lazy-imports = ['matplotlib']\n"
    write_tree(tmp_path, {"plots.py": PLOTS, "pyproject.toml": both})
    code, out, err = _check(tmp_path, "--no-cache")
    assert code == 2 and out == ""
    assert err.splitlines() == [
        f"error: {tmp_path / 'pyproject.toml'}: `lazy-imports` is given both in [tool.torchlint] and in "
        "[tool.torchlint.heavy-import-at-module-level]; keep the one in [tool.torchlint.heavy-import-at-module-level]"
    ]
    # different options of the two places combine: the old list, extended by the new table
    mixed = "[tool.torchlint]\nlazy-imports = ['wandb']\n" + TABLE + "extend-lazy-imports = ['matplotlib']\n"
    write_tree(tmp_path, {"track.py": TRACKING, "pyproject.toml": mixed})
    code, out, err = _check(tmp_path, "--no-cache")
    assert code == 1 and "plots.py:1:1: TL001" in out and "track.py:1:1: TL001" in out
    assert len(err.splitlines()) == 1 and "deprecated" in err


def test_a_bad_value_is_an_error_naming_the_option(tmp_path):
    write_tree(tmp_path, {"plots.py": PLOTS, "pyproject.toml": TABLE + "lazy-imports = [1]\n"})
    code, _, err = _check(tmp_path, "--no-cache")
    assert code == 2 and "`heavy-import-at-module-level.lazy-imports` must be a list of strings" in err


def test_the_cache_is_keyed_by_the_options(tmp_path):
    write_tree(tmp_path, {"plots.py": PLOTS, "pyproject.toml": TABLE + "lazy-imports = ['wandb']\n"})
    assert _check(tmp_path)[0] == 0
    (tmp_path / "pyproject.toml").write_text(TABLE + "lazy-imports = ['wandb']\nextend-lazy-imports = ['matplotlib']\n")
    code, out, _ = _check(tmp_path)
    assert code == 1 and "plots.py:1:1: TL001" in out
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\nlazy-imports = ['wandb']\n")
    assert _check(tmp_path)[0] == 0
