"""The console entry point in a subprocess: formats, exit codes, config, selection, stdin."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import jsonschema
import pytest

from cli_support import FIXTURES, WANDB_READ_LATER, WANDB_USED, expected_findings, run_torchlint

BAD = "import wandb\n\n\ndef train():\n    wandb.init()\n"
FIXED = "def train():\n    import wandb\n\n    wandb.init()\n"
CLEAN = "import torch\n\n\ndef f(x):\n    return torch.relu(x)\n"


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def lines(result) -> list:
    return result.stdout.decode().splitlines()


def test_version_is_fast_and_plain():
    result = run_torchlint("--version")
    assert result.returncode == 0
    assert result.stdout.decode().startswith("torchlint ")


@pytest.mark.parametrize("fmt", ["full", "concise", "json", "json-lines", "github", "sarif", "junit"])
def test_every_format_on_fixtures(fmt):
    result = run_torchlint("check", "--no-cache", "--output-format", fmt, "fixtures/trainer", cwd=FIXTURES.parent)
    assert result.returncode == 1, result.stderr.decode()
    out = result.stdout.decode()
    assert "TL001" in out
    assert "Traceback" not in result.stderr.decode()
    if fmt == "json":
        items = json.loads(out)
        assert {"code", "message", "filename", "location", "end_location", "fix", "noqa_row", "url"} <= set(items[0])
        fixable = [i for i in items if i["fix"]]
        assert fixable and fixable[0]["fix"]["applicability"] == "safe"
        assert {"content", "location", "end_location"} <= set(fixable[0]["fix"]["edits"][0])
    elif fmt == "json-lines":
        assert all(json.loads(line)["code"].startswith("TL") for line in out.splitlines())
    elif fmt == "github":
        assert all(line.startswith(("::error title=torchlint (TL0", "::warning title=torchlint (TL0")) for line in out.splitlines())
        assert "::warning title=torchlint (TL001)" in out  # a finding is a warning, TL000 an error
        assert "file=fixtures/trainer/train.py,line=6,col=1" in out
    elif fmt == "sarif":
        sarif = json.loads(out)
        schema = json.loads((Path(__file__).parent / "report" / "sarif_minimal_schema.json").read_text())
        jsonschema.validate(sarif, schema)
        assert sarif["version"] == "2.1.0" and len(sarif["runs"]) == 1
        rules = sarif["runs"][0]["tool"]["driver"]["rules"]
        assert "TL001" in [rule["id"] for rule in rules]
        result0 = sarif["runs"][0]["results"][0]
        assert result0["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("fixtures/")
        assert result0["partialFingerprints"]
    elif fmt == "junit":
        assert ElementTree.fromstring(out).tag == "testsuites"
    elif fmt in ("full", "concise"):
        assert f"Found {len(expected_findings(FIXTURES / 'trainer'))} findings." in out
        assert "[*] 3 fixable with the `--fix` option." in out


def test_concise_columns_match_markers():
    result = run_torchlint("check", "--no-cache", "--output-format", "concise", "fixtures/trainer", cwd=FIXTURES.parent)
    assert "fixtures/trainer/train.py:6:1: TL001 [*] Module-level import of `wandb`" in result.stdout.decode()
    assert "fixtures/trainer/broken.py:6:8: TL000 SyntaxError" in result.stdout.decode()


def test_clean_tree_exits_zero(tmp_path):
    write(tmp_path, "ok.py", CLEAN)
    result = run_torchlint("check", ".", cwd=tmp_path)
    assert result.returncode == 0
    assert "All checks passed!" in result.stdout.decode()


def test_short_form_and_default_path(tmp_path):
    write(tmp_path, "bad.py", BAD)
    assert run_torchlint("bad.py", cwd=tmp_path).returncode == 1
    assert run_torchlint(cwd=tmp_path).returncode == 1
    assert run_torchlint("--output-format", "concise", cwd=tmp_path).returncode == 1


def test_exit_zero_and_quiet(tmp_path):
    write(tmp_path, "bad.py", BAD)
    result = run_torchlint("check", "--exit-zero", "--quiet", "--output-format", "concise", ".", cwd=tmp_path)
    assert result.returncode == 0
    assert lines(result) == ["bad.py:1:1: TL001 [*] " + lines(result)[0].split("[*] ", 1)[1]]


def test_fix_writes_and_second_fix_changes_nothing(tmp_path):
    path = write(tmp_path, "bad.py", BAD)
    first = run_torchlint("check", "--fix", ".", cwd=tmp_path)
    assert first.returncode == 0, first.stdout.decode()
    assert path.read_text() == FIXED
    assert "Found 1 finding (1 fixed, 0 remaining)." in first.stdout.decode()
    second = run_torchlint("check", "--fix", ".", cwd=tmp_path)
    assert second.returncode == 0 and path.read_text() == FIXED


def test_exit_non_zero_on_fix(tmp_path):
    write(tmp_path, "bad.py", BAD)
    assert run_torchlint("check", "--fix", "--exit-non-zero-on-fix", ".", cwd=tmp_path).returncode == 1


def test_diff_writes_nothing(tmp_path):
    path = write(tmp_path, "bad.py", BAD)
    result = run_torchlint("check", "--diff", ".", cwd=tmp_path)
    assert result.returncode == 1
    out = result.stdout.decode()
    assert "--- a/bad.py" in out and "+    import wandb" in out and "-import wandb" in out
    assert path.read_text() == BAD
    write(tmp_path, "bad.py", FIXED)
    assert run_torchlint("check", "--diff", ".", cwd=tmp_path).returncode == 0


def test_stdin_check_and_fix(tmp_path):
    result = run_torchlint("check", "--stdin-filename", "pkg/train.py", "--output-format", "concise", "-", input=BAD.encode(), cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.decode().startswith("pkg/train.py:1:1: TL001")
    fixed = run_torchlint("check", "--fix", "--stdin-filename", "pkg/train.py", "-", input=BAD.encode(), cwd=tmp_path)
    assert fixed.stdout.decode() == FIXED
    assert fixed.returncode == 0
    unchanged = run_torchlint("check", "--fix", "-", input=CLEAN.encode(), cwd=tmp_path)
    assert unchanged.stdout.decode() == CLEAN


def test_select_and_ignore_by_prefix(tmp_path):
    write(tmp_path, "bad.py", BAD)
    assert run_torchlint("check", "--ignore", "TL0", ".", cwd=tmp_path).returncode == 0
    assert run_torchlint("check", "--select", "TL001", ".", cwd=tmp_path).returncode == 1
    assert run_torchlint("check", "--select", "TL0", "--ignore", "TL001", ".", cwd=tmp_path).returncode == 0
    assert run_torchlint("check", "--select", "TL3", ".", cwd=tmp_path).returncode == 0
    assert run_torchlint("check", "--select", "TL3", "--extend-select", "TL001", ".", cwd=tmp_path).returncode == 1


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--select", "XYZ1"], "not a rule code"),
        (["--output-format", "yaml"], "invalid choice"),
        (["--bogus-flag"], "unrecognized arguments"),
        (["does-not-exist/"], "no such file or directory"),
    ],
)
def test_usage_errors_exit_2_with_one_line(tmp_path, args, needle):
    result = run_torchlint("check", *args, cwd=tmp_path)
    assert result.returncode == 2
    err = result.stderr.decode().strip()
    assert needle in err and len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "table, needle",
    [
        ("bogus = 1", "unknown key `bogus`"),
        ("select = 'TL001'\nfix = 'yes'", "`fix` must be true or false"),
        ("select = ['NOPE']", "`select` has 'NOPE'"),
        ("lazy-imports = 3", "`lazy-imports` must be a list of strings"),
        ("target-torch = 2.4", "`target-torch` must be a torch release"),
        ("target-torch = 'latest'", "`target-torch` must be a torch release"),
        ("target-torch = '2'", "`target-torch` must be a torch release"),
        ("[tool.torchlint.runtime]\ncuda = '12'", "`runtime.cuda`"),
        ("[tool.torchlint.runtime]\ncdua = '>=12'", "unknown key `cdua`"),
    ],
)
def test_bad_config_exits_2_naming_file_and_key(tmp_path, table, needle):
    write(tmp_path, "pyproject.toml", f"[tool.torchlint]\n{table}\n")
    write(tmp_path, "bad.py", BAD)
    result = run_torchlint("check", ".", cwd=tmp_path)
    assert result.returncode == 2
    err = result.stderr.decode().strip()
    assert needle in err and "pyproject.toml" in err and len(err.splitlines()) == 1


def test_invalid_toml_is_one_line(tmp_path):
    write(tmp_path, "pyproject.toml", "[tool.torchlint\n")
    result = run_torchlint("check", ".", cwd=tmp_path)
    assert result.returncode == 2 and "invalid TOML" in result.stderr.decode()


def test_config_lazy_imports_per_file_ignores_and_flags_override(tmp_path):
    write(
        tmp_path,
        "pyproject.toml",
        "[tool.torchlint]\nextend-lazy-imports = ['matplotlib']\n"
        "[tool.torchlint.per-file-ignores]\n'scripts/*.py' = ['TL001']\n",
    )
    write(tmp_path, "plots.py", "import matplotlib\n\n\ndef show():\n    matplotlib.use('Agg')\n")
    write(tmp_path, "scripts/run.py", BAD)
    result = run_torchlint("check", "--output-format", "concise", ".", cwd=tmp_path)
    out = result.stdout.decode()
    assert "plots.py:1:1: TL001" in out and "scripts/run.py" not in out
    write(tmp_path, "torchlint.toml", "lazy-imports = ['wandb']\n")
    result = run_torchlint("check", "--output-format", "concise", ".", cwd=tmp_path)
    assert "plots.py" not in result.stdout.decode()


def test_config_fix_true_and_no_fix_flag(tmp_path):
    write(tmp_path, "pyproject.toml", "[tool.torchlint]\nfix = true\n")
    path = write(tmp_path, "bad.py", BAD)
    run_torchlint("check", "--no-fix", ".", cwd=tmp_path)
    assert path.read_text() == BAD
    run_torchlint("check", ".", cwd=tmp_path)
    assert path.read_text() == FIXED


def test_explicit_config_path(tmp_path):
    config = write(tmp_path, "conf/lint.toml", "[tool.torchlint]\nignore = ['TL001']\n")
    write(tmp_path, "bad.py", BAD)
    assert run_torchlint("check", "--config", str(config), ".", cwd=tmp_path).returncode == 0


def test_gitignore_excludes_and_named_files(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path, ".gitignore", "generated/\n")
    write(tmp_path, "generated/bad.py", BAD)
    write(tmp_path, "build/bad.py", BAD)
    write(tmp_path, "pyproject.toml", "[tool.torchlint]\nextend-exclude = ['legacy']\n")
    write(tmp_path, "legacy/bad.py", BAD)
    write(tmp_path, "src/bad.py", BAD)
    result = run_torchlint("check", "--output-format", "concise", ".", cwd=tmp_path)
    assert [line.split(":")[0] for line in lines(result) if "TL001" in line] == ["src/bad.py"]
    named = run_torchlint("check", "--output-format", "concise", "legacy/bad.py", "generated/bad.py", cwd=tmp_path)
    assert named.returncode == 1 and len([l for l in lines(named) if "TL001" in l]) == 2
    forced = run_torchlint("check", "--force-exclude", "legacy/bad.py", cwd=tmp_path)
    assert forced.returncode == 0
    named_directory = run_torchlint("check", "--output-format", "concise", "generated", cwd=tmp_path)
    assert [l.split(":")[0] for l in lines(named_directory) if "TL001" in l] == ["generated/bad.py"]


@pytest.mark.parametrize(
    "source, reported",
    [
        ("import wandb  # noqa\n" + WANDB_READ_LATER, False),
        ("import wandb  # noqa: TL001\n" + WANDB_READ_LATER, False),
        ("import wandb  # NOQA:tl0\n" + WANDB_READ_LATER, False),
        ("import wandb  # noqa: E501 TL001\n" + WANDB_READ_LATER, False),
        ("import wandb  # noqa: TL002\n" + WANDB_READ_LATER, True),
        ("from wandb import (\n    Artifact,\n    Table,\n)  # noqa: TL001\n\n\ndef f():\n    return Artifact, Table\n", False),
        ("# torchlint: noqa\n" + WANDB_USED, False),
        ("# torchlint: noqa: TL001\n" + WANDB_USED, False),
        ("# torchlint: noqa: TL002\n" + WANDB_USED, True),
        ("x = '# noqa'; import wandb\n" + WANDB_READ_LATER, True),
    ],
)
def test_suppressions(tmp_path, source, reported):
    write(tmp_path, "mod.py", source)
    result = run_torchlint("check", "--no-cache", ".", cwd=tmp_path)
    assert (result.returncode == 1) is reported, result.stdout.decode()


def test_statistics(tmp_path):
    write(tmp_path, "a.py", BAD)
    write(tmp_path, "b.py", BAD)
    result = run_torchlint("check", "--statistics", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert lines(result)[0].split() == ["2", "TL001", "[*]", "heavy-import-at-module-level"]


def test_bad_files_are_findings_and_the_run_goes_on(tmp_path):
    write(tmp_path, "a_syntax.py", "import wandb\ndef f(:\n")
    (tmp_path / "b_latin.py").write_bytes(b"# -*- coding: utf-8 -*-\nimport wandb\nx = '\xff'\n")
    (tmp_path / "c_missing.py").symlink_to(tmp_path / "nowhere.py")
    write(tmp_path, "d_bad.py", BAD)
    result = run_torchlint("check", "--output-format", "concise", ".", cwd=tmp_path)
    out = result.stdout.decode()
    assert result.returncode == 1
    assert "a_syntax.py:2:7: TL000 SyntaxError" in out
    assert "b_latin.py:1:1: TL000 Cannot decode file" in out
    assert "c_missing.py:1:1: TL000 Cannot read file" in out
    assert "d_bad.py:1:1: TL001" in out


def test_rule_command():
    doc = run_torchlint("rule", "TL001")
    assert doc.returncode == 0
    text = doc.stdout.decode()
    for heading in ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety"):
        assert f"## {heading}" in text
    by_name = run_torchlint("rule", "heavy-import-at-module-level")
    assert by_name.stdout == doc.stdout
    listing = run_torchlint("rule", "--all").stdout.decode()
    assert "| TL001 | heavy-import-at-module-level |" in listing
    unknown = run_torchlint("rule", "TL999")
    assert unknown.returncode == 2 and "unknown rule" in unknown.stderr.decode()


def test_cache_is_created_with_tag(tmp_path):
    write(tmp_path, "bad.py", BAD)
    run_torchlint("check", ".", cwd=tmp_path)
    cache = tmp_path / ".torchlint_cache"
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (cache / ".gitignore").read_text() == "*\n"


def test_a_clean_file_needs_no_libcst_rich_or_torch(tmp_path):
    import subprocess
    import sys

    path = write(tmp_path, "clean.py", "import os\n\nprint(os.sep)\n")
    code = (
        "import sys\nfrom torchlint.cli import main\n"
        f"code = main(['check', '--no-cache', '--output-format', 'concise', {str(path)!r}])\n"
        "loaded = [m for m in ('libcst', 'rich', 'torch') if m in sys.modules "
        "and not type(sys.modules[m]).__name__.startswith('_Lazy')]\n"
        "print(code, loaded)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=tmp_path)
    assert result.stdout.decode().splitlines()[-1] == "0 []", result.stderr.decode()


def test_an_internal_error_is_not_all_checks_passed(tmp_path, monkeypatch, capsys):
    from torchlint.commands import check
    from torchlint.run import per_file

    write(tmp_path, "ok.py", CLEAN)
    monkeypatch.chdir(tmp_path)

    def broken(*args):
        raise RuntimeError("boom")

    monkeypatch.setattr(per_file, "lint_bytes", broken)
    code = check.run_check_command(["--no-cache", "--output-format", "concise", "ok.py"])
    captured = capsys.readouterr()
    assert code == 2
    assert "All checks passed!" not in captured.out
    assert "1 internal error (above on stderr)." in captured.out
    assert captured.err.strip() == "error: ok.py: internal error: RuntimeError: boom"
