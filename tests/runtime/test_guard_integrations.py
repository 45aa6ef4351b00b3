"""The guard on whole models and in the ways it is switched on: no false alarm over real
training steps, TORCHLINT_GUARD=1 through verify(), torch.compile, Lightning, DDP/Accelerate."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import torchlint.runtime as runtime  # noqa: E402
from torchlint.runtime import GuardCallback, GuardError, guard  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from guard_models import ResNet18, make_encoder, make_resnet, make_tagger, train_steps  # noqa: E402


@pytest.mark.parametrize(
    "make",
    [lambda: make_resnet(batch=4, size=32, width=16), make_encoder, lambda: make_tagger(batch=4, length=12)],
    ids=["resnet18", "transformer-encoder", "lstm-tagger"],
)
def test_no_false_alarm_over_several_training_batches_with_every_check_on_every_step(make):
    torch.manual_seed(0)
    model, batch_for = make()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not even a warning
        with guard(model, first=1000) as handle:
            train_steps(model, batch_for, steps=4)
            model.eval()
            with torch.no_grad():
                inputs, _ = batch_for(99)
                model(*inputs)
    assert handle.step == 5 and handle.values_now


def test_the_guard_stays_out_of_a_compiled_graph_with_a_clear_message():
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(8, 4, 3))
    compiled = torch.compile(model, backend="eager")
    x = torch.randn(2, 3, 16, 16)
    expected = model(x)
    with pytest.warns(UserWarning, match="compiled with torch.compile.*skipped"):
        handle = guard(compiled)
    try:
        assert torch.equal(compiled(x), expected)
        compiled(x).sum().backward()
    finally:
        handle.remove()


@pytest.fixture
def process_guard(monkeypatch, tmp_path):
    from torchlint.runtime import guards

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TORCHLINT_GUARD", "1")
    yield guards
    if guards._PROCESS_GUARD is not None:
        guards._PROCESS_GUARD.remove()
        guards._PROCESS_GUARD = None


def test_torchlint_guard_1_makes_verify_guard_every_module_of_the_process(process_guard):
    runtime.verify()
    installed = process_guard._PROCESS_GUARD
    assert installed is not None
    runtime.verify()
    assert process_guard._PROCESS_GUARD is installed  # once

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(50, 4)

        def forward(self, tokens):
            return self.embed(tokens)

    model = Tagger()
    model(torch.tensor([[1, 2]]))
    with pytest.raises(GuardError) as caught:
        model(torch.tensor([[1, 50]]))
    assert (caught.value.module, caught.value.check) == ("Tagger.embed", "embedding-index")


def test_without_the_variable_verify_installs_nothing(monkeypatch, tmp_path):
    from torchlint.runtime import guards

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TORCHLINT_GUARD", raising=False)
    runtime.verify()
    assert guards._PROCESS_GUARD is None
    nn.Embedding(5, 2)(torch.tensor([1]))


class FakeTrainer:
    """The order in which Lightning's loop calls a callback's hooks, for the plain-class case."""

    def fit(self, module, callback, batches):
        callback.setup(self, module, "fit")
        try:
            for index, (x, y) in enumerate(batches):
                callback.on_train_batch_start(self, module, (x, y), index)
                module.training_step((x, y), index).backward()
        finally:
            callback.teardown(self, module, "fit")


class LitTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 8)
        self.head = nn.Linear(8, 3)

    def forward(self, tokens):
        return self.head(self.embed(tokens))

    def training_step(self, batch, batch_idx):
        tokens, tags = batch
        # two submodule calls per step: steps come from the callback, not from module calls
        logits = self.head(self.embed(tokens))
        return nn.functional.cross_entropy(logits.reshape(-1, 3), tags.reshape(-1)) + 0 * self(tokens).sum()


def _batches(bad_at):
    batches = []
    for step in range(4):
        tokens = torch.randint(0, 20, (2, 5))
        if step == bad_at:
            tokens[0, 0] = 20
        batches.append((tokens, torch.randint(0, 3, (2, 5))))
    return batches


def test_the_callback_drives_the_guard_from_the_training_loop():
    module = LitTagger()
    callback = GuardCallback(first=2, every=0)
    FakeTrainer().fit(module, callback, _batches(bad_at=None))
    assert callback.guard is None and all(not m._forward_pre_hooks for m in module.modules())
    with pytest.raises(GuardError, match="model.embed"):
        FakeTrainer().fit(module, GuardCallback(first=4), _batches(bad_at=1))
    # past the first 2 batches, with every=0, the value checks are off: torch's own error
    with pytest.raises(IndexError):
        FakeTrainer().fit(module, GuardCallback(first=2, every=0), _batches(bad_at=2))


def test_with_lightning_installed_the_callback_is_a_real_lightning_callback(tmp_path):
    lightning = pytest.importorskip("lightning.pytorch")

    class Lit(lightning.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = LitTagger()

        def training_step(self, batch, batch_idx):
            return self.net.training_step(batch, batch_idx)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    assert isinstance(GuardCallback(), lightning.Callback)

    def fit(bad_at):
        trainer = lightning.Trainer(max_epochs=1, callbacks=[GuardCallback()], accelerator="cpu",
                                    logger=False, enable_checkpointing=False, enable_progress_bar=False,
                                    enable_model_summary=False, default_root_dir=tmp_path)
        trainer.fit(Lit(), torch.utils.data.DataLoader(_batches(bad_at), batch_size=None))

    fit(bad_at=None)
    with pytest.raises(GuardError) as caught:
        fit(bad_at=3)
    assert (caught.value.module, caught.value.check) == ("model.net.embed", "embedding-index")


def test_a_ddp_wrapped_model_as_accelerate_prepares_it_is_named_without_module(tmp_path):
    distributed = torch.distributed
    distributed.init_process_group("gloo", init_method=f"file://{tmp_path / 'rendezvous'}", rank=0, world_size=1)
    try:
        wrapped = nn.parallel.DistributedDataParallel(ResNet18(width=8))

        class Accelerator:  # Accelerate's unwrap_model for DDP
            def unwrap_model(self, model):
                return model.module

        for handle in (guard(wrapped), runtime.guard_accelerator(Accelerator(), wrapped)):
            with handle, pytest.raises(GuardError) as caught:
                wrapped(torch.randn(1, 4, 32, 32))
            assert caught.value.module == "model.conv1"
    finally:
        distributed.destroy_process_group()


def test_with_accelerate_installed_a_prepared_model_is_guarded_through_the_accelerator():
    accelerate = pytest.importorskip("accelerate")
    accelerator = accelerate.Accelerator(cpu=True)
    model = accelerator.prepare(nn.Sequential(nn.Embedding(30, 4), nn.Linear(4, 2)))
    with runtime.guard_accelerator(accelerator, model):
        model(torch.tensor([[1, 2]])).sum().backward()
        with pytest.raises(GuardError) as caught:
            model(torch.tensor([[1, 30]]))
    assert (caught.value.module, caught.value.check) == ("model.0", "embedding-index")


def test_accelerates_real_cpu_offload_raises_no_alarm_and_still_checks_at_the_functional_call():
    accelerate = pytest.importorskip("accelerate")

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(30, 8)
            self.conv = nn.Conv1d(8, 8, 3, padding=1)
            self.norm = nn.BatchNorm1d(8)
            self.head = nn.Linear(8, 3)

        def forward(self, tokens):
            x = self.norm(self.conv(self.embed(tokens).transpose(1, 2)))
            return self.head(x.mean(-1))

    torch.manual_seed(0)
    model = Net()
    tokens = torch.randint(0, 30, (4, 6))
    expected = model.eval()(tokens)
    accelerate.cpu_offload(model, execution_device=torch.device("cpu"))
    assert model.conv.weight.device.type == "meta"  # in the pre-hook the weights are still on meta
    with warnings.catch_warnings():
        warnings.simplefilter("error", runtime.GuardWarning)
        with guard(model, first=10**9):
            for _ in range(3):
                with torch.no_grad():
                    assert torch.allclose(model(tokens), expected)
            model.train()
            model(tokens).square().mean().backward()
            model.eval()
            with pytest.raises(GuardError) as caught:
                model(torch.tensor([[1, 30]]))
    assert (caught.value.module, caught.value.check) == ("model.embed", "embedding-index")
    assert model.conv.weight.device.type == "meta"  # offloaded again after each call


def test_torchs_graph_capture_beside_the_guard_works_where_docs_guard_md_says_and_fails_where_it_says():
    model = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    x = torch.randn(2, 3)
    with guard(model):
        assert torch.jit.trace(model, x)(x).shape == (2, 3)
        exported = torch.export.export(model, (x,), strict=True)
        with pytest.raises(Exception):  # TorchScript compiles a module's hooks: the guard's are Python
            torch.jit.script(model)
    assert torch.allclose(exported.module()(x), model(x))
    process = guard(None)
    try:
        assert torch.allclose(torch.jit.script(model)(x), model(x))  # the process guard hooks no module itself
        torch.export.export(model, (x,), strict=False)
        with pytest.raises(Exception, match="marked as skipped"):  # any global module hook: a torch limit
            torch.export.export(model, (x,), strict=True)
    finally:
        process.remove()
