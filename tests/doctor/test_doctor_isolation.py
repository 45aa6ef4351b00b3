"""Smoke children run isolated (`python -I`, an empty working directory): a repository's
./torch.py is never what `import torch` loads; `--model` adds the user's module deliberately."""

from __future__ import annotations

import json

import pytest

from torchlint.cli import main
from torchlint.doctor.smoke import MARKER, SmokeProgram, run_program

pytest.importorskip("torch")

HIJACK = "import pathlib\npathlib.Path({marker!r}).write_text('imported')\nraise SystemExit('hijacked')\n"


@pytest.fixture
def hostile_repository(tmp_path, monkeypatch):
    """A working directory whose ./torch.py would record that it was imported."""
    repository = tmp_path / "repo"
    repository.mkdir()
    marker = tmp_path / "torch-py-was-imported"
    (repository / "torch.py").write_text(HIJACK.format(marker=str(marker)))
    monkeypatch.chdir(repository)
    monkeypatch.setenv("PYTHONPATH", str(repository))  # -I ignores it too
    return repository, marker


@pytest.mark.slow
def test_a_smoke_child_imports_the_real_torch_not_the_repositorys(hostile_repository):
    repository, marker = hostile_repository
    code = ("import json, torch; print(" + repr(MARKER) + " + json.dumps({'status': 'pass', "
            "'found': torch.__file__}))")
    result = run_program(SmokeProgram("which torch", code), timeout=120)
    assert result.status == "pass", result.detail
    assert "site-packages" in result.found and str(repository) not in result.found
    assert not marker.exists()


def write_model(directory, body):
    (directory / "mymodels.py").write_text("import torch\nfrom torch import nn\n\n" + body)


def run_doctor(capsys, *argv):
    code = main(["doctor", "--smoke", "--format", "json", *argv])
    report = json.loads(capsys.readouterr().out)
    rows = {row["name"]: row for row in report["results"]} if "results" in report else report
    return code, rows


@pytest.mark.slow
def test_model_smoke_finds_the_users_module_and_never_the_planted_torch(hostile_repository, capsys):
    repository, marker = hostile_repository
    write_model(repository, "def build():\n    return nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU())\n")
    code, rows = run_doctor(capsys, "--model", "mymodels:build", "--smoke-timeout", "300")
    row = rows["smoke: model mymodels:build"]
    assert row["status"] == "pass", row
    assert "batch [2, 3, 64, 64]" in row["found"]
    assert not marker.exists()
    assert code == 0


@pytest.mark.slow
def test_model_smoke_reports_the_guards_finding(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nets").mkdir()
    (tmp_path / "nets" / "tagger.py").write_text(
        "import torch\nfrom torch import nn\n\n"
        "def build():\n"
        "    model = nn.Sequential(nn.Embedding(100, 8), nn.Linear(8, 4))\n"
        "    return model, torch.tensor([[1, 2, 100]])\n"
    )
    code, rows = run_doctor(capsys, "--model", "nets/tagger.py:build", "--smoke-timeout", "300")
    row = rows["smoke: model nets/tagger.py:build"]
    assert row["status"] == "fail" and row["found"] == "guard: embedding-index at model.0", row
    assert "num_embeddings=100" in row["advice"]
    assert code == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["doctor", "--model", "m:build"], "add --smoke"),
        (["doctor", "--smoke", "--model", "no-colon"], "expected MODULE:FACTORY"),
        (["doctor", "--smoke", "--model", "missing.py:build"], "is not a file"),
    ],
)
def test_bad_model_arguments_are_usage_errors(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert message in capsys.readouterr().err
