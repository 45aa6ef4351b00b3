"""TL204, TL205 and TL206 through the real CLI and flake8, and TL204's table against
torchvision's own source."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import REPO, run_torchlint, write_tree
from flake8_support import run_flake8

VISION = (
    "import torch\nimport torchvision.models as tvm\nfrom torchvision.models import vgg16\n"
    "from torchvision.transforms import v2\n\n"
    "a = tvm.resnet50(pretrained=True)\n"
    "b = vgg16(pretrained=False)\n"
    "c = tvm.quantization.resnet50(pretrained=True, quantize=True)\n"
    "t = v2.Compose([v2.ToTensor()])\n"
)
TORCHVISION_SOURCE = Path("/tmp/tune/src/torchvision-0.29.1")


def test_fixes_spell_the_exact_legacy_weights(tmp_path):
    write_tree(tmp_path, {"m.py": VISION})
    result = run_torchlint("check", "--no-cache", "--extend-select", "TL205", "--fix", ".", cwd=tmp_path)
    assert result.returncode == 1  # the quantized builder (weights depend on `quantize`) and ToTensor remain
    assert (tmp_path / "m.py").read_text() == (
        "import torch\nfrom torchvision import models as tvm\nfrom torchvision.models import vgg16\n"
        "from torchvision.transforms import v2\n\n"
        "a = tvm.resnet50(weights=tvm.ResNet50_Weights.IMAGENET1K_V1)\n"
        "b = vgg16(weights=None)\n"
        "c = tvm.quantization.resnet50(pretrained=True, quantize=True)\n"
        "t = v2.Compose([v2.ToTensor()])\n"
    )
    run_torchlint("check", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert "t = v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])\n" in (tmp_path / "m.py").read_text()


def test_import_style_is_off_by_default(tmp_path):
    write_tree(tmp_path, {"m.py": "import torchvision.models as models\n\nm = models.resnet18\n"})
    assert run_torchlint("check", "--no-cache", ".", cwd=tmp_path).returncode == 0
    selected = run_torchlint("check", "--no-cache", "--select", "TL205", "--output-format", "concise", ".", cwd=tmp_path)
    assert "m.py:1:1: TL205" in selected.stdout.decode()


@pytest.mark.slow
def test_flake8_reports_the_same(tmp_path):
    write_tree(tmp_path, {"m.py": VISION})
    result = run_flake8("--isolated", "--select", "TL2", "m.py", cwd=tmp_path)
    found = sorted(":".join(line.split(":")[1:3]) + " " + line.split()[1] for line in result.stdout.splitlines())
    assert found == ["6:18 TL204", "7:11 TL204", "8:31 TL204", "9:17 TL206"], result.stdout + result.stderr


@pytest.mark.skipif(not TORCHVISION_SOURCE.is_dir(), reason="needs torchvision 0.29.1's source unpacked")
def test_table_is_what_torchvision_declares():
    generated = subprocess.run(
        [sys.executable, str(REPO / "tools" / "torchvision_weights_table.py"), str(TORCHVISION_SOURCE)],
        capture_output=True, text=True, check=True,
    ).stdout
    assert generated == (REPO / "torchlint" / "analysis" / "torchvision_weights.py").read_text()
