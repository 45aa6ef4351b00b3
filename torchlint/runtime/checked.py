"""The outputs already found finite on this step, so that a tensor is read once while it is unchanged.

A module often returns what its last child returned (a residual block its last ReLU's output, a
`Sequential` its last block's): on a ResNet-18 a third of the elements the finite checks read were
the same tensor again. A tensor is known by its identity (a weak reference, so a freed tensor's
reused `id` never matches) and its version counter, which every in-place operation bumps, through
views and `detach()` too. Some writes bypass the counter: through `.data`, a NumPy array or a
DLPack capsule sharing the storage, a raw pointer. Torch hands each of the calls that expose the
storage so to the guard's function mode, which then forgets every tensor (`exposes_storage`);
tensors without a counter (made under `torch.inference_mode()`) are read every time.

Cost: O(1) per tensor (a dictionary look-up and a weak reference); at most `LIMIT` entries.
"""

from __future__ import annotations

import weakref
from typing import Any, Dict, Optional, Tuple

import torch

LIMIT = 4096

_STORAGE_EXPOSED = frozenset(function for function in (
    getattr(torch.Tensor, "numpy", None), getattr(torch.Tensor, "__array__", None),
    getattr(torch.Tensor, "untyped_storage", None), getattr(torch.Tensor, "storage", None),
    getattr(torch.Tensor, "_typed_storage", None), getattr(torch.Tensor, "data_ptr", None),
    getattr(torch.Tensor, "__dlpack__", None), getattr(torch, "from_numpy", None),
    getattr(torch, "frombuffer", None), getattr(torch, "from_dlpack", None), getattr(torch, "as_tensor", None),
    getattr(torch, "asarray", None),
) if function is not None)
_DATA = torch._C.TensorBase.data  # `x.data` reaches the mode as this descriptor's `__get__`


def exposes_storage(func: Any) -> bool:
    """Whether a call seen by the function mode lets code write a tensor's data without bumping its version."""
    return func in _STORAGE_EXPOSED or getattr(func, "__self__", None) is _DATA


def _version(tensor: Any) -> Optional[int]:
    try:
        return tensor._version
    except RuntimeError:  # an inference tensor: no version counter
        return None


class CheckedTensors:
    """Tensors found finite on this step; `unchanged(t)` when `t` is one of them and was not written since."""

    def __init__(self) -> None:
        self._seen: Dict[int, Tuple[Any, int]] = {}

    def unchanged(self, tensor: Any) -> bool:
        entry = self._seen.get(id(tensor))
        return entry is not None and entry[0]() is tensor and entry[1] == _version(tensor)

    def add(self, tensor: Any) -> None:
        version = _version(tensor)
        if version is None:
            return
        if len(self._seen) >= LIMIT:
            self._seen.clear()
        self._seen[id(tensor)] = (weakref.ref(tensor), version)

    def forget(self) -> None:
        self._seen.clear()
