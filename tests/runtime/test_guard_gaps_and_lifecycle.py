"""What the guard once left unchecked or left behind (issue 35, items 9-13): optimizer closures,
torch.compile after the guard, NaN born in the loss named at its operation, a failed Lightning fit,
torch's own errors passing through the function mode."""

from __future__ import annotations

import sys
import traceback

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from torchlint.runtime import GuardCallback, GuardError, guard  # noqa: E402

import backward_faults  # noqa: E402
from backward_faults import LogOfZero, SqrtOfZero  # noqa: E402


@pytest.mark.parametrize("optimizer_class", [torch.optim.SGD, torch.optim.LBFGS])
def test_a_label_out_of_range_inside_an_optimizer_closure_is_caught(optimizer_class):
    model = nn.Linear(4, 3)
    optimizer = optimizer_class(model.parameters(), lr=0.1)
    labels = torch.tensor([0, 3])

    def closure():
        optimizer.zero_grad()
        loss = F.cross_entropy(model(torch.randn(2, 4)), labels)
        loss.backward()
        return loss

    with guard(model) as handle:
        with pytest.raises(GuardError) as caught:
            optimizer.step(closure)
        assert torch.overrides._get_current_function_mode_stack() == [handle._mode]
        labels[1] = 2
        optimizer.step(closure)  # healthy: passes, and the mode is back on after step()
        assert torch.overrides._get_current_function_mode_stack() == [handle._mode]
    assert caught.value.check == "class-target"


def test_nan_born_in_the_loss_backward_is_named_at_its_operation_and_line():
    model = nn.Sequential(nn.Linear(4, 3), nn.Softmax(-1))
    with guard(model):
        p = model(torch.randn(2, 4) * 1e4)  # saturated: some probabilities are exactly 0
        loss = -torch.log(p).clamp(min=-100).mean()  # finite forward, 0/0 in LogBackward0
        with pytest.raises(GuardError) as caught:
            loss.backward()
    error = caught.value
    assert (error.module, error.check) == ("torch.log", "finite-op")
    assert "LogBackward0" in str(error)
    assert f"{__file__}:" in error.kind and "test_nan_born_in_the_loss_backward" in error.kind


@pytest.mark.parametrize(("block", "operation", "node"), [(SqrtOfZero, "torch.sqrt", "SqrtBackward0"),
                                                         (LogOfZero, "torch.log", "LogBackward0")])
def test_nan_born_in_a_modules_backward_is_named_at_its_operation_and_line(block, operation, node):
    torch.manual_seed(0)
    model, x = nn.Sequential(nn.Linear(3, 3), block(), nn.Linear(3, 2)), torch.randn(4, 3)
    model(x).square().mean().backward()
    unguarded = model[2].weight.grad.clone()  # reached before the fault
    model.zero_grad(set_to_none=True)
    with guard(model):
        loss = model(x).square().mean()
        with pytest.raises(GuardError) as caught:
            loss.backward()
    error = caught.value
    assert error.check == "finite-gradient" and error.module.startswith("model.")
    origin = error.facts[-1]
    assert origin.startswith(f"the operation whose backward made them: {operation} at {backward_faults.__file__}:")
    assert "in forward" in origin and node in origin
    assert torch.equal(model[2].weight.grad, unguarded)  # the replay accumulated no gradient


class Checkpointed(nn.Module):
    """A block run through torch.utils.checkpoint, with the sqrt inside it or after it."""

    def __init__(self, reentrant, sqrt_inside):
        super().__init__()
        self.fc, self.reentrant, self.sqrt_inside = nn.Linear(3, 3), reentrant, sqrt_inside

    def block(self, h):
        return torch.sqrt(h - h) + h if self.sqrt_inside else torch.tanh(h)

    def forward(self, x):
        h = torch.utils.checkpoint.checkpoint(self.block, self.fc(x), use_reentrant=self.reentrant)
        return h if self.sqrt_inside else torch.sqrt(h - h) + h


@pytest.mark.parametrize(("reentrant", "sqrt_inside"), [(False, True), (True, False), (True, True)])
def test_backward_origin_through_gradient_checkpointing(reentrant, sqrt_inside):
    torch.manual_seed(0)
    model, x = nn.Sequential(nn.Linear(3, 3), Checkpointed(reentrant, sqrt_inside), nn.Linear(3, 2)), torch.randn(4, 3)
    model(x).square().mean().backward()
    unguarded = model[2].weight.grad.clone()
    model.zero_grad(set_to_none=True)
    with guard(model) as handle:
        loss = model(x).square().mean()
        with pytest.raises(GuardError) as caught:
            loss.backward()
        assert torch.overrides._get_current_function_mode_stack() == [handle._mode]  # the replay left no mode on
    origin = caught.value.facts[-1]
    # inside a reentrant block too: the recomputed forward that its backward runs is hooked
    where = "in block" if sqrt_inside else "in forward"
    assert origin.startswith(f"the operation whose backward made them: torch.sqrt at {__file__}:") and where in origin
    assert torch.equal(model[2].weight.grad, unguarded)  # a replay's backward accumulated nothing


def test_under_the_process_guard_a_model_called_with_keywords_is_replayed_with_them():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = SqrtOfZero()

        def forward(self, *, features):  # as Hugging Face models are called: by keyword
            return self.block(features)

    model = Model()
    handle = guard(None)
    try:
        loss = model(features=torch.randn(2, 3)).sum()
        with pytest.raises(GuardError) as caught:
            loss.backward()
    finally:
        handle.remove()
    assert caught.value.module == "Model.block.fc.bias"
    assert caught.value.facts[-1].startswith(
        f"the operation whose backward made them: torch.sqrt at {backward_faults.__file__}:")


def test_a_healthy_step_after_a_backward_fault_keeps_nothing_of_it():
    model = nn.Sequential(nn.Linear(3, 3), SqrtOfZero())
    with guard(model) as handle:
        with pytest.raises(GuardError):
            model(torch.randn(2, 3)).sum().backward()
        model[1].forward = lambda x: x  # healed: the same model, no sqrt
        model(torch.randn(2, 3)).sum().backward()
        assert all(call.module is None for call in handle._outer_calls)  # released when backward ended


def test_nan_made_inside_a_module_is_named_at_the_operation_that_made_it():
    class Entropy(nn.Module):
        def forward(self, p):
            logp = torch.log(p)
            return -(p * logp).sum(-1)

    model = nn.Sequential(nn.Identity(), Entropy())
    with guard(model):
        with pytest.raises(GuardError) as caught:
            model(torch.tensor([[0.5, 0.5], [1.0, 0.0]]))
    text = str(caught.value)
    assert caught.value.module == "model.1" and "aten.mul" in text
    assert "test_guard_gaps_and_lifecycle.py" in text and "in forward" in text


def test_torch_errors_passing_through_the_guard_say_they_are_torchs_own():
    model = nn.Linear(4, 3)
    with guard(model):
        with pytest.raises(RuntimeError) as caught:
            torch.randn(2, 3) @ torch.randn(4, 3)
    assert not isinstance(caught.value, GuardError)
    if sys.version_info >= (3, 11):
        notes = " ".join(caught.value.__notes__)
        assert "torch's own" in notes and f"{__file__}:" in notes
    assert "torchlint" in "".join(traceback.format_exception(caught.value))


def test_dynamo_compiles_no_frame_of_the_guard_where_a_model_graph_breaks():
    import logging

    class Breaking(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 2)

        def forward(self, x):
            x = self.a(x)
            torch._dynamo.graph_break()
            return self.b(x)

    traced = []

    class Record(logging.Handler):
        def emit(self, record):
            traced.append(record.getMessage())

    torch._dynamo.reset()
    model = Breaking()
    handler, logger = Record(), logging.getLogger("torch._dynamo")
    torch._logging.set_logs(dynamo=logging.INFO)
    logger.addHandler(handler)
    try:
        with guard(model):
            compiled = torch.compile(model, backend="eager")
            with pytest.warns(UserWarning, match="compiled with torch.compile"):  # compiling after guarding
                compiled(torch.randn(2, 4)).sum().backward()
    finally:
        logger.removeHandler(handler)
        torch._logging.set_logs()
    started = [message for message in traced if "start tracing" in message]
    assert started and not [message for message in started if "torchlint" in message]


def test_guard_callback_removes_everything_after_a_failed_fit():
    lightning = pytest.importorskip("lightning.pytorch")
    from torch.optim.optimizer import _global_optimizer_pre_hooks

    class Failing(lightning.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = nn.Linear(4, 3)

        def training_step(self, batch, batch_idx):
            x, y = batch
            return F.cross_entropy(self.layer(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    data = torch.utils.data.TensorDataset(torch.randn(8, 4), torch.tensor([0, 1, 2, 3] * 2))  # 3 == classes
    hooks_before = len(_global_optimizer_pre_hooks)
    for _ in range(2):
        trainer = lightning.Trainer(max_epochs=1, accelerator="cpu", logger=False, enable_checkpointing=False,
                                    enable_progress_bar=False, enable_model_summary=False,
                                    callbacks=[GuardCallback()])
        with pytest.raises(GuardError, match="class-target"):  # inside Lightning's optimizer closure
            trainer.fit(Failing(), torch.utils.data.DataLoader(data, batch_size=4))
        assert torch.overrides._get_current_function_mode_stack() == []
        assert len(_global_optimizer_pre_hooks) == hooks_before



@pytest.mark.parametrize("layout", ["padded", "concatenated"])
def test_a_ctc_target_that_cannot_fit_its_input_is_named_before_the_inf_loss(layout):
    model = nn.Sequential(nn.Conv1d(20, 12, 3, stride=2, padding=1))  # halves the frames
    ctc = nn.CTCLoss(blank=0)
    targets = torch.tensor([[1, 2, 3, 4, 5, 6], [1, 1, 2, 3, 0, 0]])
    lengths = torch.tensor([6, 4])
    flat = torch.cat([targets[0, :6], targets[1, :4]])
    with guard(model):
        log_probs = model(torch.randn(2, 20, 12)).permute(2, 0, 1).log_softmax(-1)  # 6 frames each
        given = targets if layout == "padded" else flat
        assert torch.isfinite(ctc(log_probs, given, torch.tensor([6, 6]), lengths))  # 6 fit 6; 1,1,2,3 needs 5
        with pytest.raises(GuardError) as caught:
            ctc(log_probs, given, torch.tensor([6, 4]), lengths)  # 4 frames cannot hold 1,1,2,3 (needs 5)
    assert torch.isinf(ctc(log_probs.detach(), given, torch.tensor([6, 4]), lengths))  # what it would have been
    error = caught.value
    assert (error.module, error.check) == ("F.ctc_loss", "ctc-lengths")
    assert "sample 1: 4 input frames" in str(error) and "needing 5" in str(error)
