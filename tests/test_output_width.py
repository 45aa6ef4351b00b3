"""What torchlint prints for a person fits the terminal: at COLUMNS=80, `--help`, every
command's help, every rule's doc and doctor's table and advice stay within 80 columns
(COLUMNS honoured when piped too); a line may run over only as one unbreakable word (a
URL). Every command's usage errors begin alike."""

from __future__ import annotations

import pytest

from cli_support import REPO
from torchlint.cli import main
from torchlint.commands import COMMANDS
from torchlint.rule_api.registry import SYNTAX_ERROR, all_rules

FACTS = sorted((REPO / "tests" / "doctor" / "facts").iterdir())
CODES = [SYNTAX_ERROR.code] + [rule.code for rule in all_rules()]


def _printed(capsys, argv) -> list:
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's --help
        code = exit_.code
    assert code == 0
    return capsys.readouterr().out.splitlines()


def _over(lines, width) -> list:
    """Lines wider than `width`, except one unbreakable word (a list item's, too) on a
    line of its own."""
    return [line for line in lines if len(line) > width and len(line.removeprefix("- ").split()) > 1]


@pytest.fixture(autouse=True)
def eighty_columns(monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)  # no project configuration: doctor judges with no requirements


def test_top_level_help_fits(capsys):
    lines = _printed(capsys, ["--help"])
    assert max(map(len, lines)) <= 80
    assert any(line.lstrip().startswith("project") for line in lines)  # a summary wrapped, not cut


@pytest.mark.parametrize("command", [name for name in COMMANDS if name != "help"])
def test_each_commands_help_fits(capsys, command):
    lines = _printed(capsys, ["help", command])
    assert lines and max(map(len, lines)) <= 80, command


@pytest.mark.parametrize("code", CODES)
def test_each_rules_doc_fits(capsys, code):
    lines = _printed(capsys, ["rule", code])
    assert not _over(lines, 80)


def test_tl002s_doc_fits_entirely(capsys):
    assert max(map(len, _printed(capsys, ["rule", "TL002"]))) <= 80


def test_a_rules_doc_follows_a_wider_terminal(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    lines = _printed(capsys, ["rule", "TL002"])
    assert max(map(len, lines)) <= 120 and any(len(line) > 90 for line in lines)


@pytest.mark.parametrize("facts", FACTS, ids=[path.name for path in FACTS])
def test_doctor_table_and_advice_fit_when_piped(capsys, facts):
    assert main(["doctor", "--facts", str(facts)]) in (0, 1)
    lines = capsys.readouterr().out.splitlines()
    assert not _over(lines, 80)


def test_doctor_advice_is_wrapped_and_keeps_commands_whole(capsys):
    facts = REPO / "tests" / "doctor" / "facts" / "old-gpu-sm61.json"
    main(["doctor", "--facts", str(facts)])
    out = capsys.readouterr().out
    advice = out[out.index("(fail): "):]
    assert advice.count("\n") > 2  # several lines, not one of hundreds of characters
    spans = [span for line in advice.splitlines() for span in line.split("`")[1::2]]
    assert "`" not in "".join(spans) and all(line.count("`") % 2 == 0 for line in advice.splitlines())


def test_doctor_honours_columns_when_piped(capsys, monkeypatch):
    facts = str(REPO / "tests" / "doctor" / "facts" / "healthy-h100.json")
    monkeypatch.setenv("COLUMNS", "100")
    main(["doctor", "--facts", facts])
    assert max(len(line) for line in capsys.readouterr().out.splitlines()) == 100
    monkeypatch.delenv("COLUMNS")
    main(["doctor", "--facts", facts])
    assert max(len(line) for line in capsys.readouterr().out.splitlines()) == 120


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--bogus"],
        ["rule", "TL999"],
        ["help", "nope"],
        ["doctor", "--bogus"],
        ["explain", "/nonexistent/crash.log"],
        ["explain", "--bogus"],
        ["server", "--bogus"],
    ],
)
def test_every_commands_usage_error_begins_error(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
