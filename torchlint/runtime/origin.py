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
- Inside a module, backward (`torch.sqrt(h - h)`: a finite forward, an infinite derivative):
  on a value-check step the guard keeps each outermost module call's inputs and RNG state
  and the gradient that reaches its outputs (`OuterCall`), until that backward ends. When a
  parameter's gradient is found non-finite, the call is replayed, forward and backward with
  the same gradient, with a hook on each operation's autograd node; the first node that turns
  a finite gradient into NaN/Inf is named with the line that called its operation.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from torchlint.runtime.errors import GuardError
from torchlint.runtime.finite import (ADVICE_MADE_HERE, FAULT, NEGATIVE_INFINITY, counts, faulty_value, non_finite,
                                      output_state)
from torchlint.runtime.tensors import describe, has_values, tensors_in

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
    """The first operation that turns inputs without NaN/+Inf into NaN/+Inf and, when its inputs held -Inf,
    the first operation that made -Inf from finite inputs (`torch.log` of 0 before `0 * -inf`)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: Optional[str] = None
        self._negative_infinity_from: Optional[str] = None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if self.found is not None:
            return out
        states = {output_state(t) for t in tensors_in(out)}
        inputs = list(tensors_in(list(args) + list((kwargs or {}).values())))
        if FAULT in states and not any(faulty_value(t) for t in inputs):
            self.found = f"{func} at {source_line()}"
            if self._negative_infinity_from is not None and any(non_finite(t) for t in inputs):
                self.found += f", from the -Inf made by {self._negative_infinity_from}"
        elif (NEGATIVE_INFINITY in states and self._negative_infinity_from is None
              and not any(non_finite(t) for t in inputs)):
            self._negative_infinity_from = f"{func} at {source_line()}"
        return out


@contextlib.contextmanager
def _buffers_kept(module: Any) -> Iterator[None]:
    """A replay leaves the module's buffers (batch norm's running statistics) as they were."""
    buffers = {name: buffer.detach().clone() for name, buffer in module.named_buffers()}
    try:
        yield
    finally:
        with torch.no_grad():
            for name, buffer in module.named_buffers():
                if name in buffers:
                    buffer.copy_(buffers[name])


def replay_forward(module: Any, args: tuple, kwargs: dict) -> str:
    """Run `module`'s forward again on the same inputs and name the first operation that makes NaN/+Inf."""
    tracer = _FirstFaultyOperation()
    try:
        with _buffers_kept(module), torch.random.fork_rng(devices=[]), torch.no_grad(), tracer:
            module.forward(*args, **kwargs)
    except Exception as error:  # the replay is a diagnosis: it never replaces the finding
        return f"(a replay of its forward to find the operation failed: {type(error).__name__})"
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
    states = [output_state(t) for t in outputs]
    inputs = list(tensors_in(list(args) + list(kwargs.values())))
    if FAULT in states:
        bad = outputs[states.index(FAULT)]
        if inputs and not any(faulty_value(t) for t in inputs):
            facts = [f"output: {describe(bad)}: {counts(bad)}",
                     "its inputs held no NaN/+Inf: this operation made them (forward)"]
            held = next((t for t in inputs if t.is_floating_point() and non_finite(t)), None)
            if held is not None:
                made_by = getattr(held, _NEGATIVE_INFINITY_FROM, None)
                facts.append(f"from the -Inf its input held ({describe(held)}: {counts(held)}): " + (
                    f"made by {made_by}" if made_by else "a log of 0 just before, or a mask meant for a softmax"))
            raise GuardError(name, f"called at {line}", "finite-op", facts, ADVICE_MADE_HERE)
    elif NEGATIVE_INFINITY in states:
        _note_negative_infinity(outputs, states, inputs, f"{name} at {line}")
    node = next((t.grad_fn for t in outputs if t.grad_fn is not None), None)
    if node is not None:
        node.register_hook(_backward_hook(name, line, node.name(), report))


# the call that first made a -Inf, kept on the tensors that carry it on (a few calls outside the modules on a
# value-check step): a NaN or +Inf made from it later names it (`-inf * 0`, `-(-inf)` after `torch.log(0)`)
_NEGATIVE_INFINITY_FROM = "_torchlint_negative_infinity_from"


def _note_negative_infinity(outputs: List[Any], states: List[str], inputs: List[Any], call: str) -> None:
    made_by = next((getattr(t, _NEGATIVE_INFINITY_FROM) for t in inputs if hasattr(t, _NEGATIVE_INFINITY_FROM)), None)
    if made_by is None and any(non_finite(t) for t in inputs):
        return  # a -Inf that came from elsewhere (the model's masked output)
    for tensor, state in zip(outputs, states):
        if state == NEGATIVE_INFINITY:
            setattr(tensor, _NEGATIVE_INFINITY_FROM, made_by or call)


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


def call_name(func: Any) -> str:
    """`torch.log`, `Tensor.__mul__`, `F.softmax`: how the printed messages name a torch call."""
    name = getattr(func, "__name__", repr(func))
    owner = getattr(func, "__qualname__", name).rpartition(".")[0]
    if owner in ("Tensor", "TensorBase", "_TensorBase"):
        return f"Tensor.{name}"
    if getattr(func, "__module__", "") == "torch.nn.functional":
        return f"F.{name}"
    return f"torch.{name}"


def _outputs_with_grad(value: Any) -> List[Any]:
    # a model's output may be a dict (Hugging Face's ModelOutput) as well as a tuple
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _outputs_with_grad(item)]
    return [value] if isinstance(value, torch.Tensor) and value.requires_grad else []


class OuterCall:
    """An outermost module call of a value-check step, kept until its backward ends.

    Holds the call's inputs, RNG state and autocast state (references, no copy) and, once backward
    reaches the call's outputs, the gradients they receive; `release` drops them when that backward
    ends, unless the call is `held` (an fp16 finding waits for the optimizer: see `Guard`)."""

    def __init__(self, module: Any, args: tuple, kwargs: dict, rng: Any) -> None:
        self.module, self.args, self.kwargs, self.rng = module, args, kwargs, rng
        self.autocast = autocast_state()
        self.grads: Dict[int, Any] = {}
        self.held = False
        self._release_queued = False

    def watch(self, output: Any) -> bool:
        """Hook the outputs that backward will reach; False when none will, or when they are not plain
        tensors (under `torch.func` transforms, FakeTensorMode, tensor subclasses nothing is replayed)."""
        outputs = _outputs_with_grad(output)
        if not all(has_values(tensor) for tensor in outputs):
            return False
        for index, tensor in enumerate(outputs):
            tensor.register_hook(self._keep(index))
        return bool(outputs)

    def _keep(self, index: int) -> Callable[[Any], None]:
        def keep(grad: Any) -> None:
            self.grads[index] = grad
            if not self._release_queued:
                self._release_queued = True
                torch.autograd.Variable._execution_engine.queue_callback(self.release)
        return keep

    def release(self) -> None:
        if not self.held:
            self.free()

    def free(self) -> None:
        self.module = self.args = self.kwargs = self.rng = None
        self.grads = {}
        self.held = False

    def replay(self) -> Optional[str]:
        """The operation whose backward turned the outputs' finite gradient into NaN/Inf, or None."""
        module, grads = self.module, self.grads
        if module is None or not grads or any(non_finite(g) for g in grads.values()):
            return None  # released, not reached by this backward, or handed a non-finite gradient from outside
        wrt = [p for p in module.parameters() if p.requires_grad]
        if not wrt:
            return None
        tracer = _FirstFaultyBackward()
        try:
            try:
                self._differentiate(module, tracer, lambda outputs, grads: torch.autograd.grad(
                    outputs, wrt, grads, allow_unused=True))
            except RuntimeError as error:
                if tracer.found is not None or "heckpoint" not in str(error):
                    raise
                # torch.utils.checkpoint(use_reentrant=True) takes .backward() only: it accumulates into
                # the parameters' .grad, which are put back as they were (the operations outside the
                # checkpointed blocks are still hooked)
                kept = [None if p.grad is None else (p.grad, p.grad.clone()) for p in wrt]
                try:
                    self._differentiate(module, tracer, torch.autograd.backward)
                finally:
                    with torch.no_grad():
                        for parameter, grad in zip(wrt, kept):  # accumulated in place, or made anew
                            parameter.grad = None if grad is None else grad[0].copy_(grad[1])
                if tracer.found is None:  # what such a block runs again in backward is out of the mode's sight
                    return ("(not found: the forward runs a block checkpointed with use_reentrant=True, whose "
                            "backward runs its forward again where no hook is seen; checkpoint with "
                            "use_reentrant=False, or run this step under torch.autograd.detect_anomaly())")
        except Exception as error:  # the replay is a diagnosis (its first finding stops it with _Found)
            if tracer.found is None:
                return f"(a replay of its forward and backward to find the operation failed: {type(error).__name__})"
        return tracer.found

    def _differentiate(self, module: Any, tracer: "_FirstFaultyBackward",
                       differentiate: Callable[[list, list], Any]) -> None:
        # the inputs are detached: the replay's backward stops at them, never reaching the real graph
        args = [_detached(value) for value in self.args]
        kwargs = {name: _detached(value) for name, value in self.kwargs.items()}
        with _buffers_kept(module), torch.random.fork_rng(devices=[]), torch.enable_grad(), \
                _autocast(self.autocast):
            torch.random.set_rng_state(self.rng)
            with tracer:  # on in backward too: a checkpointed block runs its forward again there
                outputs = _outputs_with_grad(module.forward(*args, **kwargs))
                tracer.enter_in_backward(outputs)
                pairs = [(outputs[index], grad) for index, grad in self.grads.items() if index < len(outputs)]
                differentiate([o for o, _ in pairs], [g for _, g in pairs])


def autocast_state() -> List[tuple]:
    """The devices autocast is on for now, with its dtype: `[("cpu", torch.float16)]`."""
    state = []
    for device in ("cpu", "cuda"):
        try:
            if torch.is_autocast_enabled(device):
                state.append((device, torch.get_autocast_dtype(device)))
        except (TypeError, AttributeError):  # torch < 2.4: CUDA autocast only, no device argument
            if device == "cuda" and torch.is_autocast_enabled():
                state.append((device, torch.get_autocast_gpu_dtype()))
    return state


@contextlib.contextmanager
def _autocast(state: List[tuple]) -> Iterator[None]:
    """Autocast as it was for the call replayed (a replay may run after the `autocast` block ended)."""
    with contextlib.ExitStack() as stack:
        for device, dtype in state:
            stack.enter_context(torch.autocast(device, dtype=dtype))
        yield


def _detached(value: Any) -> Any:
    """A tensor cut from its graph (a new leaf that requires grad if the tensor did), in tuples and lists too."""
    if isinstance(value, torch.Tensor):
        return value.detach().requires_grad_(value.requires_grad and value.is_floating_point())
    if isinstance(value, (tuple, list)):
        return type(value)(_detached(item) for item in value)
    return value


def replay_backward(calls: Iterable[OuterCall]) -> str:
    """Name the operation whose backward made a non-finite gradient, replaying the calls (latest first)."""
    failure = None
    for call in calls:
        found = call.replay()
        if found is not None and found.startswith("("):
            failure = found
        elif found is not None:
            return f"the operation whose backward made them: {found}"
    return failure or "a replay of the model's forward and backward did not make them again (a random draw?)"


class _Found(Exception):
    pass


class _FirstFaultyBackward(TorchFunctionMode):
    """Hooks the autograd node of each call's output; the first node whose backward turns a finite
    gradient into NaN/Inf is named with the call and its line, and stops the backward.

    Backward runs with no function mode on. A custom autograd function's backward may run torch code
    of its own: a block checkpointed with `use_reentrant=True` runs its forward again there and
    differentiates it in a backward of its own. The mode is entered for the time of such a node's
    backward (a pre-hook and a hook on it), so the operations recomputed there are hooked too."""

    def __init__(self) -> None:
        super().__init__()
        self.found: Optional[str] = None
        self._entered_nodes: set = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.enter_in_backward(tensors_in(list(args) + list((kwargs or {}).values())))
        result = func(*args, **(kwargs or {}))
        node = next((t.grad_fn for t in tensors_in(result) if t.grad_fn is not None), None)
        if node is not None:
            node.register_hook(self._hook(call_name(func), source_line(), node.name()))
        return result

    def enter_in_backward(self, tensors: Iterable[Any]) -> None:
        """Be on while the backward of a custom autograd function that produced one of these tensors runs."""
        for tensor in tensors:
            node = tensor.grad_fn
            if isinstance(node, torch.autograd.function.BackwardCFunction) and id(node) not in self._entered_nodes:
                self._entered_nodes.add(id(node))
                node.register_prehook(self._enter)
                node.register_hook(self._leave)

    def _enter(self, grad_outputs: Any) -> None:
        self.__enter__()

    def _leave(self, grad_inputs: Any, grad_outputs: Any) -> None:
        # the autograd engine restores the thread's modes when backward ends, also after an error
        self.__exit__(None, None, None)

    def _hook(self, name: str, line: str, node_name: str) -> Callable[..., None]:
        def hook(grad_inputs: Any, grad_outputs: Any) -> None:
            if self.found is not None:
                return
            if (any(non_finite(g) for g in tensors_in(list(grad_inputs)))
                    and not any(non_finite(g) for g in tensors_in(list(grad_outputs)))):
                self.found = f"{name} at {line} ({node_name} turned a finite gradient into NaN/Inf)"
                raise _Found
        return hook
