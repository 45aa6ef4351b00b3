"""The real probe, on this machine's torch (a CPU build here; any build elsewhere)."""

import json
import sys

import pytest

from torchlint.doctor.facts import Facts, FactsError, facts_from_dict
from torchlint.doctor.probe import collect, cudnn_on_library_path, cudnn_version_string


@pytest.mark.filterwarnings("ignore:Failed to initialize NumPy")
def test_probe_records_the_facts_that_must_be_there():
    import torch

    facts = collect()
    assert facts.python and facts.platform == sys.platform
    assert facts.torch_version == str(torch.__version__)
    assert facts.torch_build in ("cpu", "cuda", "rocm")
    assert facts.torch_cuda == torch.version.cuda
    assert isinstance(facts.cuda_available, bool)
    assert isinstance(facts.arch_list, list)
    assert isinstance(facts.cudnn_enabled, bool)
    if not facts.cuda_available:
        assert facts.device_count == 0 and facts.gpus == []
    if facts.driver_version is None:
        assert "driver_version" in facts.unknown  # absence is recorded with its reason
    if facts.torch_build == "cpu":
        assert facts.cudnn_version is None and facts.has_gpu is False


def test_probe_record_round_trips_through_json():
    facts = collect()
    again = facts_from_dict(json.loads(json.dumps(facts.to_dict())))
    assert again == facts


def test_probe_records_env_vars_and_stray_cudnn(monkeypatch, tmp_path):
    (tmp_path / "libcudnn.so.8").write_text("")
    monkeypatch.setenv("LD_LIBRARY_PATH", f"/nonexistent:{tmp_path}")
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "1")
    monkeypatch.delenv("TORCH_USE_CUDA_DSA", raising=False)
    facts = collect()
    assert facts.env["CUDA_LAUNCH_BLOCKING"] == "1" and "TORCH_USE_CUDA_DSA" not in facts.env
    assert facts.cudnn_on_library_path == [str(tmp_path / "libcudnn.so.8")]
    assert cudnn_on_library_path("") == []


def test_cudnn_versions_are_normalised():
    assert cudnn_version_string(8902) == "8.9.2"
    assert cudnn_version_string(8100) == "8.1.0"
    assert cudnn_version_string(90100) == "9.1.0"
    assert cudnn_version_string(91002) == "9.10.2"


def test_probe_without_torch_records_why_and_does_not_raise(tmp_path, run_python):
    # A `torch` package that fails to import stands in for a machine without torch.
    (tmp_path / "torch").mkdir()
    broken = "raise ImportError('libcudart.so.13: cannot open shared object file')\n"
    (tmp_path / "torch" / "__init__.py").write_text(broken)
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]);"
        "from torchlint.doctor.probe import collect; print(json.dumps(collect().to_dict()))"
    )
    out = run_python(["-c", code, str(tmp_path)], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    facts = facts_from_dict(json.loads(out.stdout))
    assert facts.torch_version is None and facts.torch_build == "unknown"
    assert "libcudart.so.13" in facts.unknown["torch"]


def test_facts_from_dict_rejects_wrong_shapes():
    for bad in ([], {"gpus": "H100"}, {"gpus": [{"index": 0, "colour": "green"}]}, {"env": {"A": 1}},
                {"arch_list": "sm_90"}):
        with pytest.raises(FactsError):
            facts_from_dict(bad)
    assert isinstance(facts_from_dict({"future_key": 1}), Facts)


def test_importing_torchlint_doctor_does_not_import_torch(tmp_path, run_python):
    code = (
        "import sys; import torchlint, torchlint.doctor.cli, torchlint.doctor.check, torchlint.runtime, "
        "torchlint.explain.cli; print('torch' in sys.modules, 'rich' in sys.modules)"
    )
    out = run_python(["-c", code], cwd=tmp_path)
    assert out.stdout.split() == ["False", "False"], out.stderr
