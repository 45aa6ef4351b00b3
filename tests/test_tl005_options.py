"""TL005 selected, through the real CLI: sizes (`int(lengths.max())`, `len(nonzero)`) and
explicit `.cpu()` copies unless check-cpu-copies is off, sizes only with check-sizes, a loop's exit test
only with check-loop-exits; a check that only
warns (or raises in one branch) only with check-error-paths; a truth test that steers
the step is reported in every setting."""

from __future__ import annotations

import json

import pytest

from cli_support import run_torchlint, write_tree

SOURCE = '''import warnings

import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x, lengths, keep):
        out = x.new_zeros(len(x), int(lengths.max()) + 1)
        picked = len(torch.nonzero(keep))
        if torch.isnan(x).any():
            warnings.warn("nan in the input")
        if keep.any():
            x = x * 2
        x = self.refine(x)
        return out, picked, x.cpu()

    def refine(self, x):
        while x.abs().max() > 1:
            x = x / 2
        return x
'''
SIZES = [(9, 35), (10, 22)]
WARNING = [(11, 12)]
STEERING = [(13, 12)]
COPY = [(16, 29)]
LOOP = [(19, 15)]


def _rows(root, options=""):
    (root / "pyproject.toml").write_text(
        f"[tool.torchlint.implicit-host-sync-in-hot-path]\n{options}", encoding="utf-8"
    )
    result = run_torchlint(
        "check", "--no-cache", "--select", "TL005", "--output-format", "json-lines", "net.py", cwd=root
    )
    assert result.returncode in (0, 1), result.stderr.decode()
    found = [json.loads(line) for line in result.stdout.decode().splitlines()]
    return sorted((item["location"]["row"], item["location"]["column"]) for item in found)


@pytest.mark.parametrize(
    "options,expected",
    [
        ("", STEERING + COPY),
        ("check-sizes = true\n", SIZES + STEERING + COPY),
        ("check-cpu-copies = false\n", STEERING),
        ("check-error-paths = true\n", WARNING + STEERING + COPY),
        ("check-loop-exits = true\n", STEERING + COPY + LOOP),
        (
            "check-sizes = true\ncheck-cpu-copies = true\ncheck-error-paths = true\ncheck-loop-exits = true\n",
            SIZES + WARNING + STEERING + COPY + LOOP,
        ),
    ],
    ids=["default", "sizes", "no-cpu-copies", "error-paths", "loop-exits", "all"],
)
def test_options_bring_back_what_the_default_leaves_out(tmp_path, options, expected):
    write_tree(tmp_path, {"net.py": SOURCE})
    assert _rows(tmp_path, options) == expected
