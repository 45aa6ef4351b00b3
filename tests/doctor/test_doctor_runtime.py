"""torchlint.runtime.verify(): one exception type, the table as its message, and fast."""

import time
import warnings

import pytest

import torchlint.runtime as runtime
from torchlint.runtime import EnvironmentMismatch, InvalidRequirements, verify


def test_passes_when_nothing_is_required(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    results = verify()
    assert results and all(r.status != "fail" for r in results)


def test_raises_with_the_table_as_message_when_a_gpu_is_required(project, monkeypatch):
    monkeypatch.chdir(project("require-gpu = true\n"))
    with pytest.raises(EnvironmentMismatch) as caught:
        verify()
    message = str(caught.value)
    assert "FAIL" in message and "gpu" in message and "require-gpu = true" in message
    assert any(r.status == "fail" for r in caught.value.results)


def test_accepts_a_mapping_or_a_path(tmp_path):
    with pytest.raises(EnvironmentMismatch):
        verify({"require-gpu": True})
    path = tmp_path / "req.toml"
    path.write_text('[tool.torchlint.runtime]\ntorch = ">=1.0"\n')
    assert verify(path)
    assert verify(str(path))


def test_bad_requirements_raise_the_same_family_of_exception():
    with pytest.raises(InvalidRequirements, match="unknown key `gpu`"):
        verify({"gpu": True})
    assert issubclass(InvalidRequirements, EnvironmentMismatch)


def test_warnings_are_issued_once(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        verify()
    relevant = [w for w in caught if "torchlint" in str(w.message)]
    assert len(relevant) == 1 and "cuda-launch-blocking" in str(relevant[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        verify(warn=False)


def test_costs_well_under_a_second_once_torch_is_imported(tmp_path, monkeypatch):
    import torch  # noqa: F401  (the training script imports it anyway)

    monkeypatch.chdir(tmp_path)
    start = time.perf_counter()
    verify()
    elapsed = time.perf_counter() - start
    assert elapsed < 0.5, f"verify() took {elapsed:.3f} s"


def test_module_exports():
    assert set(runtime.__all__) == {"EnvironmentMismatch", "InvalidRequirements", "verify", "guard", "Guard",
                                    "GuardError", "GuardWarning", "GuardOptions", "GuardCallback", "guard_accelerator"}
    assert all(getattr(runtime, name) is not None for name in runtime.__all__)  # the guard's names resolve lazily


def test_a_repeated_verify_reads_no_metadata_and_starts_no_process(tmp_path, monkeypatch):
    # the first call reads every distribution's metadata and runs `ldconfig -p` (tens of
    # ms); the next ones, with nothing installed or removed meanwhile, only stat the path
    import importlib.metadata
    import subprocess

    monkeypatch.chdir(tmp_path)
    verify()
    calls = []
    for module, name in ((importlib.metadata, "distributions"), (subprocess, "run")):
        original = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _original=original, _name=name, **k: (calls.append(_name), _original(*a, **k))[1])
    verify()
    verify()
    assert calls == []


def test_installing_a_distribution_is_seen_by_the_next_verify(tmp_path):
    from torchlint.doctor.runtimes import installed_packages

    site = tmp_path / "site"
    site.mkdir()

    def install(name, version):
        info = site / f"{name}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")

    install("onnxruntime-gpu", "1.20.0")
    assert installed_packages([str(site)])[0] == {"onnxruntime-gpu": "1.20.0"}
    install("cupy-cuda12x", "13.3.0")
    assert installed_packages([str(site)])[0] == {"cupy-cuda12x": "13.3.0", "onnxruntime-gpu": "1.20.0"}
