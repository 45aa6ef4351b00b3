"""One `# noqa` placement, honoured alike by `torchlint check`, the flake8 plugin and the
language server: anywhere on a multi-line statement's logical line, where `--add-noqa`
writes it (its last row). Free text after a code list is not codes; CR-only line endings
count as line endings (issue 23, item 12)."""

from __future__ import annotations

import pytest

from cli_support import run_torchlint
from flake8_support import run_flake8
from torchlint.cli import main

CALL = "import torch\n\n\ndef f(path):\n    return torch.load(\n        path,\n        map_location='cpu',\n    ){closing}\n"
ROW = 5  # where TL201 is reported: the call's first row
PLACEMENTS = {
    "none": CALL.format(closing=""),
    "closing": CALL.format(closing="  # noqa: TL201"),
    "first": CALL.replace("torch.load(\n", "torch.load(  # noqa: TL201\n").format(closing=""),
    "middle": CALL.replace("        path,\n", "        path,  # noqa: TL201\n").format(closing=""),
}


def cli_rows(tmp_path, monkeypatch, capsys, name="a.py"):
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    code = main(["check", "--no-cache", "--select", "TL201", "--output-format", "concise", name])
    out = capsys.readouterr().out
    return code, [int(line.split(":")[1]) for line in out.splitlines() if ": TL201 " in line]


def flake8_rows(tmp_path, *args, name="a.py"):
    result = run_flake8("--select", "TL", *args, name, cwd=tmp_path)
    return [int(line.split(":")[1]) for line in result.stdout.splitlines() if ": TL201 " in line]


@pytest.mark.parametrize("placement", sorted(PLACEMENTS))
def test_cli_and_flake8_honour_the_same_placements(tmp_path, monkeypatch, capsys, placement):
    (tmp_path / "a.py").write_text(PLACEMENTS[placement])
    expected = [ROW] if placement == "none" else []
    assert cli_rows(tmp_path, monkeypatch, capsys) == (1 if expected else 0, expected)
    assert flake8_rows(tmp_path) == expected
    assert flake8_rows(tmp_path, "--disable-noqa") == [ROW]  # flake8's switch still turns them all off


@pytest.mark.slow
def test_the_server_honours_the_same_placements(tmp_path):
    pytest.importorskip("pygls")
    from lsp_support import Session, run

    for placement, text in PLACEMENTS.items():
        (tmp_path / f"{placement}.py").write_text(text)

    async def scenario():
        async with Session(tmp_path) as session:
            uris = {placement: session.open(f"{placement}.py") for placement in PLACEMENTS}
            return {placement: await session.diagnostics(uri, version=1) for placement, uri in uris.items()}

    found = run(scenario())
    rows = {placement: [d.range.start.line + 1 for d in found[placement] if d.code == "TL201"] for placement in found}
    assert rows == {"none": [ROW], "closing": [], "first": [], "middle": []}


def add_noqa(tmp_path, monkeypatch, capsys, name="a.py"):
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    code = main(["check", "--no-cache", "--select", "TL201", "--add-noqa", name])
    return code, capsys.readouterr().err


def test_add_noqa_writes_where_all_three_read_it(tmp_path, monkeypatch, capsys):
    (tmp_path / "a.py").write_text(PLACEMENTS["none"])
    assert add_noqa(tmp_path, monkeypatch, capsys) == (0, "Added 1 noqa directive.\n")
    assert (tmp_path / "a.py").read_text() == PLACEMENTS["closing"]
    assert cli_rows(tmp_path, monkeypatch, capsys) == (0, [])
    assert flake8_rows(tmp_path) == []


@pytest.mark.parametrize(
    "comment, after",
    [
        ("# noqa: E501 see issue 12", "# noqa: E501, TL201 see issue 12"),
        ("# noqa:E501,W291 -- long URL", "# noqa:E501,W291, TL201 -- long URL"),
        ("# NOQA: E501 T is fine here", "# NOQA: E501, TL201 T is fine here"),
    ],
)
def test_free_text_after_the_codes_is_kept_and_is_not_a_code(tmp_path, monkeypatch, capsys, comment, after):
    before = f"import torch\n\n\ndef f(p):\n    return torch.load(p)  {comment}\n"
    (tmp_path / "a.py").write_text(before)
    # `T` in the free text is not a prefix that silences every TL code
    assert cli_rows(tmp_path, monkeypatch, capsys) == (1, [5])
    assert flake8_rows(tmp_path) == [5]
    assert add_noqa(tmp_path, monkeypatch, capsys) == (0, "Added 1 noqa directive.\n")
    assert (tmp_path / "a.py").read_text() == before.replace(comment, after)
    assert cli_rows(tmp_path, monkeypatch, capsys) == (0, [])
    assert flake8_rows(tmp_path) == []


def test_cr_only_line_endings_add_noqa_once_and_honour_it(tmp_path, monkeypatch, capsys):
    (tmp_path / "a.py").write_bytes(PLACEMENTS["none"].replace("\n", "\r").encode())
    assert add_noqa(tmp_path, monkeypatch, capsys) == (0, "Added 1 noqa directive.\n")
    written = (tmp_path / "a.py").read_bytes()
    assert written == PLACEMENTS["closing"].replace("\n", "\r").encode()
    assert add_noqa(tmp_path, monkeypatch, capsys) == (0, "Added 0 noqa directives.\n")
    assert (tmp_path / "a.py").read_bytes() == written
    assert cli_rows(tmp_path, monkeypatch, capsys) == (0, [])
    assert flake8_rows(tmp_path) == []
    assert run_torchlint("check", "--no-cache", "--select", "TL201", "a.py", cwd=tmp_path).returncode == 0
