"""TL002's fix, run for real on CPU torch: the fixed OCR model computes exactly what the
original does, names the layer on a wrong channel count, and still traces with torch.fx."""

from __future__ import annotations

import importlib.util
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


@pytest.mark.parametrize(
    "name,args,shape,layer",
    [
        ("FPNDecoder", ((16, 32, 64, 128),), None, "fusion"),
        ("DBHead", (64,), (2, 48, 16, 16), "probability"),
        ("DBHead", (64,), (64, 16), "probability"),
    ],
)
def test_wrong_input_names_the_layer(models, name, args, shape, layer):
    a, b = _pair(models, name, *args)
    if name == "FPNDecoder":
        # one level too narrow: the fused channel count is off
        features = tuple(torch.randn(1, c, 32 // 2**i, 32 // 2**i) for i, c in enumerate((16, 32, 64, 128)))
        b.smooth[0] = torch.nn.Conv2d(64, 8, 3, padding=1)
        inputs = (features,)
    else:
        inputs = (torch.randn(*shape),)
    with pytest.raises(Exception) as error:
        b(*inputs)
    assert layer in str(error.value)


def test_good_input_of_each_fixed_layer_passes_unchanged(models):
    a, b = _pair(models, "DBHead", 64)
    fused = torch.randn(1, 64, 16, 16)
    with torch.no_grad():
        assert torch.equal(a(fused)["probability"], b(fused)["probability"])


def test_fixed_model_traces_with_fx(models):
    a, b = _pair(models, "TextDetector")
    traced = fx.symbolic_trace(b)
    asserts = [node for node in traced.graph.nodes if node.target is torch._assert]
    assert len(asserts) == 2 + 4  # the backbone's own two, and two per fixed layer
    images = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        assert torch.equal(traced(images)["probability"], a(images)["probability"])
    b.decoder.smooth[0] = torch.nn.Conv2d(64, 8, 3, padding=1)  # the fused input is now 8 channels short
    with pytest.raises(Exception, match="fusion"):
        fx.symbolic_trace(b)(images)
