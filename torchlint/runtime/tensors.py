"""How the guard reads and prints the tensors of a call."""

from __future__ import annotations

from typing import Any, Iterator

import torch

def describe(tensor: Any) -> str:
    """`float32[2, 768, 8, 8] on cpu`: dtype, shape and device in one token."""
    if not hasattr(tensor, "dtype") or not hasattr(tensor, "shape"):
        return type(tensor).__name__
    dtype = str(tensor.dtype).replace("torch.", "")
    return f"{dtype}[{', '.join(str(size) for size in tensor.shape)}] on {tensor.device}"

def has_values(tensor: Any) -> bool:
    """A tensor whose values a check can read: not empty, not on the meta device (shapes only)."""
    return isinstance(tensor, torch.Tensor) and tensor.numel() > 0 and tensor.device.type != "meta"


def tensors_in(value: Any) -> Iterator[Any]:
    """The tensors of an output: a tensor, or tensors nested in tuples and lists (an RNN's `(out, (h, c))`)."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from tensors_in(item)
