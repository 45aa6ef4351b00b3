"""TL202, TL203, TL207 and TL208 through the real CLI and flake8; the TL202 and TL203 fixes
run under real torch and do what their messages promise."""

from __future__ import annotations

import pytest

from cli_support import run_torchlint, write_tree
from flake8_support import run_flake8
from tl2xx_support import findings, run_script

TRAIN = (
    "import os\nimport warnings\n\nimport torch\nfrom torch.utils.checkpoint import checkpoint\n\n"
    "warnings.simplefilter('error')\n"
    "layer = torch.nn.Linear(2, 2)\n"
    "for p in layer.parameters():\n    p.require_grad = False\n"
    "x = torch.ones(1, 2, requires_grad=True)\n"
    "y = checkpoint(layer, x)\n"
    "y.sum().backward()\n"
    "print(layer.weight.grad is None)\n"
)
ENV = (
    "import os\n\nimport torch\nfrom torch.backends import cudnn\n\ncudnn.enabled = False\n\n\n"
    "def run(model):\n    model.cuda()\n    os.environ['CUDA_LAUNCH_BLOCKING'] = '1'\n"
    "    os.environ['TORCH_USE_CUDA_DSA'] = '1'\n    return torch.cuda.synchronize()\n"
)


def test_fixed_script_freezes_the_layer_and_checkpoints_without_warning(tmp_path):
    write_tree(tmp_path, {"train.py": TRAIN})
    _, before = run_script(tmp_path / "train.py")
    assert "use_reentrant" in str(before)  # the warning, raised as an error, is what TL202 reports
    assert findings(tmp_path) == [("train.py", 10, 5, "TL203"), ("train.py", 12, 5, "TL202")]
    run_torchlint("check", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    text = (tmp_path / "train.py").read_text()
    assert "p.requires_grad = False" in text and "checkpoint(layer, x, use_reentrant=False)" in text
    printed, after = run_script(tmp_path / "train.py")
    assert after is None, after
    assert printed.strip() == "True"  # really frozen now: no gradient reached the weight


def test_safe_fix_leaves_behaviour_changes_alone(tmp_path):
    write_tree(tmp_path, {"train.py": TRAIN})
    result = run_torchlint("check", "--no-cache", "--fix", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert (tmp_path / "train.py").read_text() == TRAIN


def test_environment_and_cudnn_findings_say_when_variables_are_read(tmp_path):
    write_tree(tmp_path, {"env.py": ENV})
    result = run_torchlint("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    out = result.stdout.decode()
    assert findings(tmp_path) == [("env.py", 6, 1, "TL207"), ("env.py", 11, 5, "TL208"), ("env.py", 12, 5, "TL208")]
    assert "CUDA is already in use here (line 10)" in out
    assert "built from source" in out and "torchlint doctor" in out
    assert run_torchlint("check", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path).returncode == 1
    assert (tmp_path / "env.py").read_text() == ENV  # no fixes


@pytest.mark.slow
def test_flake8_reports_the_same(tmp_path):
    write_tree(tmp_path, {"train.py": TRAIN, "env.py": ENV})
    result = run_flake8("--isolated", "--select", "TL2", ".", cwd=tmp_path)
    found = sorted(":".join(line.split(":")[:3]) + " " + line.split()[1] for line in result.stdout.splitlines())
    assert found == [
        "./env.py:11:5 TL208", "./env.py:12:5 TL208", "./env.py:6:1 TL207",
        "./train.py:10:5 TL203", "./train.py:12:5 TL202",
    ], result.stdout + result.stderr
