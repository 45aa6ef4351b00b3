"""NaN named at the operation that made it, with its line, where it was once only said in a message:
under fp16 autocast with a GradScaler (whose skipped steps are no alarm), in an fp16 backward once no
scaler skips it, after a -Inf made by `log(0)`, and inside blocks checkpointed with `use_reentrant=True`
(real torch on CPU)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from torchlint.runtime import GuardError, guard  # noqa: E402
from torchlint.runtime.guards import SCALE_FLOOR  # noqa: E402

import backward_faults  # noqa: E402


class Ratio(nn.Linear):
    """(h - g) / (h - g): 1 for two different inputs, 0/0 for the same one twice."""

    def __init__(self):
        super().__init__(4, 4)

    def forward(self, x, y):
        difference = super().forward(x) - super().forward(y)
        return difference / difference


class Entropy(Ratio):
    """p * log(p): 0 * -inf = NaN once a probability is exactly 0 (a saturated softmax)."""

    def forward(self, x, y):
        p = torch.softmax(nn.Linear.forward(self, x) + nn.Linear.forward(self, y), -1)
        return (p * torch.log(p)).sum(-1, keepdim=True)


class Model(nn.Module):
    def __init__(self, block):
        super().__init__()
        self.block = block()
        self.head = nn.Linear(4 if block is Ratio else 1, 2)

    def forward(self, x, y):
        return self.head(self.block(x, y))


def _fp16_steps_with_a_scaler(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**40)  # overflows in fp16: the first steps are skipped
    for x, y in batches:
        with torch.autocast("cpu", dtype=torch.float16):
            loss = model(x, y).float().square().mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    return scaler


@pytest.mark.parametrize(("block", "named"), [
    (Ratio, "aten.div.Tensor at {file}:"),
    (Entropy, "aten.mul.Tensor at {file}:"),
])
def test_nan_born_in_forward_under_fp16_autocast_with_a_grad_scaler_is_named_at_its_operation(block, named):
    torch.manual_seed(0)
    model = Model(block)
    healthy = [(torch.randn(3, 4), torch.randn(3, 4)) for _ in range(3)]
    x = torch.randn(3, 4)
    faulty = (x, x) if block is Ratio else (x * 1e4, x * 1e4)
    with guard(model, first=10**9):
        scaler = _fp16_steps_with_a_scaler(model, healthy)
        assert scaler.get_scale() < 2.0**40  # the scaler skipped overflowing steps, and the guard let it
        with pytest.raises(GuardError) as caught:
            _fp16_steps_with_a_scaler(model, [faulty])
    error = caught.value
    assert (error.module, error.check) == ("model.block", "finite-output")
    origin = error.facts[-1]
    assert origin.startswith("the first operation that made them: " + named.format(file=__file__))
    assert "in forward" in origin
    if block is Entropy:  # 0 * -inf: the -Inf came from log(0), named too
        assert ", from the -Inf made by aten.log.default at " in origin


def test_a_nan_made_from_a_log_of_zero_in_the_loss_names_the_log():
    model = nn.Sequential(nn.Linear(4, 3), nn.Softmax(-1))
    target = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    with guard(model), torch.autocast("cpu", dtype=torch.float16):
        p = model(torch.randn(2, 4) * 1e4)  # saturated: some probabilities are exactly 0
        log_p = torch.log(p)
        with pytest.raises(GuardError) as caught:
            (log_p * target).sum(-1).mean()  # 0 * -inf
    error = caught.value
    assert error.check == "finite-op" and error.module in ("Tensor.__mul__", "Tensor.mul")
    assert f"made by torch.log at {__file__}:" in error.facts[-1]


class CheckpointedRatio(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Ratio()

    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.block, x, x, use_reentrant=True)


def test_nan_born_in_forward_inside_a_reentrant_checkpoint_is_named_at_its_operation():
    model = nn.Sequential(CheckpointedRatio())
    x = torch.randn(3, 4, requires_grad=True)
    with guard(model):
        with pytest.raises(GuardError) as caught:
            model(x)
    assert (caught.value.module, caught.value.check) == ("model.0.block", "finite-output")
    assert caught.value.facts[-1].startswith(f"the first operation that made them: aten.div.Tensor at {__file__}:")


SQRT_ORIGIN = f"the operation whose backward made them: torch.sqrt at {backward_faults.__file__}:"


def _fp16_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 3), backward_faults.SqrtOfZero(), nn.Linear(3, 2))


def _fp16_backward(model):
    with torch.autocast("cpu", dtype=torch.float16):
        loss = model(torch.randn(4, 3)).float().square().mean()
    loss.backward()  # outside the autocast block, as torch's AMP recipe has it


def test_nan_born_in_backward_under_fp16_autocast_is_named_at_its_operation_when_the_optimizer_would_apply_it():
    model = _fp16_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = [parameter.detach().clone() for parameter in model.parameters()]
    with guard(model) as handle:
        _fp16_backward(model)  # fp16: a GradScaler could still skip this step, so nothing is raised yet
        with pytest.raises(GuardError) as caught:
            optimizer.step()
        assert all(call.module is None for call in handle._outer_calls)  # what the replay needed is let go
    error = caught.value
    assert error.check == "finite-gradient" and error.module.startswith("model.")
    origin = error.facts[-1]
    assert origin.startswith(SQRT_ORIGIN), origin
    assert "in forward" in origin and "SqrtBackward0" in origin
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))  # the NaN update never happened


def test_an_fp16_backward_fault_with_no_optimizer_is_named_at_its_operation_by_the_next_step():
    model = _fp16_model()
    with guard(model):
        _fp16_backward(model)
        with pytest.raises(GuardError) as caught:
            model(torch.randn(4, 3))  # the next step's forward: nothing looked at the last gradients
    assert caught.value.facts[-1].startswith(SQRT_ORIGIN)


def test_a_grad_scaler_skipping_an_fp16_backward_fault_raises_nothing_and_keeps_nothing():
    model = _fp16_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    with guard(model) as handle:
        with torch.autocast("cpu", dtype=torch.float16):
            loss = model(torch.randn(4, 3)).float().square().mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)  # skipped by the scaler, by design: no alarm
        scaler.update()
        assert all(call.module is None for call in handle._outer_calls)
    assert scaler.get_scale() < 2.0**16


class Amplify(nn.Module):
    """Finite in fp16 forward (|h| * 2000 < 65504); its backward multiplies a gradient of 40 by 2000: Inf in fp16."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x) * 2000.0


def test_an_fp16_overflow_born_in_backward_is_replayed_under_the_autocast_it_ran_under():
    torch.manual_seed(0)
    model = nn.Sequential(Amplify())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with guard(model):
        with torch.autocast("cpu", dtype=torch.float16):
            output = model(torch.randn(4, 3) * 0.1)
        assert output.dtype == torch.float16 and output.isfinite().all()
        (output.float().sum() * 40).backward()  # in fp32 the same backward is finite (80000)
        with pytest.raises(GuardError) as caught:
            optimizer.step()
    origin = caught.value.facts[-1]
    assert any(origin.startswith(f"the operation whose backward made them: {name} at {__file__}:")
               for name in ("Tensor.mul", "Tensor.__mul__")), origin
    assert "MulBackward0" in origin


def test_a_backward_fault_a_grad_scaler_cannot_fix_is_raised_once_its_scale_falls_below_the_floor():
    model = _fp16_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=4 * SCALE_FLOOR)  # halved at each skipped step
    scales = []
    with guard(model):
        with pytest.raises(GuardError) as caught:
            for _ in range(5):
                with torch.autocast("cpu", dtype=torch.float16):
                    loss = model(torch.randn(4, 3)).float().square().mean()
                scaler.scale(loss).backward()
                scales.append(scaler.get_scale())
                scaler.step(optimizer)  # skipped: the gradients hold NaN at every scale
                scaler.update()
                optimizer.zero_grad()
    # skipped silently at 4x and 2x the floor; raised by the forward after the step skipped at the floor
    assert scales == [4 * SCALE_FLOOR, 2 * SCALE_FLOOR, SCALE_FLOOR]
    facts = caught.value.facts
    assert f"a GradScaler skipped the step at scale {SCALE_FLOOR:g}: not finite even scaled down" in facts[-2]
    assert "GradScaler" not in caught.value.advice  # one is in use: the advice is about the operation
    assert facts[-1].startswith(SQRT_ORIGIN)
