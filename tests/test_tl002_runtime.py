"""TL002's fix, run for real on CPU torch: the fixed OCR model computes exactly what the
original does and names the layer, the expected channel count and the actual shape on a
wrong one; a fixed top-level model (its entry conv and a concatenation) still works under
torch.jit.script, torch.compile(fullgraph=True) without graph breaks, and torch.fx."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys

import pytest

from cli_support import FIXTURES, run_torchlint

torch = pytest.importorskip("torch")
fx = pytest.importorskip("torch.fx")


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    work = tmp_path_factory.mktemp("ocr")
    shutil.copy(FIXTURES / "ocr" / "model.py", work / "model.py")
    result = run_torchlint("check", "--no-cache", "--fix", "--select", "TL002", "model.py", cwd=work)
    assert result.returncode in (0, 1), result.stderr.decode()
    fixed_text = (work / "model.py").read_text(encoding="utf-8")
    assert fixed_text == (FIXTURES / "ocr" / "model.py.fixed").read_text(encoding="utf-8")
    assert "torch._assert" in fixed_text
    original = _load(FIXTURES / "ocr" / "model.py", "ocr_model_original")
    fixed = _load(work / "model.py", "ocr_model_fixed")
    return original, fixed


def _pair(models, name, *args):
    original, fixed = models
    torch.manual_seed(0)
    a = getattr(original, name)(*args).eval()
    b = getattr(fixed, name)(*args).eval()
    b.load_state_dict(a.state_dict())
    return a, b


def test_fixed_model_gives_identical_outputs(models):
    a, b = _pair(models, "TextDetector")
    images = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        expected, actual = a(images), b(images)
    assert expected.keys() == actual.keys()
    for key in expected:
        assert torch.equal(expected[key], actual[key]), key


def test_fixed_model_trains_identically(models):
    a, b = _pair(models, "TextDetector")
    a.train(), b.train()
    images = torch.randn(2, 3, 64, 64)
    grads = []
    for model in (a, b):
        model.zero_grad()
        sum(v.sum() for v in model(images).values()).backward()
        grads.append([p.grad.clone() for p in model.parameters()])
    assert all(torch.equal(x, y) for x, y in zip(*grads))


def test_wrong_fused_width_names_the_layer_the_count_and_the_shape(models):
    a, b = _pair(models, "FPNDecoder", (16, 32, 64, 128))
    features = tuple(torch.randn(1, c, 32 // 2**i, 32 // 2**i) for i, c in enumerate((16, 32, 64, 128)))
    for model in (a, b):  # one level too narrow: the fused input is 56 channels, not 64
        model.smooth[0] = torch.nn.Conv2d(64, 8, 3, padding=1)
    with pytest.raises(RuntimeError, match=r"expected input\[1, 56, 32, 32\] to have 64 channels"):
        a(features)  # PyTorch's own message: what the guard must match
    with pytest.raises(AssertionError) as error:
        b(features)
    assert str(error.value) == "fusion expects 64 input channels, got shape torch.Size([1, 56, 32, 32])"


def test_fixed_model_traces_with_fx(models):
    a, b = _pair(models, "TextDetector")
    traced = fx.symbolic_trace(b)
    asserts = [node for node in traced.graph.nodes if node.target is torch._assert]
    assert len(asserts) == 2 + 1  # the backbone's own two, and one for the fusion
    images = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        assert torch.equal(traced(images)["probability"], a(images)["probability"])
    b.decoder.smooth[0] = torch.nn.Conv2d(64, 8, 3, padding=1)  # the fused input is now 8 channels short
    with pytest.raises(Exception, match="fusion"):
        fx.symbolic_trace(b)(images)


ENCODER = '''import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, in_channels: int = 4, width: int = 8) -> None:
        super().__init__()
        self.conv_in = nn.Conv2d(in_channels, width, 3, padding=1)
        self.mix = nn.Conv2d(2 * width, width, 1)

    def forward(self, sample: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
        h = self.conv_in(sample)
        fused = torch.cat([h, skip], dim=1)
        return self.mix(fused)
'''
GOOD = ((2, 4, 16, 16), (2, 8, 16, 16))
NARROW_SAMPLE = ((2, 3, 16, 16), (2, 8, 16, 16))
NARROW_SKIP = ((2, 4, 16, 16), (2, 7, 16, 16))
SAMPLE_MESSAGE = "conv_in expects 4 input channels, got shape "
SKIP_MESSAGE = "mix expects 16 input channels, got shape "


@pytest.fixture(scope="module")
def encoders(tmp_path_factory):
    """The original and the fixed Encoder: a top-level model (nothing uses it as a part),
    so with check-model-inputs and check-fixed-concatenations both its entry conv and
    the conv over the concatenation get a guard: one channel check each."""
    work = tmp_path_factory.mktemp("encoder")
    (work / "encoder.py").write_text(ENCODER, encoding="utf-8")
    (work / "pyproject.toml").write_text(
        "[tool.torchlint.unvalidated-conv-input]\ncheck-model-inputs = true\ncheck-fixed-concatenations = true\n",
        encoding="utf-8",
    )
    result = run_torchlint("check", "--no-cache", "--fix", "--select", "TL002", "encoder.py", cwd=work)
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
    assert (work / "encoder.py").read_text(encoding="utf-8").count("torch._assert(") == 2
    fixed = _load(work / "encoder.py", "encoder_fixed")
    (work / "original.py").write_text(ENCODER, encoding="utf-8")
    torch.manual_seed(0)
    a = _load(work / "original.py", "encoder_original").Encoder().eval()
    b = fixed.Encoder().eval()
    b.load_state_dict(a.state_dict())
    return a, b


def _inputs(shapes):
    torch.manual_seed(1)
    return tuple(torch.randn(*shape) for shape in shapes)


@pytest.mark.parametrize(
    "shapes,message,shown",
    [(NARROW_SAMPLE, SAMPLE_MESSAGE, "[2, 3, 16, 16]"), (NARROW_SKIP, SKIP_MESSAGE, "[2, 15, 16, 16]")],
    ids=["entry", "concatenation"],
)
def test_fixed_encoder_message_is_as_informative_as_pytorchs(encoders, shapes, message, shown):
    a, b = encoders
    with pytest.raises(RuntimeError) as theirs:
        a(*_inputs(shapes))
    assert shown in str(theirs.value)  # PyTorch names the shape and the counts...
    with pytest.raises(AssertionError) as ours:
        b(*_inputs(shapes))
    assert str(ours.value) == f"{message}torch.Size({shown})"  # ...and so does the guard, with the layer


def test_fixed_encoder_input_of_the_wrong_rank_fails_as_clearly_as_before(encoders):
    """The guard checks the channel axis only (issue 23, 11: one readable check): a dim
    too many passes it when the axis counted from the end holds the right count, and the
    layer rejects the rank as it always did; a dim too short fails at `size(-3)`, which
    names the dims the tensor has."""
    a, b = encoders
    too_many = _inputs(((2, 1, 4, 16, 16), (2, 8, 16, 16)))
    with pytest.raises(RuntimeError) as theirs:
        a(*too_many)
    with pytest.raises(RuntimeError) as ours:
        b(*too_many)
    assert str(ours.value) == str(theirs.value) and "[2, 1, 4, 16, 16]" in str(ours.value)
    with pytest.raises(IndexError, match=re.escape("expected to be in range of [-2, 1], but got -3")):
        b(*_inputs(((4, 16), (2, 8, 16, 16))))


def test_fixed_encoder_scripts(encoders):
    a, b = encoders
    scripted = torch.jit.script(b)
    with torch.no_grad():
        assert torch.equal(scripted(*_inputs(GOOD)), a(*_inputs(GOOD)))
    with pytest.raises(Exception, match=re.escape(SAMPLE_MESSAGE + "[2, 3, 16, 16]")):
        scripted(*_inputs(NARROW_SAMPLE))


def test_fixed_encoder_traces_with_fx(encoders):
    a, b = encoders
    traced = fx.symbolic_trace(b)
    assert sum(node.target is torch._assert for node in traced.graph.nodes) == 2
    with torch.no_grad():
        assert torch.equal(traced(*_inputs(GOOD)), a(*_inputs(GOOD)))
    # the check stays in the graph; the shape in its message is fixed at trace time
    with pytest.raises(AssertionError, match=SAMPLE_MESSAGE):
        traced(*_inputs(NARROW_SAMPLE))


def test_fixed_encoder_compiles_without_graph_breaks(encoders):
    """Dynamo with the `aot_eager` backend (no C++ compiler needed); dynamic shapes, so
    a new batch size does not recompile into a different graph."""
    dynamo = pytest.importorskip("torch._dynamo")
    a, b = encoders
    dynamo.reset()
    assert dynamo.explain(b)(*_inputs(GOOD)).graph_break_count == 0
    dynamo.reset()
    compiled = torch.compile(b, backend="aot_eager", fullgraph=True, dynamic=True)
    with torch.no_grad():
        for batch in (2, 5):
            shapes = tuple((batch, *shape[1:]) for shape in GOOD)
            assert torch.equal(compiled(*_inputs(shapes)), a(*_inputs(shapes)))
    dynamo.reset()
    # without fullgraph a failing check breaks the graph and raises the guard's own message
    with pytest.raises(AssertionError, match=re.escape(SAMPLE_MESSAGE + "torch.Size([2, 3, 16, 16])")):
        torch.compile(b, backend="aot_eager")(*_inputs(NARROW_SAMPLE))
