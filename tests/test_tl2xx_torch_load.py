"""TL201 and TL209 through the real CLI and flake8: target-torch gating, which rule reports
an outside path, and fixes that real torch then loads with."""

from __future__ import annotations

import pytest

from cli_support import run_torchlint, write_tree
from flake8_support import run_flake8
from tl2xx_support import findings, run_script

LOADS = (
    "import torch\n\n\n"
    "def restore(path):\n    return torch.load(path, weights_only=False)\n\n\n"
    "def vocab():\n    return torch.load('vocab.pt')\n"
)


EXPLICIT_FALSE = '[tool.torchlint.torch-load-without-weights-only]\nreport-explicit-false = true\n'


def test_missing_weights_only_is_reported_only_below_2_6(tmp_path):
    write_tree(tmp_path, {"pyproject.toml": '[tool.torchlint]\ntarget-torch = "2.5"\n', "m.py": LOADS})
    assert findings(tmp_path) == [("m.py", 9, 12, "TL201")]
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\ntarget-torch = "2.6"\n')
    assert findings(tmp_path) == []


def test_explicit_false_is_reported_with_its_option_at_any_target(tmp_path):
    write_tree(tmp_path, {"pyproject.toml": '[tool.torchlint]\ntarget-torch = "2.6"\n' + EXPLICIT_FALSE, "m.py": LOADS})
    assert findings(tmp_path) == [("m.py", 5, 12, "TL201")]


def test_outside_path_moves_to_tl209_when_selected(tmp_path):
    write_tree(tmp_path, {"pyproject.toml": EXPLICIT_FALSE, "m.py": LOADS})
    result = run_torchlint("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert "m.py:5:12: TL201" in result.stdout.decode() and "`path`, a parameter" in result.stdout.decode()
    assert findings(tmp_path, "--extend-select", "TL209") == [("m.py", 5, 12, "TL209"), ("m.py", 9, 12, "TL201")]
    (tmp_path / "pyproject.toml").unlink()  # TL209 does not need TL201's option
    assert findings(tmp_path, "--extend-select", "TL209") == [("m.py", 5, 12, "TL209"), ("m.py", 9, 12, "TL201")]


def test_unsafe_fix_loads_a_state_dict_with_real_torch(tmp_path):
    write_tree(
        tmp_path,
        {
            "load.py": "import torch\n\nstate = torch.load('sd.pt', map_location='cpu')\nprint(sorted(state))\n",
            "pickled.py": "import pickle\nimport torch\n\nobj = torch.load('sd.pt', pickle_module=pickle)\n",
        },
    )
    import torch

    torch.save(torch.nn.Linear(2, 2).state_dict(), tmp_path / "sd.pt")
    safe_only = run_torchlint("check", "--no-cache", "--fix", ".", cwd=tmp_path)
    assert safe_only.returncode == 1
    assert "weights_only" not in (tmp_path / "load.py").read_text()
    run_torchlint("check", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert "map_location='cpu', weights_only=True)" in (tmp_path / "load.py").read_text()
    assert "weights_only" not in (tmp_path / "pickled.py").read_text()  # would raise with a pickle_module
    printed, error = run_script(tmp_path / "load.py")
    assert error is None, error
    assert printed.strip() == "['bias', 'weight']"


@pytest.mark.slow
def test_flake8_reports_the_same(tmp_path):
    write_tree(tmp_path, {"pyproject.toml": EXPLICIT_FALSE, "m.py": LOADS})
    result = run_flake8("--isolated", "--select", "TL2", "m.py", cwd=tmp_path)
    rows = sorted(line.split(":")[1] + line.split()[1] for line in result.stdout.splitlines())
    assert rows == ["5TL201", "9TL201"], result.stdout + result.stderr
    (tmp_path / "pyproject.toml").unlink()
    result = run_flake8("--isolated", "--select", "TL2", "m.py", cwd=tmp_path)
    assert [line.split(":")[1] for line in result.stdout.splitlines()] == ["9"], result.stdout + result.stderr


def test_no_fix_below_the_version_that_has_the_argument(tmp_path):
    hub = "import torch\n\nsd = torch.hub.load_state_dict_from_url('https://x/m.pt')\nst = torch.load('m.pt')\n"
    write_tree(tmp_path, {"pyproject.toml": '[tool.torchlint]\ntarget-torch = "2.0"\n', "m.py": hub})
    run_torchlint("check", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    # load_state_dict_from_url took weights_only in 2.1: reported, left alone; torch.load has it since 1.13
    assert (tmp_path / "m.py").read_text() == hub.replace("torch.load('m.pt')", "torch.load('m.pt', weights_only=True)")
    assert findings(tmp_path) == [("m.py", 3, 6, "TL201")]
