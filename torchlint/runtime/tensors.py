"""How the guard reads and prints the tensors of a call."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import torch

# The guard's own reads (metadata in its hooks, values in its finite tests) never pass through its
# function mode, nor a subclass's handler: each torch call it makes there would otherwise be one more
# trip through Python. Not around a replay, whose own mode must see the calls.
own_reads = getattr(torch._C, "DisableTorchFunction", contextlib.nullcontext)
# a replay asked for inside own_reads: its mode must see the calls
function_modes_on = getattr(torch._C, "_EnableTorchFunction", contextlib.nullcontext)


def describe(tensor: Any) -> str:
    """`float32[2, 768, 8, 8] on cpu`: dtype, shape and device in one token."""
    if not hasattr(tensor, "dtype") or not hasattr(tensor, "shape"):
        return type(tensor).__name__
    dtype = str(tensor.dtype).replace("torch.", "")
    return f"{dtype}[{', '.join(str(size) for size in tensor.shape)}] on {tensor.device}"

def has_values(tensor: Any) -> bool:
    """A tensor whose values a check can read: a plain tensor holding data. Not empty, not on the
    meta device, not a tensor subclass (FakeTensor, DTensor: no data here, or reading it means a
    collective), not a torch.func transform's wrapper (`vmap` cannot turn a batch into one `bool`)."""
    return (type(tensor) in PLAIN_TENSOR_TYPES and tensor.numel() > 0 and tensor.device.type != "meta"
            and not torch._C._functorch.is_functorch_wrapped_tensor(tensor))


PLAIN_TENSOR_TYPES = tuple(kind for kind in (torch.Tensor, torch.nn.Parameter, getattr(torch.nn, "Buffer", None))
                           if kind is not None)


def tensors_in(value: Any) -> Iterator[Any]:
    """The tensors of an output: a tensor, or tensors nested in tuples and lists (an RNN's `(out, (h, c))`)."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from tensors_in(item)
