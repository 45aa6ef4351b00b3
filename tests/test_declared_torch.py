"""Without `target-torch`, the oldest torch the project declares is its target, as ruff reads
`requires-python`: the lower bound of `torch` in the nearest pyproject.toml's `[project]
dependencies` (sockeye pins `torch>=1.10,<1.14`: a `weights_only=True` fix would raise TypeError
there). An explicit `target-torch` wins; no bound, or no such file, leaves the default. Through the
real CLI, in process."""

from __future__ import annotations

import pytest

from cli_support import run_torchlint

LOAD = 'import torch\n\n\ndef load(path):\n    return torch.load(path, map_location="cpu")\n'


def _check(tmp_path, pyproject: str):
    (tmp_path / "pyproject.toml").write_text(pyproject)
    (tmp_path / "m.py").write_text(LOAD)
    result = run_torchlint(
        "check", "--no-cache", "--select", "TL201", "--unsafe-fixes", "--diff", "--output-format", "concise",
        "m.py", cwd=tmp_path,
    )
    assert result.returncode in (0, 1), result.stderr.decode()
    return result.stdout.decode() + result.stderr.decode()


def _fixes(output: str) -> bool:
    return "+    return torch.load(path, map_location=\"cpu\", weights_only=True)" in output


@pytest.mark.parametrize("dependency", ["torch>=1.10,<1.14", "torch==1.12.*", "torch~=1.11.0"])
def test_a_declared_torch_without_weights_only_gets_no_weights_only_fix(tmp_path, dependency):
    output = _check(tmp_path, f'[project]\nname = "demo"\ndependencies = ["numpy", "{dependency}"]\n')
    assert not _fixes(output), output


def test_a_declared_torch_from_2_6_loads_weights_only_already(tmp_path):
    output = _check(tmp_path, '[project]\nname = "demo"\ndependencies = ["torch>=2.6"]\n')
    assert "Would apply 0 fixes" in output and "TL201" not in output.replace("Would apply", ""), output


@pytest.mark.parametrize("pyproject", [
    '[project]\nname = "demo"\ndependencies = ["torch>=1.10"]\n\n[tool.torchlint]\ntarget-torch = "2.2"\n',
    '[project]\nname = "demo"\ndependencies = ["torch<3", "numpy>=1.10"]\n',  # no lower bound
    '[project]\nname = "demo"\ndependencies = ["torch @ https://example.com/torch.whl", "not a requirement !"]\n',
    '[build-system]\nrequires = ["torch>=1.10"]\n',  # no [project]: a build's needs, not the project's
])
def test_an_explicit_target_or_no_declared_bound_keeps_the_target(tmp_path, pyproject):
    assert _fixes(_check(tmp_path, pyproject))
