"""TL002 with `check-model-inputs` reports a parameter of `forward` only at the entry conv
of a top-level model: a module no other module of the project uses, decided across files
in the project pass. The CLI, for real."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import run_torchlint, write_tree
from rule_support import findings
from torchlint.rule_api.registry import find_rule

BLOCK = (
    "from torch import nn\n\n\nclass Block(nn.Module):\n    def __init__(self, c):\n"
    "        super().__init__()\n        self.conv = nn.Conv2d(c, c, 3, padding=1)\n\n"
    "    def forward(self, x):\n        return self.conv(x)\n"
)
NET = (
    "from torch import nn\n\nfrom .blocks import Block\n\n\nclass Net(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.stem = nn.Conv2d(3, 8, 3)\n"
    "        self.body = nn.Sequential(Block(8), Block(8))\n\n"
    "    def forward(self, images):\n        return self.body(self.stem(images))\n\n\n"
    "def build():\n    return Net()\n"
)


def _findings(root):
    result = run_torchlint("check", "--no-cache", "--select", "TL002", "--output-format", "json-lines", ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr.decode()
    found = [json.loads(line) for line in result.stdout.decode().splitlines()]
    return sorted((Path(item["filename"]).name, item["location"]["row"]) for item in found)


MODEL_INPUTS = "[tool.torchlint.unvalidated-conv-input]\ncheck-model-inputs = true\n"


def test_a_block_used_by_a_model_in_another_file_is_not_reported(tmp_path):
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/blocks.py": BLOCK, "pkg/net.py": NET})
    assert _findings(tmp_path) == []  # by default, no parameter at all
    write_tree(tmp_path, {"pyproject.toml": MODEL_INPUTS})
    assert _findings(tmp_path) == [("net.py", 13)]  # the model's entry conv only


def test_check_parameters_reports_the_block_too(tmp_path):
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/blocks.py": BLOCK,
            "pkg/net.py": NET,
            "pyproject.toml": "[tool.torchlint.unvalidated-conv-input]\ncheck-parameters = true\n",
        },
    )
    assert _findings(tmp_path) == [("blocks.py", 10), ("net.py", 13)]


def test_a_block_alone_is_a_top_level_model_and_gets_a_fix(tmp_path):
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/blocks.py": BLOCK, "pyproject.toml": MODEL_INPUTS})
    assert _findings(tmp_path) == [("blocks.py", 10)]
    run_torchlint("check", "--no-cache", "--select", "TL002", "--fix", ".", cwd=tmp_path)
    fixed = (tmp_path / "pkg" / "blocks.py").read_text(encoding="utf-8")
    assert 'f"conv expects {self.conv.in_channels} input channels, got shape {x.shape}"' in fixed


BLOCKS = [
    # a block of a bigger model (Net builds it): PyTorch's own error names its shapes
    (
        "from torch import nn\n\nclass Block(nn.Module):\n    def __init__(self, c):\n"
        "        super().__init__()\n        self.conv = nn.Conv2d(c, c, 3)\n\n"
        "    def forward(self, x):\n        return self.conv(x)\n\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.blocks = nn.Sequential(Block(8), Block(8))\n\n"
        "    def forward(self, x):\n        return self.blocks(x)\n"
    ),
    # a private block (`_ConvNorm`) is a block too
    (
        "from torch import nn\n\nclass _ConvNorm(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.conv = nn.Conv1d(8, 8, 3)\n\n"
        "    def forward(self, x):\n        return self.conv(x)\n\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.body = _ConvNorm()\n"
    ),
    # a block passed as a part to a builder (`_make(BasicBlock, ...)`)
    (
        "from torch import nn\n\nclass BasicBlock(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.conv = nn.Conv2d(8, 8, 3)\n\n"
        "    def forward(self, x):\n        return self.conv(x)\n\n"
        "def resnet():\n    return make(BasicBlock, [2, 2])\n"
    ),
]


@pytest.mark.parametrize("source", BLOCKS, ids=["nested-block", "private-block", "passed-to-a-builder"])
def test_blocks_are_not_model_inputs(source):
    diagnostics, _ = findings(find_rule("TL002"), source, (("check-model-inputs", True),))
    assert diagnostics == []
    diagnostics, _ = findings(find_rule("TL002"), source, (("check-parameters", True),))
    assert diagnostics  # the same conv is reported as any module's parameter
