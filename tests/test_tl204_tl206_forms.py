"""TL206 reports `v2.ToTensor` wherever it is named (imports and references, not only
calls); TL204 reads a builder's first positional argument as torchvision does: the old
`pretrained` (`resnet50(True)`), and a builder chosen by name (`getattr(models, arch)`). Through
the CLI, with the fixes applied."""

from __future__ import annotations

import json

from cli_support import write_tree
from torchlint.cli import main


def _findings(capsys, root, select, *flags):
    code = main(["check", "--no-cache", "--select", select, "--output-format", "json", *flags, str(root)])
    return code, [(f["location"]["row"], f["location"]["column"], bool(f["fix"]), f["message"])
                  for f in json.loads(capsys.readouterr().out)]


def test_tl206_reports_imports_and_references_of_v2_to_tensor(tmp_path, capsys):
    write_tree(tmp_path, {"t.py": (
        "import torch\n"
        "from torchvision.transforms import v2\n"
        "from torchvision.transforms.v2 import Compose, ToTensor\n"
        "from torchvision.transforms import ToTensor as V1ToTensor\n"
        "\n"
        "STEPS = [v2.RandomHorizontalFlip, v2.ToTensor]\n"
        "make = ToTensor\n"
        "pipeline = v2.Compose([v2.ToTensor()])\n"
        "legacy = V1ToTensor()\n"
        "v2.ToTensor.__doc__\n"
    )})
    code, found = _findings(capsys, tmp_path, "TL206", "--unsafe-fixes")
    assert code == 1
    assert [(row, column) for row, column, _, _ in found] == [(3, 48), (6, 35), (7, 8), (8, 24), (10, 1)]
    assert "`torchvision.transforms.v2.ToTensor` is deprecated" in found[0][3]
    assert [fixable for _, _, fixable, _ in found] == [False, False, False, True, False]
    assert main(["check", "--no-cache", "--select", "TL206", "--fix", "--unsafe-fixes", str(tmp_path)]) == 1
    capsys.readouterr()
    text = (tmp_path / "t.py").read_text()
    assert "pipeline = v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])" in text
    assert "legacy = V1ToTensor()" in text  # v1 is not deprecated


def test_tl204_reads_the_first_positional_argument_as_pretrained(tmp_path, capsys):
    write_tree(tmp_path, {"m.py": (
        "import torchvision\n"
        "from torchvision import models\n"
        "from torchvision.models import resnet18\n"
        "\n"
        "a = models.resnet50(True)\n"
        "b = resnet18(False)\n"
        "c = resnet18(True, False)\n"
        "d = torchvision.models.vgg16(torchvision.models.VGG16_Weights.DEFAULT)\n"
        "\n"
        "\n"
        "def build(args):\n"
        "    return models.resnet50(args.pretrained)\n"
    )})
    code, found = _findings(capsys, tmp_path, "TL204")
    assert code == 1
    assert [(row, fixable) for row, _, fixable, _ in found] == [(5, True), (6, True), (7, False), (12, False)]
    assert "`True` as the first positional argument (the old `pretrained`)" in found[0][3]
    assert main(["check", "--no-cache", "--select", "TL204", "--fix", str(tmp_path)]) == 1
    capsys.readouterr()
    text = (tmp_path / "m.py").read_text()
    assert "a = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V1)\n" in text
    assert "b = resnet18(weights=None)\n" in text
    assert "c = resnet18(True, False)\n" in text


def test_tl204_reads_a_builder_chosen_by_name_through_getattr(tmp_path, capsys):
    write_tree(tmp_path, {"m.py": (
        "import timm.models\n"
        "import torchvision.models as models\n"
        "from torchvision.models import vgg\n"
        "\n"
        "\n"
        "def build(vgg_type, arch):\n"
        "    a = getattr(vgg, vgg_type)(pretrained=True)\n"
        "    b = getattr(models.detection, arch)(pretrained_backbone=False)\n"
        "    c = getattr(models, 'resnet50')(pretrained=True)\n"
        "    d = getattr(timm.models, arch)(pretrained=True)\n"
        "    return a, b, c, d\n"
    )})
    code, found = _findings(capsys, tmp_path, "TL204")
    assert code == 1
    assert [(row, fixable) for row, _, fixable, _ in found] == [(7, False), (8, False), (9, True)]
    assert "chosen by name here" in found[0][3] and "pass `weights_backbone=`" in found[1][3]
    assert main(["check", "--no-cache", "--select", "TL204", "--fix", str(tmp_path)]) == 1
    capsys.readouterr()
    text = (tmp_path / "m.py").read_text()
    assert "    c = getattr(models, 'resnet50')(weights=models.ResNet50_Weights.IMAGENET1K_V1)\n" in text
    assert "    a = getattr(vgg, vgg_type)(pretrained=True)\n" in text
