"""Healthy code the guard once raised on (issue 35, items 1-8), and the opt-outs: each case a real torch run on CPU."""

from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from torchlint.runtime import GuardError, GuardWarning, guard  # noqa: E402

EVERY_STEP = 10**9


class ShiftedPositions(nn.Embedding):
    """BART's learned positional embedding: the table is indexed by positions, not by the ids it is given."""

    def __init__(self, positions: int, dim: int) -> None:
        super().__init__(positions + 2, dim)

    def forward(self, input_ids):
        return super().forward(torch.arange(input_ids.shape[1]).expand(input_ids.shape[0], -1) + 2)


class CoordConv(nn.Conv2d):
    """Adds two coordinate channels to its input before the convolution."""

    def forward(self, x):
        b, _, h, w = x.shape
        ys = torch.linspace(-1, 1, h).view(1, 1, h, 1).expand(b, 1, h, w)
        xs = torch.linspace(-1, 1, w).view(1, 1, 1, w).expand(b, 1, h, w)
        return super().forward(torch.cat([x, ys, xs], 1))


def test_an_embedding_subclass_is_checked_on_the_indices_its_forward_uses():
    model = nn.Sequential()
    model.add_module("pos", ShiftedPositions(8, 4))
    with guard(model, first=EVERY_STEP):
        model(torch.full((2, 8), 50_000))  # token ids far beyond the table: not what it indexes with
        with pytest.raises(GuardError) as caught:
            model(torch.zeros(2, 9, dtype=torch.long))  # 9 positions + 2 > 10 rows: a real overflow
    assert (caught.value.module, caught.value.check) == ("model.pos", "embedding-index")


def test_a_conv_subclass_is_checked_on_the_tensor_its_forward_convolves():
    model = nn.Sequential(CoordConv(5, 4, 3))
    with guard(model):
        model(torch.randn(2, 3, 8, 8))
        with pytest.raises(GuardError) as caught:
            model(torch.randn(2, 4, 8, 8))
    assert (caught.value.module, caught.value.check) == ("model.0", "conv-channels")
    assert "F.conv2d in CoordConv" in str(caught.value)


def test_offloaded_weights_still_on_meta_in_the_pre_hook_are_not_a_device_error():
    conv = nn.Conv2d(3, 4, 3)
    weights = {name: parameter.detach().clone() for name, parameter in conv.named_parameters()}
    conv.to("meta")
    stock_forward = conv.forward

    def offloaded_forward(x):  # what Accelerate's cpu_offload hook does: the weights arrive inside forward
        for name, value in weights.items():  # all of them: a bias left on meta would add uninitialised memory
            setattr(conv, name, nn.Parameter(value))
        return stock_forward(x)

    conv.forward = offloaded_forward
    with guard(conv):
        assert conv(torch.randn(1, 3, 8, 8)).shape == (1, 4, 6, 6)
        with pytest.raises(GuardError) as caught:
            conv(torch.randn(1, 5, 8, 8))  # still checked, at the call that has the weights
    assert caught.value.check == "conv-channels"


def test_minus_inf_masked_logits_are_a_value_and_nan_is_still_a_fault():
    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = nn.Linear(4, 5)

        def forward(self, x, mask):
            return self.head(x).masked_fill(~mask, float("-inf"))

    model = Policy()
    mask = torch.tensor([[True, True, False, True, False]] * 2)
    with guard(model, first=EVERY_STEP):
        logits = model(torch.randn(2, 4), mask)
        distribution = torch.distributions.Categorical(logits=logits)
        (-distribution.log_prob(distribution.sample()).mean() - 0.01 * distribution.entropy().mean()).backward()
        with pytest.raises(GuardError) as caught:
            model(torch.randn(2, 4), mask).softmax(-1).log().mul(0).sum().backward()
    assert caught.value.check == "finite-op"


def test_fp16_overflow_steps_that_the_grad_scaler_skips_are_not_reported():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**40)  # overflows in fp16 until it has backed off
    with guard(model, first=EVERY_STEP):
        for _ in range(3):
            with torch.autocast("cpu", dtype=torch.float16):
                loss = model(torch.randn(3, 4)).float().square().mean()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
        assert scaler.get_scale() < 2.0**40  # the scaler did skip steps
        with torch.autocast("cpu", dtype=torch.float16):
            loss = model(torch.randn(3, 4)).float().square().mean()
        (loss * 2.0**40).backward()  # the same overflow without a scaler: reported before the update
        with pytest.raises(GuardError, match="finite-"):
            optimizer.step()


def test_torch_func_per_sample_gradients_fake_tensors_and_lazy_modules():
    from torch.func import functional_call, grad, vmap
    from torch._subclasses.fake_tensor import FakeTensorMode

    from torchlint.runtime.guards import Guard

    model = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 3))
    parameters = {name: p.detach() for name, p in model.named_parameters()}

    def loss(params, tokens, label):
        return F.cross_entropy(functional_call(model, params, (tokens.unsqueeze(0),)).sum(1), label.unsqueeze(0))

    with guard(model, first=EVERY_STEP):
        per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(
            parameters, torch.randint(0, 10, (5, 3)), torch.randint(0, 3, (5,)))
        assert per_sample["1.weight"].shape == (5, 3, 4)
        with FakeTensorMode(allow_non_fake_inputs=True) as fake:
            model(fake.from_tensor(torch.randint(0, 10, (2, 3))))
    lazy = nn.Sequential(nn.LazyLinear(3), nn.Linear(3, 1))
    process_guard = Guard(None).install()
    try:
        lazy(torch.randn(2, 5)).sum().backward()
        lazy[0].weight.backward(torch.full_like(lazy[0].weight, float("nan")))
    except GuardError as error:
        assert error.check == "finite-gradient" and error.module.endswith("0.weight")
    else:
        pytest.fail("the lazy module's parameters are watched once they exist")
    finally:
        process_guard.remove()


def test_skip_opts_a_module_subtree_or_a_call_out_of_named_checks():
    model = nn.Sequential()
    model.add_module("pos", nn.Embedding(4, 2))
    model.add_module("head", nn.Linear(2, 3))
    ids = torch.tensor([[1, 4]])
    with guard(model, skip={"model.pos": ["embedding-index"], "F.cross_entropy": ["index"]}):
        with pytest.raises(IndexError):  # skipped by the guard, so torch's own error
            model(ids)
        with pytest.raises(IndexError):
            F.cross_entropy(torch.randn(2, 3), torch.tensor([0, 3]))
    with guard(model, skip={"model.head": "*"}):
        with pytest.raises(GuardError, match="embedding-index"):
            model(ids)
    with pytest.raises(ValueError, match="unknown check 'embedding'"):
        guard(model, skip={"model.pos": ["embedding"]})


def test_guard_warning_is_exported_and_compiling_under_a_guard_says_so():
    model = nn.Sequential(nn.Linear(4, 4))
    with guard(model):
        compiled = torch.compile(model, backend="eager")
        with pytest.warns(GuardWarning, match="compiled with torch.compile"):
            compiled(torch.randn(2, 4))


def _sync_batch_norm_rank(rank: int, world: int, port: int, results) -> None:
    torch.distributed.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                         world_size=world)
    try:
        model = nn.Sequential(nn.SyncBatchNorm(3))
        with guard(model):
            try:
                model(torch.randn(1, 3))  # one value per channel on this rank, two across the group
            except GuardError as error:
                results.put((rank, "GuardError", error.check))
            except Exception as error:  # torch itself: SyncBatchNorm runs on accelerators only
                results.put((rank, type(error).__name__, str(error)[:80]))
            else:
                results.put((rank, "ok", ""))
    finally:
        torch.distributed.destroy_process_group()


@pytest.mark.slow
def test_sync_batch_norm_with_one_value_per_rank_across_two_ranks_is_left_to_torch():
    import socket

    import torch.multiprocessing as mp

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    context = mp.get_context("spawn")
    results = context.Queue()
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    processes = [context.Process(target=_sync_batch_norm_rank, args=(rank, 2, port, results)) for rank in range(2)]
    for process in processes:
        process.start()
    outcomes = sorted(results.get(timeout=300) for _ in processes)
    for process in processes:
        process.join(timeout=60)
    assert all(kind != "GuardError" for _, kind, _ in outcomes), outcomes
