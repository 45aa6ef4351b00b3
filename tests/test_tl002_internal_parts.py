"""TL002 by default reports a concatenation whose number of parts the caller decides (an
FPN fusion over the caller's levels); one with a fixed number of parts, one of them from
outside (a U-Net decoder's skip), only with `check-fixed-concatenations`, and even then
not when the parts are the module's own: a skip that its parent feeds from its own
encoder (in the same file or across files, decided in the project pass; within the file
under flake8), or a part one of the module's convs already took. The CLI and flake8."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import run_torchlint, write_tree
from flake8_support import run_flake8

DECODER = '''import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.up = nn.ConvTranspose2d(2 * width, width, 2, 2)
        self.fuse = nn.Conv2d(2 * width, width, 3, padding=1)

    def forward(self, low, skip):
        up = self.up(low)
        cat = torch.cat((up, skip), dim=1)
        return self.fuse(cat)
'''
# the parent builds the encoder and the decoder from the same width and feeds its own
# encoder's outputs to the decoder
SIBLINGS = '''from torch import nn

from .decoder import Decoder


class Encoder(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.first = nn.Conv2d(3, width, 3, padding=1)
        self.second = nn.Conv2d(width, 2 * width, 3, 2, padding=1)

    def forward(self, image):
        skip = self.first(image)
        return skip, self.second(skip)


class Net(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.encoder = Encoder(width)
        self.decoder = Decoder(width)

    def forward(self, image):
        skip, low = self.encoder(image)
        return self.decoder(low, skip)
'''
# a caller that hands on a tensor its own caller supplies
HANDS_ON = '''from torch import nn

from .decoder import Decoder


class Refiner(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.stem = nn.Conv2d(3, 2 * width, 3, 2, padding=1)
        self.decoder = Decoder(width)

    def forward(self, image, guide):
        return self.decoder(self.stem(image), guide)
'''
DENSE = '''import torch
from torch import nn


class Dense(nn.Module):
    def __init__(self, c, g):
        super().__init__()
        self.conv1 = nn.Conv2d(c, g, 3, padding=1)
        self.conv2 = nn.Conv2d(c + g, c, 3, padding=1)

    def forward(self, x):
        x1 = self.conv1(x)
        return self.conv2(torch.cat((x, x1), 1))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = Dense(8, 4)
'''
INTERNAL = "[tool.torchlint.unvalidated-conv-input]\ncheck-internal-concatenations = true\n"
FIXED = "[tool.torchlint.unvalidated-conv-input]\ncheck-fixed-concatenations = true\n"
FPN = '''import torch
from torch import nn


class Fusion(nn.Module):
    def __init__(self, widths):
        super().__init__()
        self.fuse = nn.Conv2d(sum(widths), 64, 3, padding=1)

    def forward(self, features):
        return self.fuse(torch.cat(features, dim=1))
'''


def _findings(root):
    result = run_torchlint("check", "--no-cache", "--select", "TL002", "--output-format", "json-lines", ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr.decode()
    found = [json.loads(line) for line in result.stdout.decode().splitlines()]
    return sorted((Path(item["filename"]).name, item["location"]["row"]) for item in found)


def test_a_fixed_number_of_parts_is_reported_only_with_its_setting(tmp_path):
    write_tree(tmp_path, {"fpn.py": FPN, "decoder.py": DECODER})
    assert _findings(tmp_path) == [("fpn.py", 11)]
    write_tree(tmp_path, {"pyproject.toml": FIXED})
    assert _findings(tmp_path) == [("decoder.py", 14), ("fpn.py", 11)]


def test_a_skip_the_parent_feeds_from_its_own_encoder_is_not_reported(tmp_path):
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/decoder.py": DECODER, "pkg/net.py": SIBLINGS})
    assert _findings(tmp_path) == []
    write_tree(tmp_path, {"pyproject.toml": FIXED})
    assert _findings(tmp_path) == []
    write_tree(tmp_path, {"pyproject.toml": INTERNAL})
    assert _findings(tmp_path) == [("decoder.py", 14)]


def test_a_skip_a_caller_hands_on_from_its_own_caller_is_reported_and_fixed(tmp_path):
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/decoder.py": DECODER,
            "pkg/net.py": SIBLINGS,
            "pkg/refiner.py": HANDS_ON,
            "pyproject.toml": FIXED,
        },
    )
    assert _findings(tmp_path) == [("decoder.py", 14)]  # one caller of two passes outside data
    result = run_torchlint("check", "--no-cache", "--select", "TL002", "--fix", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
    fixed = (tmp_path / "pkg" / "decoder.py").read_text(encoding="utf-8")
    assert fixed.count("torch._assert(") == 1
    assert "cat.size(-3) == self.fuse.in_channels," in fixed


def test_a_skip_nothing_calls_is_reported(tmp_path):
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/decoder.py": DECODER, "pyproject.toml": FIXED})
    assert _findings(tmp_path) == [("decoder.py", 14)]


@pytest.mark.slow
def test_flake8_decides_skips_within_the_file(tmp_path):
    same_file = DECODER + "\n\n" + SIBLINGS.replace("from .decoder import Decoder\n", "").replace("from torch import nn\n", "")
    write_tree(tmp_path, {"siblings.py": same_file, "alone.py": DECODER, "pyproject.toml": FIXED})
    result = run_flake8("--select", "TL002", "siblings.py", "alone.py", cwd=tmp_path)
    assert [line.split(" ", 1)[0] for line in result.stdout.splitlines()] == ["alone.py:14:16:"]


def test_a_part_one_of_the_modules_convs_already_took_is_not_reported(tmp_path):
    write_tree(tmp_path, {"dense.py": DENSE})
    assert _findings(tmp_path) == []
    write_tree(tmp_path, {"pyproject.toml": INTERNAL})
    assert _findings(tmp_path) == [("dense.py", 13)]


def test_a_part_a_conv_took_only_in_a_branch_is_still_outside(tmp_path):
    branchy = DENSE.replace(
        "        x1 = self.conv1(x)\n",
        "        x1 = torch.zeros_like(x[:, :4])\n        if x.is_cuda:\n            x1 = self.conv1(x)\n",
    )
    write_tree(tmp_path, {"dense.py": branchy, "pyproject.toml": FIXED})
    assert _findings(tmp_path) == [("dense.py", 15)]
