"""Files a user names are read within bounds: a baseline or doctor facts record that is a
special file (/dev/zero, a FIFO), huge, or JSON nested beyond the decoder's depth is one
clear error naming the file, never a MemoryError, a RecursionError or a hang (issue 23, 14)."""

from __future__ import annotations

import io
import os
import sys

import pytest

from torchlint.run import baseline
from torchlint.cli import main

DEEP = "[" * 200_000 + "]" * 200_000


def check(tmp_path, monkeypatch, capsys, *args):
    (tmp_path / "train.py").write_text("import wandb\n\n\ndef train():\n    wandb.init()\n")
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    code = main(["check", "--no-cache", *args, "train.py"])
    out, err = capsys.readouterr()
    return code, out, err


def one_error(code, out, err, name):
    assert code == 2 and out == ""
    [line] = err.splitlines()
    assert line.startswith((f"error: {name}: ", f"torchlint doctor: error: {name}: "))
    assert "Error" not in line and "Traceback" not in line  # no MemoryError / RecursionError
    return line


def big_sparse_file(path, size):
    with open(path, "wb") as handle:
        handle.truncate(size)  # sparse: no disk, but read whole it would be `size` bytes


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_a_special_file_as_baseline_is_refused_unread(tmp_path, monkeypatch, capsys, special):
    if special == "fifo":
        special = str(tmp_path / "fifo")
        os.mkfifo(special)  # nobody writes to it: reading would wait forever
    line = one_error(*check(tmp_path, monkeypatch, capsys, "--baseline", special), special)
    assert line.endswith("cannot read the baseline: not a regular file")


def test_a_baseline_beyond_the_bound_is_refused_unread(tmp_path, monkeypatch, capsys):
    big_sparse_file(tmp_path / "huge.json", baseline.MAX_BYTES + 1)
    line = one_error(*check(tmp_path, monkeypatch, capsys, "--baseline", "huge.json"), "huge.json")
    assert line.endswith("cannot read the baseline: larger than 64 MiB")


def test_the_configured_baseline_is_bounded_too(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nbaseline = "/dev/zero"\n')
    line = one_error(*check(tmp_path, monkeypatch, capsys), "/dev/zero")
    assert line.endswith("outside the project")


def test_a_deeply_nested_baseline_is_invalid_json(tmp_path, monkeypatch, capsys):
    (tmp_path / "deep.json").write_text('{"version": 1, "findings": ' + DEEP + "}")
    line = one_error(*check(tmp_path, monkeypatch, capsys, "--baseline", "deep.json"), "deep.json")
    assert line.endswith("not a torchlint baseline (invalid JSON: nested too deeply)")


def doctor(monkeypatch, capsys, *args, stdin=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    capsys.readouterr()
    code = main(["doctor", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("what", ["/dev/zero", "huge", "deep"])
def test_doctor_facts_are_read_within_bounds(tmp_path, monkeypatch, capsys, what):
    from torchlint.doctor.cli import MAX_PASTE_BYTES

    monkeypatch.chdir(tmp_path)
    name, ending = what, "not a regular file"
    if what == "huge":
        big_sparse_file(tmp_path / "huge", MAX_PASTE_BYTES + 1)
        ending = "larger than 256 MiB"
    elif what == "deep":
        (tmp_path / "deep").write_text(DEEP)
        ending = "nested too deeply"
    line = one_error(*doctor(monkeypatch, capsys, "--facts", name), name)
    assert line.endswith(ending), line


def test_doctor_facts_from_stdin_are_bounded(tmp_path, monkeypatch, capsys):
    from torchlint.doctor.cli import MAX_RECORD_BYTES

    monkeypatch.chdir(tmp_path)
    line = one_error(*doctor(monkeypatch, capsys, "--facts", "-", stdin=b"{" + b" " * MAX_RECORD_BYTES), "-")
    assert line.endswith("larger than a facts record can be (16 MiB)")
    line = one_error(*doctor(monkeypatch, capsys, "--facts", "-", stdin=DEEP.encode()), "-")
    assert line.endswith("nested too deeply")
