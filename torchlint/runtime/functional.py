"""Functional calls (`F.cross_entropy`, `torch.gather`, `x.index_select`, `F.conv2d`) checked through a TorchFunctionMode.

A module's forward pre-hook sees the module's input; the calls a forward makes with
functions and tensor methods are seen here. The table maps each checked function to its
family, its printed name and the check that reads its arguments.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Sequence

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from torchlint.runtime.checked import exposes_storage
from torchlint.runtime.errors import GuardError
from torchlint.runtime.indices import (check_class_targets, check_ctc_lengths, check_dim_indices, check_embedding,
                                      check_probabilities)
from torchlint.runtime.layers import check_conv
from torchlint.runtime.origin import call_name, source_line

Check = Callable[[Any, str, str, Sequence[Any], Mapping[str, Any]], None]


@dataclass(frozen=True)
class Entry:
    family: str
    name: str
    check: Check


def _arg(args: Sequence[Any], kwargs: Mapping[str, Any], position: int, name: str, default: Any = None) -> Any:
    if len(args) > position:
        return args[position]
    return kwargs.get(name, default)


def _conv(dims: int, transposed: bool) -> Check:
    def check(guard, where, kind, args, kwargs):
        check_conv(guard, where, kind, _arg(args, kwargs, 0, "input"), _arg(args, kwargs, 1, "weight"),
                   _arg(args, kwargs, 6, "groups", 1), transposed, dims)
    return check


def _embedding(guard, where, kind, args, kwargs):
    weight = _arg(args, kwargs, 1, "weight")
    if isinstance(weight, torch.Tensor) and weight.dim() == 2:
        check_embedding(where, kind, _arg(args, kwargs, 0, "input"), weight.shape[0])


def _dim_index(guard, where, kind, args, kwargs):
    check_dim_indices(where, kind, _arg(args, kwargs, 0, "input"), _arg(args, kwargs, 1, "dim"),
                      _arg(args, kwargs, 2, "index"))


def _class_targets(guard, where, kind, args, kwargs):
    check_class_targets(where, kind, _arg(args, kwargs, 0, "input"), _arg(args, kwargs, 1, "target"),
                        _arg(args, kwargs, 4, "ignore_index", -100))


def _probabilities(guard, where, kind, args, kwargs):
    check_probabilities(where, kind, _arg(args, kwargs, 0, "input"))


def _ctc_lengths(guard, where, kind, args, kwargs):
    if not _arg(args, kwargs, 6, "zero_infinity", False):
        check_ctc_lengths(where, kind, _arg(args, kwargs, 1, "targets"), _arg(args, kwargs, 2, "input_lengths"),
                          _arg(args, kwargs, 3, "target_lengths"))


def build_table(families: Sequence[str]) -> Dict[Any, Entry]:
    """The checked functions of the enabled families, keyed by the function object the mode receives."""
    entries = []
    for dims in (1, 2, 3):
        for function in _torch_function(f"conv{dims}d"):
            entries.append((function, "conv", f"F.conv{dims}d", _conv(dims, False)))
        for function in _torch_function(f"conv_transpose{dims}d"):
            entries.append((function, "conv", f"F.conv_transpose{dims}d", _conv(dims, True)))
    entries += [
        (F.embedding, "index", "F.embedding", _embedding),
        (F.embedding_bag, "index", "F.embedding_bag", _embedding),
        (F.cross_entropy, "index", "F.cross_entropy", _class_targets),
        (F.nll_loss, "index", "F.nll_loss", _class_targets),
        (F.binary_cross_entropy, "index", "F.binary_cross_entropy", _probabilities),
        (F.ctc_loss, "index", "F.ctc_loss", _ctc_lengths),
    ]
    for name in ("gather", "index_select", "scatter", "scatter_add", "scatter_reduce", "index_add",
                 "index_copy", "index_fill"):
        for variant in (name, name + "_"):
            entries += [(function, "index", f"torch.{variant}", _dim_index) for function in _torch_function(variant)]
            function = getattr(torch.Tensor, variant, None)
            if function is not None:
                entries.append((function, "index", f"Tensor.{variant}", _dim_index))
    return {function: Entry(family, name, check) for function, family, name, check in entries if family in families}


def _torch_function(name: str) -> Sequence[Any]:
    """What the mode receives for `torch.<name>`: torch's builtin, and the function now at `torch.<name>` when
    a library replaced it (torch_geometric wraps `torch.index_select`; its wrapper calls the builtin)."""
    found = [getattr(torch._C._VariableFunctions, name, None), getattr(torch, name, None)]
    return [function for index, function in enumerate(found) if function is not None and function not in found[:index]]


class FunctionalChecks(TorchFunctionMode):
    """Hands each checked call to the guard before running it; every other call runs untouched.

    On a value-check step the guard also sees every call made outside its modules (the loss),
    and the call through which a GradScaler tests the gradients (`guard.scaler_checks_gradients`).
    """

    def __init__(self, guard: Any, table: Mapping[Any, Entry]) -> None:
        super().__init__()
        self.guard = guard
        self.table = table

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        guard = self.guard
        entry = self.table.get(func)
        if entry is not None:
            guard.check_call(entry, args, kwargs)
        elif func is _SCALER_CHECK:  # (grads, found_inf, inv_scale)
            guard.scaler_checks_gradients(args[2] if len(args) > 2 else kwargs.get("inv_scale"))
        elif exposes_storage(func):
            guard.storage_exposed()
        try:
            result = func(*args, **kwargs)
        except Exception as error:
            _note_passed_through(error, func)
            raise
        if guard.watches_calls():
            guard.watch_call(call_name(func), args, kwargs, result)
        return result

    # the mode's place on torch's per-thread stack of function modes -----------------------------
    def on_top(self) -> bool:
        stack = torch.overrides._get_current_function_mode_stack()
        return bool(stack) and stack[-1] is self

    def leave(self) -> None:
        """Take the mode off the stack wherever it is, keeping the modes entered after it."""
        stack = torch.overrides._get_current_function_mode_stack()
        if not any(mode is self for mode in stack):
            return
        above = []
        while not self.on_top():
            above.append(torch._C._pop_torch_function_stack())
        self.__exit__(None, None, None)
        for mode in reversed(above):
            torch._C._push_on_torch_function_stack(mode)


_SCALER_CHECK = getattr(torch, "_amp_foreach_non_finite_check_and_unscale_", None)


def _note_passed_through(error: BaseException, func: Any) -> None:
    # torch's own error raised in a call the mode passed on: the traceback's last frame is the
    # mode's, so say plainly that the error is torch's and where the call came from
    if isinstance(error, GuardError) or not hasattr(error, "add_note"):
        return
    if any("torchlint guard:" in note for note in getattr(error, "__notes__", ())):
        return
    error.add_note(f"torchlint guard: this error is torch's own, raised by {call_name(func)} called at "
                   f"{source_line()}. The guard only passed the call on (the frame in "
                   "torchlint/runtime/functional.py above it); it found nothing wrong before the call.")
