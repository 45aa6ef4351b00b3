"""TL002's guard reads as a reviewer would write it: one channel check, the shapes in the
message, every added line within the configured line length however long the names
(issue 23, item 11)."""

from __future__ import annotations

import ast
import importlib.util
import re

import pytest

from torchlint.cli import main

# a concatenation of however many levels the caller passes, fed to a conv: reported by default
MODEL = '''from typing import List

import torch
from torch import nn


class {cls}(nn.Module):
    def __init__(self):
        super().__init__()
        self.{layer} = nn.Conv{dims}d(12, 4, 1)

    def forward(self, levels: List[torch.Tensor], enabled: bool = True) -> torch.Tensor:
        if enabled:
            {value} = torch.cat(levels, dim=1)
            return self.{layer}({value})
        return levels[0]
'''
LONG = dict(
    cls="MultiScaleFeaturePyramidFusionDecoder",
    layer="multi_scale_feature_fusion_convolution_layer",
    value="concatenated_multi_scale_pyramid_features",
)
SHORT = dict(cls="Fusion", layer="fuse", value="fused")


def fix(tmp_path, monkeypatch, capsys, names, dims, line_length):
    source = MODEL.format(dims=dims, **names)
    (tmp_path / "pyproject.toml").write_text(f"[tool.torchlint]\nline-length = {line_length}\n")
    (tmp_path / "model.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    code = main(["check", "--no-cache", "--fix", "--select", "TL002", "model.py"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), out + err
    fixed = (tmp_path / "model.py").read_text()
    added = [line for line in fixed.splitlines() if line not in source.splitlines()]
    return source, fixed, added


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("names", [LONG, SHORT], ids=["long", "short"])
def test_the_guard_is_one_channel_check_within_the_line_length(tmp_path, monkeypatch, capsys, names, dims):
    source, fixed, added = fix(tmp_path, monkeypatch, capsys, names, dims, 88)
    ast.parse(fixed)
    assert added[0].strip() == "torch._assert(" and added[-1].strip() == ")"
    assert max(len(line) for line in added) <= 88, "\n".join(added)
    guard = "".join(line.strip() for line in added)
    assert guard.count("==") == 1 and ".dim()" not in guard and "&" not in guard and "|" not in guard
    assert f"{names['value']}.size({-(dims + 1)})" in guard
    # a literal without a placeholder is a plain string (no f-string without placeholders)
    for literal in re.findall(r'f?"[^"]*"', guard):
        assert literal.startswith("f") == ("{" in literal), literal
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--no-cache", "--select", "TL002", "model.py"]) == 0
    assert main(["check", "--no-cache", "--fix", "--select", "TL002", "model.py"]) == 0
    assert (tmp_path / "model.py").read_text() == fixed  # a second --fix changes nothing


def test_short_names_keep_the_guard_compact(tmp_path, monkeypatch, capsys):
    _, _, added = fix(tmp_path, monkeypatch, capsys, SHORT, 2, 120)
    assert [line.strip() for line in added] == [
        "torch._assert(",
        "fused.size(-3) == self.fuse.in_channels,",
        'f"fuse expects {self.fuse.in_channels} input channels, got shape {fused.shape}",',
        ")",
    ]


def test_the_split_guard_runs_and_names_the_layer_the_count_and_the_shape(tmp_path, monkeypatch, capsys):
    torch = pytest.importorskip("torch")
    _, fixed, added = fix(tmp_path, monkeypatch, capsys, LONG, 2, 88)
    assert len(added) > 4  # the long names made it split
    spec = importlib.util.spec_from_file_location("tl002_long_guard", tmp_path / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = getattr(module, LONG["cls"])()
    good = [torch.randn(2, 6, 5, 5), torch.randn(2, 6, 5, 5)]
    assert model(good).shape == (2, 4, 5, 5)
    with pytest.raises(AssertionError) as raised:
        model([torch.randn(2, 6, 5, 5), torch.randn(2, 5, 5, 5)])
    assert str(raised.value) == (
        f"{LONG['layer']} expects 12 input channels, got shape torch.Size([2, 11, 5, 5])"
    )
    scripted = torch.jit.script(model)
    with pytest.raises(Exception, match=re.escape(f"{LONG['layer']} expects 12 input channels, got shape [2, 11, 5, 5]")):
        scripted([torch.randn(2, 6, 5, 5), torch.randn(2, 5, 5, 5)])
