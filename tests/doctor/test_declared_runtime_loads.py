"""A GPU runtime the project declares under [tool.torchlint.runtime] must load next to
torch: when it cannot (onnxruntime-gpu 1.16.3, built for cuDNN 8, beside torch
2.5.1+cu124 with only cuDNN 9), `torchlint doctor` fails (exit 1), even from facts that
did not search the library path; the same runtime undeclared is a warning (exit 0)."""

from __future__ import annotations

import json

import pytest

from cli_support import REPO
from torchlint.cli import main

RECORDED = REPO / "tests" / "doctor" / "facts" / "runtimes-torch-cu12-ort-cudnn8.json"


@pytest.fixture
def facts(tmp_path):
    data = json.loads(RECORDED.read_text())
    data["packages"]["onnxruntime-gpu"] = "1.16.3"
    data["libraries"] = None  # as from a probe or pasted report that did not search the library path
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(data))
    return path


def _doctor(capsys, tmp_path, facts, table: str):
    requirements = tmp_path / "requirements.toml"
    requirements.write_text(f"[tool.torchlint.runtime]\n{table}")
    code = main(["doctor", "--facts", str(facts), "--requirements", str(requirements), "--format", "json"])
    checks = json.loads(capsys.readouterr().out)["results"]
    return code, {check["name"]: check for check in checks}


def test_a_declared_runtime_that_cannot_load_its_cudnn_fails(capsys, tmp_path, facts):
    code, checks = _doctor(capsys, tmp_path, facts, 'onnxruntime-gpu = ">=1.16"\n')
    assert code == 1
    assert checks["declared-packages"]["status"] == "pass"
    runtime = checks["gpu-runtimes"]
    assert runtime["status"] == "fail", runtime
    assert "cannot load its cuDNN next to torch" in runtime["advice"]


def test_the_same_runtime_undeclared_is_a_warning(capsys, tmp_path, facts):
    code, checks = _doctor(capsys, tmp_path, facts, 'torch = ">=2.1"\n')
    assert code == 0
    assert checks["gpu-runtimes"]["status"] == "warn"


def test_a_declared_runtime_that_loads_passes(capsys, tmp_path, facts):
    data = json.loads(facts.read_text())
    data["packages"].update({"nvidia-cudnn-cu11": "8.9.2.26", "nvidia-cublas-cu11": "11.11.3.6"})
    facts.write_text(json.dumps(data))
    code, checks = _doctor(capsys, tmp_path, facts, 'onnxruntime-gpu = ">=1.16"\n')
    assert checks["gpu-runtimes"]["status"] != "fail" and code == 0
