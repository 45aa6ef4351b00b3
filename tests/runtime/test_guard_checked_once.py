"""The finite checks read a tensor once while it is unchanged (a block's output is its last layer's),
and still catch a NaN written into it afterwards, whichever way it is written: real torch on CPU."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from torchlint.runtime import GuardError, guard  # noqa: E402

NAN = float("nan")


def _data_write(y):
    y.data[0, 0] = NAN


def _view_write_without_grad(y):
    with torch.no_grad():
        y[0, :1].fill_(NAN)


def _detached_write(y):
    y.detach()[0, 0] = NAN


def _numpy_write(y):
    y.detach().numpy()[0, 0] = NAN


def _dlpack_write(y):
    torch.from_dlpack(y.detach())[0, 0] = NAN


def _storage_write(y):
    torch.tensor([], dtype=y.dtype).set_(y.untyped_storage())[0] = NAN


WRITES = [_data_write, _view_write_without_grad, _detached_write, _numpy_write, _dlpack_write, _storage_write]


class WritesAfterItsChild(nn.Module):
    """Returns its child's output, written with a NaN after the child returned (and was checked)."""

    def __init__(self, write):
        super().__init__()
        self.inner = nn.Linear(4, 4)
        self.write = write

    def forward(self, x):
        y = self.inner(x)
        self.write(y)
        return y


@pytest.mark.parametrize("write", WRITES, ids=[write.__name__.strip("_") for write in WRITES])
def test_a_nan_written_into_a_checked_output_is_caught_at_the_module_that_wrote_it(write):
    model = WritesAfterItsChild(write)
    with guard(model):
        with pytest.raises(GuardError) as caught:
            model(torch.randn(2, 4))
    assert (caught.value.module, caught.value.check) == ("model", "finite-output")
    assert "1 NaN" in str(caught.value)


def test_a_nan_written_in_place_under_inference_mode_is_caught():
    # tensors made under inference_mode have no version counter: they are read every time
    model = WritesAfterItsChild(lambda y: y.add_(torch.tensor(NAN)))
    with guard(model), torch.inference_mode():
        with pytest.raises(GuardError) as caught:
            model(torch.randn(2, 4))
    assert (caught.value.module, caught.value.check) == ("model", "finite-output")


class _CountSums(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.sums = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.sums += func.overloadpacket is torch.ops.aten.sum
        return func(*args, **(kwargs or {}))


def _sums_in_a_guarded_forward(model):
    with guard(model), _CountSums() as counter, torch.no_grad():
        model(torch.randn(2, 4))
    return counter.sums


@pytest.mark.parametrize("depth", [1, 4])
def test_an_output_returned_by_every_enclosing_module_is_read_once(depth):
    model = nn.Linear(4, 4)
    for _ in range(depth):
        model = nn.Sequential(model)
    assert _sums_in_a_guarded_forward(model) == 1


def test_an_output_changed_in_place_is_read_again():
    class AddsInPlace(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Linear(4, 4)

        def forward(self, x):
            return self.inner(x).mul_(2)

    assert _sums_in_a_guarded_forward(nn.Sequential(AddsInPlace())) == 2
