"""Where NaN is born: the first operation whose output turns non-finite, with its source line.

Two ways, both paid for only where they are needed:

- Inside a module, nothing is recorded on a healthy step. When a module's output is found
  holding NaN/+Inf from finite inputs, its forward is replayed on the same inputs under a
  TorchDispatchMode that tests every operation's output (no gradient, the RNG state and the
  module's buffers restored afterwards); the first operation that turns finite inputs into
  NaN/+Inf is named with the line that called it.
- Outside the modules (the loss, code between model and `backward()`), the function mode
  hands each call of a value-check step to `watch_call`: its output is tested at once
  (forward), and its autograd node gets a hook that tests the gradient it computes
  (backward: `LogBackward0` turning a finite gradient into Inf at `log(0)`), so the
  operation is named where `torch.autograd.detect_anomaly` would name it, without
  recording a traceback for every node.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Optional

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from torchlint.runtime.errors import GuardError
from torchlint.runtime.finite import ADVICE_MADE_HERE, counts, faulty_value, non_finite
from torchlint.runtime.tensors import describe, tensors_in

# torch's frames and the guard's own
_SKIPPED_DIRS = (os.path.dirname(torch.__file__) + os.sep, os.path.dirname(os.path.abspath(__file__)) + os.sep)


def source_line() -> str:
    """`train.py:42 in loss_fn`: the innermost caller outside torch and torchlint."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_SKIPPED_DIRS):
        frame = frame.f_back
    if frame is None:
        return "an unknown line"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"


class _FirstFaultyOperation(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.found: Optional[str] = None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if self.found is None and any(faulty_value(t) for t in tensors_in(out)):
            if not any(faulty_value(t) for t in tensors_in(list(args) + list((kwargs or {}).values()))):
                self.found = f"{func} at {source_line()}"
        return out


def replay_forward(module: Any, args: tuple, kwargs: dict) -> str:
    """Run `module`'s forward again on the same inputs and name the first operation that makes NaN/+Inf."""
    buffers = {name: buffer.detach().clone() for name, buffer in module.named_buffers()}
    tracer = _FirstFaultyOperation()
    try:
        with torch.random.fork_rng(devices=[]), torch.no_grad(), tracer:
            module.forward(*args, **kwargs)
    except Exception as error:  # the replay is a diagnosis: it never replaces the finding
        return f"(a replay of its forward to find the operation failed: {type(error).__name__})"
    finally:
        with torch.no_grad():
            for name, buffer in module.named_buffers():
                if name in buffers:
                    buffer.copy_(buffers[name])
    if tracer.found is None:
        return "a replay of its forward on the same input did not make them again (a random draw?)"
    return f"the first operation that made them: {tracer.found}"


def watch_call(name: str, args: tuple, kwargs: dict, result: Any, report: Callable[[GuardError], None]) -> None:
    """Test a call made outside the modules whose output will be differentiated: the output now, the
    gradient its backward computes when it runs (`report` decides what a backward finding does)."""
    outputs = [t for t in tensors_in(result) if t.is_floating_point() and t.requires_grad]
    if not outputs:
        return
    line = source_line()
    bad = next((t for t in outputs if faulty_value(t)), None)
    if bad is not None:
        inputs = list(tensors_in(list(args) + list(kwargs.values())))
        if inputs and not any(faulty_value(t) for t in inputs):
            facts = [f"output: {describe(bad)}: {counts(bad)}",
                     "its inputs held no NaN/+Inf: this operation made them (forward)"]
            held = next((t for t in inputs if t.is_floating_point() and non_finite(t)), None)
            if held is not None:
                facts.append(f"from the -Inf its input held ({describe(held)}: {counts(held)}): a log of 0 "
                             "just before, or a mask meant for a softmax")
            raise GuardError(name, f"called at {line}", "finite-op", facts, ADVICE_MADE_HERE)
    node = next((t.grad_fn for t in outputs if t.grad_fn is not None), None)
    if node is not None:
        node.register_hook(_backward_hook(name, line, node.name(), report))


def _backward_hook(name: str, line: str, node_name: str,
                   report: Callable[[GuardError], None]) -> Callable[..., None]:
    def hook(grad_inputs: Any, grad_outputs: Any) -> None:
        bad = next((g for g in tensors_in(list(grad_inputs)) if non_finite(g)), None)
        if bad is None or any(non_finite(g) for g in tensors_in(list(grad_outputs))):
            return
        report(GuardError(name, f"called at {line}", "finite-op", [
            f"gradient: {describe(bad)}: {counts(bad)}",
            f"its backward ({node_name}) turned a finite gradient into NaN/Inf",
        ], "the derivative is infinite where this operation is evaluated: log or division at 0, sqrt or "
           "norm at 0, pow with a negative base. Clamp the input away from the pole "
           "(`torch.log(p.clamp_min(1e-12))`), or mask with `torch.where` before the operation, not after."))
    return hook
