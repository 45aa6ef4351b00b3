"""`torchlint.runtime.guard(model)`: check each layer's input before the call, naming the module.

```python
with torchlint.runtime.guard(model):      # or: handle = guard(model); ...; handle.remove()
    for x, y in loader:
        loss_fn(model(x), y).backward()
```

Forward pre-hooks on every module check what a layer receives (convolutions, batch norm,
embeddings) when the layer's forward is torch's own; a TorchFunctionMode checks functional
calls (`F.cross_entropy`, `torch.gather`, ..., and those of layers whose forward is not
torch's own); forward hooks and parameter gradient hooks find the first NaN/Inf, and
`origin` names the operation that made it.
A failed check raises `GuardError` naming the module's path, the check, the tensors and
what to do, before the kernel that would fail (or fault the GPU) runs. Checks of values
synchronise with the GPU, so they run on scheduled steps only (`GuardOptions`).
"""

from __future__ import annotations

import warnings
import weakref
from dataclasses import dataclass
from typing import Any, Callable, List, Mapping, Optional

import torch
from torch import nn

from torchlint.runtime.checked import CheckedTensors
from torchlint.runtime.compiled import (COMPILED_MESSAGE, compiling, is_compiled, keep_out_of_dynamo,
                                        warn_when_compiling)
from torchlint.runtime.errors import GuardError, GuardWarning
from torchlint.runtime.finite import check_output, gradient_error
from torchlint.runtime.functional import Entry, FunctionalChecks, build_table
from torchlint.runtime.indices import check_embedding
from torchlint.runtime.layers import check_batch_norm, check_conv
from torchlint.runtime.options import VALUE_FAMILIES, GuardOptions
from torchlint.runtime.origin import OuterCall, autocast_state, replay_backward, replay_forward, watch_call
from torchlint.runtime.rnn import watch_rnn_outputs
from torchlint.runtime.skips import Skips
from torchlint.runtime.tensors import function_modes_on, own_reads

__all__ = ["Guard", "GuardWarning", "guard", "install_process_guard"]

# A GradScaler halves its scale at each step it skips (65536 by default). Skipped still at 1/256, the
# gradients are not finite even scaled far down: a NaN born in backward, not an fp16 overflow.
SCALE_FLOOR = 2.0 ** -8
ADVICE_NO_SCALE_FIXES = ("a lower loss scale cannot fix this: the backward of an operation makes NaN/Inf at any "
                         "scale (sqrt or norm at 0, log or division at 0, pow with a negative base). Clamp its "
                         "input away from the pole, or mask with `torch.where` before the operation, not after.")


@dataclass(frozen=True)
class Plan:
    """What the guard does for one module type: a check before the call, one after, and whether
    the layer's own functional call (F.conv2d inside nn.Conv2d) is then already checked."""

    before: Optional[Callable[..., None]] = None
    before_family: str = ""
    after: Optional[Callable[..., None]] = None
    covers_functional: bool = False


def _conv_before(guard: "Guard", where: str, module: Any, args: tuple) -> None:
    check_conv(guard, where, type(module).__name__, args[0], module.weight, module.groups, module.transposed,
               len(module.kernel_size))


def _embedding_before(guard: "Guard", where: str, module: Any, args: tuple) -> None:
    check_embedding(where, type(module).__name__, args[0], module.num_embeddings)


def _batch_norm_before(guard: "Guard", where: str, module: Any, args: tuple) -> None:
    check_batch_norm(guard, where, module, args[0])


def _rnn_after(guard: "Guard", where: str, module: Any, args: tuple, output: Any) -> None:
    data = getattr(args[0], "data", args[0])  # a PackedSequence carries its tensor in .data
    if guard.uses_cudnn(data):
        watch_rnn_outputs(where, module, data, output)


_NO_PLAN = Plan()


def _own_forward(kind: type) -> bool:
    # A layer's input is what reaches its kernel only when the forward is torch's own: a subclass
    # may build other indices (BART's positions) or another width (CoordConv) from it. Such a
    # layer is checked at the functional call its forward makes, with the arguments it makes.
    return getattr(kind.forward, "__module__", "").startswith("torch.nn.modules.")


def _plan(module: nn.Module, families: frozenset) -> Plan:
    if isinstance(module, nn.RNNBase) and "rnn" in families:
        return Plan(after=_rnn_after)
    if not _own_forward(type(module)):
        return _NO_PLAN
    if isinstance(module, nn.modules.conv._ConvNd) and "conv" in families:
        return Plan(_conv_before, "conv", covers_functional=True)
    if isinstance(module, (nn.Embedding, nn.EmbeddingBag)) and "index" in families:
        return Plan(_embedding_before, "index", covers_functional=True)
    if isinstance(module, nn.modules.batchnorm._BatchNorm) and "batchnorm" in families:
        return Plan(_batch_norm_before, "batchnorm")
    return _NO_PLAN


class Guard:
    """The installed checks; remove them with `.remove()` or by leaving the `with` block."""

    def __init__(self, model: Optional[nn.Module] = None, options: Optional[GuardOptions] = None,
                 name: str = "model") -> None:
        self.options = options or GuardOptions()
        self.name = name
        self.model = _unwrap(model) if model is not None else None
        self.skips = Skips(self.options.skip)
        self.step = 0
        # before the first counted step (calls outside any model) the value checks run if the first steps' do
        self.values_now = bool(set(VALUE_FAMILIES) & self.options.checks) and self.options.first > 0
        self._watch_calls = self.values_now and "finite" in self.options.checks
        self._manual_steps = False
        self._stack: List[nn.Module] = []
        self._paths: "weakref.WeakKeyDictionary[nn.Module, str]" = weakref.WeakKeyDictionary()
        self._plans: dict = {}
        self._handles: list = []
        self._watched_parameters: "weakref.WeakKeyDictionary[nn.Module, bool]" = weakref.WeakKeyDictionary()
        self._warned: set = set()
        self._mode: Optional[FunctionalChecks] = None
        self._mode_paused = False
        self._rank = ""
        # gradients of an fp16 step: a GradScaler skips the steps whose gradients overflow, so a
        # non-finite gradient is a fault only once an optimizer is about to apply it
        self._half_precision = False
        self._pending_gradient: Optional[GuardError] = None
        self._scaler_gave_up_at: Optional[float] = None  # a GradScaler's scale (<= 1) at which it skipped them
        self._replaying = False
        # a value-check step's outermost calls and the RNG state before the latest one: replayed to name
        # the operation when a NaN is born in a module's backward
        self._outer_calls: List[OuterCall] = []
        self._outer_rng: Any = None
        self._checked = CheckedTensors()  # outputs found finite on this step, read once while unchanged
        self._stop_compile_warning: Optional[Callable[[], None]] = None
        if model is not None and is_compiled(model, self.model):
            warnings.warn(COMPILED_MESSAGE.format(what=f"`{name}`"), GuardWarning, stacklevel=3)

    # lifecycle ---------------------------------------------------------------------------
    def install(self) -> "Guard":
        if self._handles or self._mode is not None:
            return self
        from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

        keep_out_of_dynamo(self._before, self._after, self._after_without_kwargs, FunctionalChecks.__torch_function__)
        self._rank = _rank_suffix()
        if self.model is None:
            from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

            self._handles.append(register_module_forward_pre_hook(self._before))
            try:  # keywords too: a replay calls the module as it was called
                self._handles.append(register_module_forward_hook(self._after, with_kwargs=True, always_call=True))
            except TypeError:  # a torch whose global forward hooks take no kwargs
                self._handles.append(register_module_forward_hook(self._after_without_kwargs, always_call=True))
        else:
            for path, module in self.model.named_modules():
                self._paths[module] = f"{self.name}.{path}" if path else self.name
                self._handles.append(module.register_forward_pre_hook(self._before))
                self._handles.append(module.register_forward_hook(self._after, with_kwargs=True, always_call=True))
                self._watch_parameters(module)
        table = build_table(sorted(self.options.checks))
        if table or "finite" in self.options.checks:
            self._mode = FunctionalChecks(self, table)
            self._mode.__enter__()
        # nothing inside optimizer.step() is checked, and an optimizer's per-parameter loop
        # makes hundreds of torch calls per step: the mode steps aside for it (not for a closure)
        self._handles.append(register_optimizer_step_pre_hook(self._optimizer_step_begins))
        self._handles.append(register_optimizer_step_post_hook(self._optimizer_step_ends))
        self._stop_compile_warning = warn_when_compiling(f"`{self.name}`" if self.model is not None else
                                                         "every module (TORCHLINT_GUARD=1)")
        return self

    def remove(self) -> None:
        """Take every hook out and leave the function mode; the model runs as before."""
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self._watched_parameters = weakref.WeakKeyDictionary()
        if self._mode is not None:
            mode, self._mode = self._mode, None
            mode.leave()
        if self._stop_compile_warning is not None:
            self._stop_compile_warning()
            self._stop_compile_warning = None
        self._mode_paused = False
        self._pending_gradient = self._scaler_gave_up_at = None
        self._outer_calls.clear()
        self._checked.forget()
        self._stack.clear()

    def __enter__(self) -> "Guard":
        return self.install()

    def __exit__(self, *exc_info: Any) -> None:
        self.remove()

    def begin_step(self) -> None:
        """Mark the start of a training step explicitly (the Lightning callback does);
        from then on, model calls no longer count steps themselves."""
        self._manual_steps = True
        self._next_step()

    def _optimizer_step_begins(self, optimizer: Any, args: tuple, kwargs: dict) -> Any:
        pending = self._take_pending_gradient()
        if pending is not None:
            raise pending  # no GradScaler looked at these gradients, and the optimizer is about to apply them
        if self._mode is None or not self._mode.on_top():
            return None
        self._mode.__exit__(None, None, None)
        self._mode_paused = True
        # a closure (LBFGS, Lightning's automatic optimisation) runs the forward and the loss inside step():
        # the mode comes back for it
        if len(args) > 1 and callable(args[1]):  # args[0] is the optimizer itself
            return (args[0], self._checked_closure(args[1])) + tuple(args[2:]), kwargs
        if callable(kwargs.get("closure")):
            return args, {**kwargs, "closure": self._checked_closure(kwargs["closure"])}
        return None

    def _optimizer_step_ends(self, optimizer: Any, args: tuple, kwargs: dict) -> None:
        if self._mode_paused and self._mode is not None:
            self._mode_paused = False
            self._mode.__enter__()

    def _checked_closure(self, closure: Callable[..., Any]) -> Callable[..., Any]:
        def checked(*args: Any, **kwargs: Any) -> Any:
            resumed = self._mode_paused and self._mode is not None
            if resumed:
                self._mode_paused = False
                self._mode.__enter__()
            result = closure(*args, **kwargs)  # on an error the mode stays on: step() is abandoned
            if resumed and self._mode is not None and self._mode.on_top():
                self._mode.__exit__(None, None, None)
                self._mode_paused = True
            return result
        return checked

    # what the checks ask -------------------------------------------------------------------
    def uses_cudnn(self, tensor: Any) -> bool:
        """Whether cuDNN-only limits apply to a call on this tensor (see GuardOptions.cudnn)."""
        if self.options.cudnn is not None:
            return self.options.cudnn
        return (isinstance(tensor, torch.Tensor) and tensor.is_cuda and torch.backends.cudnn.is_available()
                and torch.backends.cudnn.enabled)

    def warn_once(self, key: Any, text: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(text, GuardWarning, stacklevel=4)

    def check_call(self, entry: Entry, args: tuple, kwargs: dict) -> None:
        """A functional call seen by the mode: check it unless its module already did."""
        if self._replaying or compiling() or (entry.family in VALUE_FAMILIES and not self.values_now):
            return
        top = self._stack[-1] if self._stack else None
        if top is not None and self._plan_of(top).covers_functional:
            return
        if top is None:
            where, kind = entry.name + self._rank, "called outside the guarded modules"
        else:
            where, kind = self._path(top), f"{entry.name} in {type(top).__name__}"
        self._failing(entry.check, self, where, kind, args, kwargs)

    def watches_calls(self) -> bool:
        """Whether the mode hands this call's result to `watch_call`: on value-check steps, outside the modules."""
        return self._watch_calls and not self._stack and not self._replaying and not compiling()

    def watch_call(self, name: str, args: tuple, kwargs: dict, result: Any) -> None:
        self._failing(watch_call, name + self._rank, args, kwargs, result, self._report_gradient)

    def storage_exposed(self) -> None:
        """Code may now write a tensor's data without bumping its version: every output is read again."""
        self._checked.forget()

    def scaler_checks_gradients(self, inv_scale: Any = None) -> None:
        """A GradScaler is testing the gradients: it skips the step if they are not finite and halves
        its scale. Once it has halved the scale far below 1 (`SCALE_FLOOR`) the gradients are not finite
        even scaled down: no overflow, a NaN no scale fixes, so the finding stands (the next step raises it)."""
        if self._pending_gradient is None:
            return
        scale = _scale_of(inv_scale)
        if scale is not None and scale <= SCALE_FLOOR:
            self._scaler_gave_up_at = scale
            return
        self._pending_gradient = None
        self._let_go_of_outer_calls()

    # hooks -----------------------------------------------------------------------------------
    def _before(self, module: nn.Module, args: tuple) -> None:
        if self._replaying or compiling():
            return
        with own_reads():
            self._check_before(module, args)

    def _check_before(self, module: nn.Module, args: tuple) -> None:
        if not self._stack:
            self._half_precision = _half_precision(module)
            if not self._manual_steps and self._counts_steps(module):
                self._next_step()
            if self._watch_calls and torch.is_grad_enabled():
                self._outer_rng = torch.random.get_rng_state()
        self._stack.append(module)
        plan = self._plan_of(module)
        if plan.before is not None and args and (plan.before_family not in VALUE_FAMILIES or self.values_now):
            self._failing(plan.before, self, self._path(module), module, args)

    def _after(self, module: nn.Module, args: tuple, kwargs: dict, output: Any) -> None:
        if self._replaying or compiling():
            return
        try:
            if module not in self._watched_parameters:  # after the call: a lazy module's parameters exist now
                self._watch_parameters(module)
            plan = self._plan_of(module)
            if plan.after is not None and args:
                with own_reads():
                    plan.after(self, self._path(module), module, args, output)
            if self.values_now and "finite" in self.options.checks:
                self._failing(check_output, self._path(module), type(module).__name__,
                              args + tuple(kwargs.values()), output, lambda: self._replay(module, args, kwargs),
                              self._checked)
            if self._stack and self._stack[0] is module and self._outer_rng is not None:
                self._keep_outer_call(module, args, kwargs, output)
        finally:
            if module in self._stack:
                while self._stack.pop() is not module:
                    pass

    def _after_without_kwargs(self, module: nn.Module, args: tuple, output: Any) -> None:
        self._after(module, args, {}, output)

    def _replay(self, module: nn.Module, args: tuple, kwargs: dict) -> str:
        self._replaying = True
        try:
            return replay_forward(module, args, kwargs)
        finally:
            self._replaying = False

    def _keep_outer_call(self, module: nn.Module, args: tuple, kwargs: dict, output: Any) -> None:
        call = OuterCall(module, args, kwargs, self._outer_rng)
        self._outer_rng = None
        if call.watch(output):
            del self._outer_calls[:-3]  # a step makes a few outermost calls (model, loss module); keep the last
            self._outer_calls.append(call)

    def _backward_origin(self) -> str:
        self._replaying = True
        try:
            with function_modes_on():  # asked from inside own_reads too (the next step's pre-hook, in fp16)
                return replay_backward(reversed(self._outer_calls))
        finally:
            self._replaying = False

    def _watch_parameters(self, module: nn.Module) -> None:
        if "finite" not in self.options.checks:
            return
        parameters = list(module.named_parameters(recurse=False))
        if any(isinstance(parameter, nn.parameter.UninitializedParameter) for _, parameter in parameters):
            return  # a lazy module: watched at its first call, once its parameters exist
        self._watched_parameters[module] = True
        for name, parameter in parameters:
            if parameter.requires_grad:
                self._handles.append(parameter.register_hook(self._gradient_hook(module, name)))

    def _gradient_hook(self, module: nn.Module, name: str) -> Callable[[Any], None]:
        module_ref = weakref.ref(module)

        def hook(grad: Any) -> None:
            owner = module_ref()
            if self.values_now and owner is not None and not self._replaying and not compiling():
                error = gradient_error(f"{self._path(owner)}.{name}{self._rank}", grad)
                if error is not None and not self._half_precision and not self._skipped(error):
                    error = error.with_fact(self._backward_origin())  # raised here: name the operation
                if error is not None:
                    self._report_gradient(error)
        keep_out_of_dynamo(hook)
        return hook

    def _report_gradient(self, error: GuardError) -> None:
        if self._skipped(error):
            return
        if not self._half_precision:
            raise error
        if self._pending_gradient is None:
            self._pending_gradient = error
            for call in self._outer_calls:  # replayed if no GradScaler looks at these gradients
                call.held = True

    def _take_pending_gradient(self) -> Optional[GuardError]:
        """The fp16 finding no GradScaler looked at, with the operation whose backward made it."""
        pending, self._pending_gradient = self._pending_gradient, None
        if pending is not None and self._scaler_gave_up_at is not None:
            pending = pending.with_fact(f"a GradScaler skipped the step at scale {self._scaler_gave_up_at:g}: "
                                        "not finite even scaled down, so it skips every step and the model "
                                        "no longer trains", ADVICE_NO_SCALE_FIXES)
        self._scaler_gave_up_at = None
        if pending is not None and pending.check == "finite-gradient":
            pending = pending.with_fact(self._backward_origin())
        self._let_go_of_outer_calls()
        return pending

    def _let_go_of_outer_calls(self) -> None:
        """Drop what the kept calls hold (inputs, gradients), held for an fp16 finding or not."""
        for call in self._outer_calls:
            call.free()

    # bookkeeping -------------------------------------------------------------------------------
    def _next_step(self) -> None:
        pending = self._take_pending_gradient()
        self._outer_calls.clear()
        self._checked.forget()
        self.step += 1
        self.values_now = (bool(set(VALUE_FAMILIES) & self.options.checks)
                           and self.options.value_step(self.step))
        self._watch_calls = self.values_now and "finite" in self.options.checks
        if pending is not None:
            raise pending  # an fp16 step whose non-finite gradients no GradScaler looked at

    def _counts_steps(self, module: nn.Module) -> bool:
        # The guarded model counts; without one (the process guard), an outermost module with
        # parameters does, so that a loss module called after the model is not a step of its own.
        if self.model is not None:
            return module is self.model
        return next(module.parameters(), None) is not None

    def _plan_of(self, module: nn.Module) -> Plan:
        if "forward" in module.__dict__:
            return _NO_PLAN  # a forward replaced on the instance (Accelerate's offload hooks): see _own_forward
        kind = type(module)
        plan = self._plans.get(kind)
        if plan is None:
            plan = self._plans[kind] = _plan(module, self.options.checks)
        return plan

    def _path(self, module: nn.Module) -> str:
        path = self._paths.get(module)
        if path is None:
            path = self._find_path(module)
            self._paths[module] = path
        return path + self._rank

    def _find_path(self, module: nn.Module) -> str:
        root = self.model if self.model is not None else (self._stack[0] if self._stack else module)
        prefix = self.name if self.model is not None else type(root).__name__
        for path, candidate in root.named_modules():
            if candidate is module:
                return f"{prefix}.{path}" if path else prefix
        return type(module).__name__

    def _skipped(self, error: GuardError) -> bool:
        if not self.skips:
            return False
        path = error.module[:-len(self._rank)] if self._rank and error.module.endswith(self._rank) else error.module
        return self.skips.covers(path, error.check)

    def _failing(self, check: Callable[..., None], *args: Any) -> None:
        try:
            check(*args)
        except GuardError as error:
            if self._skipped(error):
                return
            self._stack.clear()  # the forward is abandoned; the next call starts a new step
            raise


def guard(model: Optional[nn.Module] = None, *, checks: Optional[Any] = None, first: int = 10, every: int = 100,
          cudnn: Optional[bool] = None, name: str = "model", skip: Optional[Mapping[str, Any]] = None) -> Guard:
    """Install the guard on `model` (every module of the process when None) and return its handle.

    Use it as a context manager (`with guard(model): ...`) or keep the handle and call
    `.remove()`. `checks` picks families (conv, rnn, batchnorm, index, finite; default all),
    `first`/`every` schedule the value checks, `cudnn=True` judges cuDNN-only limits on CPU
    too, `name` is the root of the printed module paths, `skip` opts modules out of checks
    (`{"model.pos_embed": ["embedding-index"]}`). See `GuardOptions`.
    """
    options = GuardOptions.make(checks, first=first, every=every, cudnn=cudnn, skip=skip)
    return Guard(model, options, name).install()


_PROCESS_GUARD: Optional[Guard] = None


def install_process_guard() -> Guard:
    """The guard `TORCHLINT_GUARD=1` asks for: every module of the process, default options, once."""
    global _PROCESS_GUARD
    if _PROCESS_GUARD is None:
        _PROCESS_GUARD = guard(None)
    return _PROCESS_GUARD


def _unwrap(model: nn.Module) -> nn.Module:
    """The module whose paths users know: inside DistributedDataParallel / DataParallel (as
    Accelerate's `prepare` returns it) and torch.compile's wrapper."""
    while True:
        if isinstance(model, (nn.DataParallel, nn.parallel.DistributedDataParallel)):
            model = model.module
        elif hasattr(model, "_orig_mod") and isinstance(model._orig_mod, nn.Module):
            model = model._orig_mod
        else:
            return model


def _half_precision(module: nn.Module) -> bool:
    """Whether this forward runs in fp16: under fp16 autocast, or with fp16 weights."""
    if any(dtype == torch.float16 for _, dtype in autocast_state()):
        return True
    parameter = next(module.parameters(), None)
    return parameter is not None and parameter.dtype == torch.float16


def _scale_of(inv_scale: Any) -> Optional[float]:
    """A GradScaler's scale from the `inv_scale` it unscales with (read only when a finding waits)."""
    if not isinstance(inv_scale, torch.Tensor) or inv_scale.numel() != 1:
        return None
    with own_reads():
        inverse = inv_scale.item()
    return 1.0 / inverse if inverse > 0 else None


def _rank_suffix() -> str:
    distributed = torch.distributed
    if distributed.is_available() and distributed.is_initialized() and distributed.get_world_size() > 1:
        return f" [rank {distributed.get_rank()}]"
    return ""
