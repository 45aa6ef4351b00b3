"""The guard on CPU with real torch: each failure class of issue 25 raises before the call,
naming the module path and the check; removed, the model runs as before."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from torchlint.runtime import GuardError, guard  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from guard_models import LSTMTagger  # noqa: E402


class Fusion(nn.Module):
    """An FPN decoder: lateral features of the levels it is given, concatenated into one conv."""

    def __init__(self, widths=(256, 256, 256, 256)):
        super().__init__()
        self.fusion = nn.Conv2d(sum(widths), 64, 3, padding=1)

    def forward(self, features):
        size = features[0].shape[-2:]
        return self.fusion(torch.cat([F.interpolate(f, size=size) for f in features], dim=1))


class Segmenter(nn.Module):
    def __init__(self):
        super().__init__()
        self.decoder = Fusion()
        self.head = nn.Conv2d(64, 3, 1)

    def forward(self, features):
        return self.head(self.decoder(features))


def test_wrong_width_concatenation_into_a_conv_names_the_fusion_layer():
    model = Segmenter()
    levels = [torch.randn(2, 256, 16 // 2**i, 16 // 2**i) for i in range(3)]  # one level missing
    with guard(model):
        with pytest.raises(GuardError) as caught:
            model(levels)
    error = caught.value
    assert (error.module, error.check) == ("model.decoder.fusion", "conv-channels")
    assert "float32[2, 768, 16, 16]" in str(error) and "expected 1024 channels at dim 1, got 768" in str(error)
    assert "concatenation" in error.advice


def test_out_of_range_cross_entropy_label_names_the_loss_and_the_bad_value():
    model = nn.Sequential(nn.Linear(8, 5))
    criterion = nn.CrossEntropyLoss()
    labels = torch.tensor([0, 4, 5, 1])  # 5 == number of classes
    with guard(model):
        with pytest.raises(GuardError) as caught:
            criterion(model(torch.randn(4, 8)), labels)
    error = caught.value
    assert error.check == "class-target" and error.module == "F.cross_entropy"
    assert "first bad value 5 at index [2]" in str(error) and "[0, 5)" in str(error)


def test_a_loss_module_inside_the_model_is_named_by_its_path_and_ignore_index_is_allowed():
    class WithLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Linear(8, 5)
            self.criterion = nn.CrossEntropyLoss(ignore_index=-1)

        def forward(self, x, y):
            return self.criterion(self.net(x), y)

    model = WithLoss()
    with guard(model):
        model(torch.randn(3, 8), torch.tensor([0, -1, 4])).backward()  # -1 is ignore_index: fine
        with pytest.raises(GuardError) as caught:
            model(torch.randn(3, 8), torch.tensor([0, -2, 4]))
    assert caught.value.module == "model.criterion"
    assert caught.value.kind == "F.cross_entropy in CrossEntropyLoss"
    assert "or -1 (ignore_index)" in str(caught.value)


def test_embedding_index_equal_to_num_embeddings():
    model = LSTMTagger(vocab=100)
    tokens = torch.randint(0, 100, (2, 7))
    tokens[1, 3] = 100
    with guard(model):
        with pytest.raises(GuardError) as caught:
            model(tokens)
    error = caught.value
    assert (error.module, error.check) == ("model.embed", "embedding-index")
    assert "max 100" in str(error) and "first bad value 100 at index [1, 3]" in str(error)
    assert "num_embeddings=100" in error.advice


def test_bce_input_outside_zero_one():
    model = nn.Sequential(nn.Linear(4, 1))  # raw scores, no sigmoid
    criterion = nn.BCELoss()
    with torch.no_grad():
        model[0].bias.fill_(3.0)
    with guard(model):
        with pytest.raises(GuardError) as caught:
            criterion(model(torch.randn(6, 4)).squeeze(1), torch.ones(6))
    assert caught.value.check == "bce-input-range"
    assert "binary_cross_entropy_with_logits" in caught.value.advice


def test_nan_from_log_of_zero_is_found_at_the_first_module():
    class Entropy(nn.Module):
        def forward(self, p):
            return -(p * torch.log(p)).sum(-1, keepdim=True)

    model = nn.Sequential()
    model.add_module("entropy", Entropy())
    model.add_module("head", nn.Linear(1, 2))
    model.add_module("out", nn.Linear(2, 2))
    probabilities = torch.tensor([[0.5, 0.5], [1.0, 0.0]])
    with guard(model):
        with pytest.raises(GuardError) as caught:
            model(probabilities)
    error = caught.value
    assert (error.module, error.check) == ("model.entropy", "finite-output")
    assert "1 NaN" in str(error) and "this module made them" in str(error)


def test_the_first_non_finite_gradient_names_its_parameter():
    class Norm(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.zeros(3))

        def forward(self, x):
            return torch.sqrt(self.scale) * x  # d/dscale sqrt at 0 is inf

    model = nn.Sequential(nn.Linear(3, 3), Norm())
    with guard(model, checks=["finite"]):
        loss = model(torch.randn(2, 3)).sum()
        with pytest.raises(GuardError) as caught:
            loss.backward()
    assert (caught.value.module, caught.value.check) == ("model.1.scale", "finite-gradient")


def gradient_penalty_step(model, x):
    out = model(x)
    (grad,) = torch.autograd.grad(out.square().mean(), x, create_graph=True)
    return out.mean() + grad.square().sum()


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 16, proj_size=4, batch_first=True)

    def forward(self, x):
        return self.lstm(x)[0]


@pytest.mark.filterwarnings("ignore:LSTM with projections")
def test_projected_lstm_under_a_gradient_penalty_is_named_before_cudnn_would_fail():
    model = nn.Sequential()
    model.add_module("encoder", Encoder())
    x = torch.randn(3, 5, 6, requires_grad=True)
    with guard(model, cudnn=True):  # judge as on a GPU with cuDNN: a CPU dry run
        with pytest.raises(GuardError) as caught:
            gradient_penalty_step(model, x).backward()
    error = caught.value
    assert (error.module, error.check) == ("model.encoder.lstm", "rnn-cudnn-double-backward")
    assert "proj_size=4" in error.kind and "cudnn.flags(enabled=False)" in error.advice


@pytest.mark.filterwarnings("ignore:LSTM with projections")
def test_on_cpu_without_cudnn_the_same_gradient_penalty_passes():
    model = nn.Sequential(Encoder())
    x = torch.randn(3, 5, 6, requires_grad=True)
    with guard(model):
        gradient_penalty_step(model, x).backward()
    assert x.grad is not None


def test_a_cudnn_rnn_differentiated_in_eval_mode():
    model = nn.Sequential(nn.GRU(4, 8, batch_first=True)).eval()
    with guard(model, cudnn=True):
        out = model(torch.randn(2, 3, 4, requires_grad=True))[0]
        with pytest.raises(GuardError) as caught:
            out.sum().backward()
    assert caught.value.check == "rnn-cudnn-eval-backward" and "model.train()" in caught.value.advice


@pytest.mark.parametrize(
    ("make_input", "check"),
    [
        (lambda: torch.randn(2, 3, 8, 8, 8), "conv-dims"),  # a volume into a Conv2d
        (lambda: torch.randn(1, 3, 8, 8, dtype=torch.float64), "conv-dtype"),
        (lambda: torch.randn(1, 3, 8, 8, device="meta"), "conv-device"),
    ],
)
def test_conv_dims_dtype_and_device(make_input, check):
    model = nn.Sequential(nn.Conv2d(3, 4, 3))
    with guard(model):
        with pytest.raises(GuardError) as caught:
            model(make_input())
    assert (caught.value.module, caught.value.check) == ("model.0", check)


def test_conv_groups_and_functional_conv_inside_a_module():
    class Depthwise(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(8, 1, 3, 3))

        def forward(self, x):
            return F.conv2d(x, self.weight, groups=8)

    model = nn.Sequential(nn.Conv2d(3, 16, 1, groups=1), Depthwise())
    with guard(model):
        with pytest.raises(GuardError) as caught:
            model(torch.randn(1, 3, 8, 8))
    assert (caught.value.module, caught.value.check) == ("model.1", "conv-channels")
    assert caught.value.kind == "F.conv2d in Depthwise" and "groups=8" in str(caught.value)


def test_conv_under_autocast_does_not_report_the_dtype():
    model = nn.Sequential(nn.Conv2d(3, 4, 3))
    with guard(model), torch.autocast("cpu", dtype=torch.bfloat16):
        model(torch.randn(1, 3, 8, 8, dtype=torch.bfloat16))


def test_batch_norm_one_value_per_channel_and_cudnn_limits():
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8))
    with guard(model):
        with pytest.raises(GuardError) as caught:
            model(torch.randn(1, 4))
    assert (caught.value.module, caught.value.check) == ("model.1", "batchnorm-one-value")
    norm = nn.Sequential(nn.BatchNorm2d(1)).eval()
    with guard(norm, cudnn=True):
        with pytest.warns(UserWarning, match=r"model.0 \(BatchNorm2d\).*batch <= 65,535 in eval"):
            norm(torch.randn(65536, 1, 1, 1))


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda x: x.gather(1, torch.tensor([[0, 4]])), "Tensor.gather"),
        (lambda x: torch.index_select(x, 0, torch.tensor([-1])), "torch.index_select"),
        (lambda x: torch.zeros(2, 4).scatter_(1, torch.tensor([[4]]), 1.0), "Tensor.scatter_"),
    ],
)
def test_index_consumers_inside_a_module(call, name):
    class Pick(nn.Module):
        def forward(self, x):
            return call(x)

    model = nn.Sequential(nn.Linear(4, 4), Pick())
    with guard(model):
        with pytest.raises(GuardError) as caught:
            model(torch.randn(2, 4))
    assert (caught.value.module, caught.value.check) == ("model.1", "index-range")
    assert caught.value.kind == f"{name} in Pick"


def test_a_torch_function_another_library_replaced_is_still_checked(monkeypatch):
    # torch_geometric (2.8, hash_tensor.py) replaces torch.index_select with a wrapper calling the original
    # builtin: the function mode then receives the builtin, not the torch.index_select it was built with
    original = torch.index_select

    def index_select(input, dim, index, *, out=None):
        return original(input, dim, index)

    monkeypatch.setattr(torch, "index_select", index_select)

    class Pick(nn.Module):
        def forward(self, x):
            return torch.index_select(x, 0, torch.tensor([2]))

    model = nn.Sequential(nn.Linear(4, 4), Pick())
    with guard(model):
        with pytest.raises(GuardError) as caught:
            model(torch.randn(2, 4))
    assert (caught.value.module, caught.value.check, caught.value.kind) == ("model.1", "index-range",
                                                                           "torch.index_select in Pick")


def test_value_checks_follow_the_schedule_and_shape_checks_run_always():
    model = nn.Sequential(nn.Embedding(10, 4))
    bad = torch.tensor([[10]])
    with guard(model, first=1, every=4):
        model(torch.tensor([[1]]))  # step 1: checked, passes
        with pytest.raises(IndexError):  # step 2: not a value step: torch's own CPU error
            model(bad)
        model(torch.tensor([[2]]))  # step 3
        with pytest.raises(GuardError):  # step 4: every 4th
            model(bad)
    conv = nn.Sequential(nn.Conv2d(3, 4, 1))
    with guard(conv, first=0, every=0):
        with pytest.raises(GuardError):
            conv(torch.randn(1, 5, 2, 2))


def test_remove_restores_the_model_and_the_handle_form_works():
    model = Segmenter()
    handle = guard(model)
    levels = [torch.randn(1, 256, 4, 4)] * 3
    with pytest.raises(GuardError):
        model(levels)
    handle.remove()
    with pytest.raises(RuntimeError) as caught:
        model(levels)
    assert not isinstance(caught.value, GuardError)
    assert all(not m._forward_pre_hooks and not m._forward_hooks for m in model.modules())
    assert torch.overrides._get_current_function_mode_stack() == []
    with handle:  # installed again, gradient hooks included
        with pytest.raises(GuardError):
            model(levels)
        with pytest.raises(GuardError, match="finite-gradient"):
            model.head.weight.backward(torch.full_like(model.head.weight, float("nan")))


def test_unknown_check_family_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown guard check families"):
        guard(nn.Linear(1, 1), checks=["conv", "shapes"])


def test_a_sample_beyond_cudnns_32_bit_indexing_is_named_under_cudnn_only():
    model = nn.Sequential(nn.Conv2d(3, 4, 3, device="meta"))  # meta: shapes without memory
    huge = torch.empty(2, 3, 27_000, 27_000, device="meta")  # 2.19e9 elements per sample
    with guard(model, cudnn=True):
        with pytest.raises(GuardError) as caught:
            model(huge)
    assert (caught.value.module, caught.value.check) == ("model.0", "conv-cudnn-size")
    assert "2,187,000,000 elements" in str(caught.value)
    with guard(model):  # not on cuDNN: nothing to report
        assert model(huge).shape == (2, 4, 26_998, 26_998)


def test_meta_tensors_get_the_shape_checks_and_no_value_checks():
    model = nn.Sequential(nn.Embedding(10, 4, device="meta"), nn.Linear(4, 2, device="meta"))
    with guard(model):
        assert model(torch.empty(2, 3, dtype=torch.long, device="meta")).shape == (2, 3, 2)


def test_the_function_mode_steps_aside_inside_optimizer_step_and_comes_back():
    model = nn.Sequential(nn.Linear(4, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    seen = []

    class Spy(torch.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {})

        def step(self, closure=None):
            seen.append(list(torch.overrides._get_current_function_mode_stack()))

    spy = Spy(model.parameters())
    with guard(model) as handle:
        model(torch.randn(2, 4)).sum().backward()
        optimizer.step()
        spy.step()
        assert seen == [[]]  # nothing intercepted inside step()
        assert torch.overrides._get_current_function_mode_stack() == [handle._mode]
        with pytest.raises(GuardError):
            torch.gather(torch.zeros(3), 0, torch.tensor([3]))
    assert torch.overrides._get_current_function_mode_stack() == []
