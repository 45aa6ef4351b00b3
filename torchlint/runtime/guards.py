"""`torchlint.runtime.guard(model)`: check each layer's input before the call, naming the module.

```python
with torchlint.runtime.guard(model):      # or: handle = guard(model); ...; handle.remove()
    for x, y in loader:
        loss_fn(model(x), y).backward()
```

Forward pre-hooks on every module check what a layer receives (convolutions, batch norm,
embeddings); a TorchFunctionMode checks functional calls (`F.cross_entropy`,
`torch.gather`, ...); forward hooks and parameter gradient hooks find the first NaN/Inf.
A failed check raises `GuardError` naming the module's path, the check, the tensors and
what to do, before the kernel that would fail (or fault the GPU) runs. Checks of values
synchronise with the GPU, so they run on scheduled steps only (`GuardOptions`).
"""

from __future__ import annotations

import warnings
import weakref
from dataclasses import dataclass
from typing import Any, Callable, List, Optional

import torch
from torch import nn

from torchlint.runtime.errors import GuardError
from torchlint.runtime.finite import check_gradient, check_output
from torchlint.runtime.functional import Entry, FunctionalChecks, build_table
from torchlint.runtime.indices import check_embedding
from torchlint.runtime.layers import check_batch_norm, check_conv
from torchlint.runtime.options import VALUE_FAMILIES, GuardOptions
from torchlint.runtime.rnn import watch_rnn_outputs

__all__ = ["Guard", "guard", "install_process_guard"]

COMPILED_MESSAGE = (
    "torchlint guard: {what} is compiled with torch.compile. The guard's checks run in eager code only: "
    "inside the compiled graph they are skipped (each hook returns at once when "
    "torch.compiler.is_compiling()), so they neither break nor slow the graph, and they check nothing there. "
    "To check real batches, guard the uncompiled model for the first steps (or a CPU dry run) and compile "
    "after `handle.remove()`."
)


class GuardWarning(UserWarning):
    """Something the guard cannot check, or a limit the current torch works around."""


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


def _plan(module: nn.Module, families: frozenset) -> Plan:
    if isinstance(module, nn.modules.conv._ConvNd) and "conv" in families:
        return Plan(_conv_before, "conv", covers_functional=True)
    if isinstance(module, (nn.Embedding, nn.EmbeddingBag)) and "index" in families:
        return Plan(_embedding_before, "index", covers_functional=True)
    if isinstance(module, nn.modules.batchnorm._BatchNorm) and "batchnorm" in families:
        return Plan(_batch_norm_before, "batchnorm")
    if isinstance(module, nn.RNNBase) and "rnn" in families:
        return Plan(after=_rnn_after)
    return Plan()


def _compiling() -> bool:
    return torch.compiler.is_compiling()


class Guard:
    """The installed checks; remove them with `.remove()` or by leaving the `with` block."""

    def __init__(self, model: Optional[nn.Module] = None, options: Optional[GuardOptions] = None,
                 name: str = "model") -> None:
        self.options = options or GuardOptions()
        self.name = name
        self.model = _unwrap(model) if model is not None else None
        self.step = 0
        # before the first counted step (calls outside any model) the value checks run if the first steps' do
        self.values_now = bool(set(VALUE_FAMILIES) & self.options.checks) and self.options.first > 0
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
        if model is not None and _is_compiled(model):
            warnings.warn(COMPILED_MESSAGE.format(what=f"`{name}`"), GuardWarning, stacklevel=3)

    # lifecycle ---------------------------------------------------------------------------
    def install(self) -> "Guard":
        if self._handles or self._mode is not None:
            return self
        self._rank = _rank_suffix()
        if self.model is None:
            from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

            self._handles.append(register_module_forward_pre_hook(self._before))
            self._handles.append(register_module_forward_hook(self._after, always_call=True))
        else:
            for path, module in self.model.named_modules():
                self._paths[module] = f"{self.name}.{path}" if path else self.name
                self._handles.append(module.register_forward_pre_hook(self._before))
                self._handles.append(module.register_forward_hook(self._after, always_call=True))
                self._watch_parameters(module)
        table = build_table(sorted(self.options.checks))
        if table:
            from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

            self._mode = FunctionalChecks(self, table)
            self._mode.__enter__()
            # nothing inside optimizer.step() is checked, and an optimizer's per-parameter loop
            # makes hundreds of torch calls per step: the mode steps aside for it
            self._handles.append(register_optimizer_step_pre_hook(self._optimizer_step_begins))
            self._handles.append(register_optimizer_step_post_hook(self._optimizer_step_ends))
        return self

    def remove(self) -> None:
        """Take every hook out and leave the function mode; the model runs as before."""
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self._watched_parameters = weakref.WeakKeyDictionary()
        if self._mode is not None:
            mode, self._mode = self._mode, None
            if not self._mode_paused:
                mode.__exit__(None, None, None)
        self._mode_paused = False
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

    def _optimizer_step_begins(self, optimizer: Any, args: tuple, kwargs: dict) -> None:
        stack = torch.overrides._get_current_function_mode_stack()
        if self._mode is not None and stack and stack[-1] is self._mode:  # only when it is on top
            self._mode.__exit__(None, None, None)
            self._mode_paused = True

    def _optimizer_step_ends(self, optimizer: Any, args: tuple, kwargs: dict) -> None:
        if self._mode_paused and self._mode is not None:
            self._mode_paused = False
            self._mode.__enter__()

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
        if _compiling() or (entry.family in VALUE_FAMILIES and not self.values_now):
            return
        top = self._stack[-1] if self._stack else None
        if top is not None and self._plan_of(top).covers_functional:
            return
        if top is None:
            where, kind = entry.name + self._rank, "called outside the guarded modules"
        else:
            where, kind = self._path(top), f"{entry.name} in {type(top).__name__}"
        self._failing(entry.check, self, where, kind, args, kwargs)

    # hooks -----------------------------------------------------------------------------------
    def _before(self, module: nn.Module, args: tuple) -> None:
        if _compiling():
            return
        if not self._stack and not self._manual_steps and self._counts_steps(module):
            self._next_step()
        self._stack.append(module)
        if self.model is None:
            self._watch_parameters(module)
        plan = self._plan_of(module)
        if plan.before is not None and args and (plan.before_family not in VALUE_FAMILIES or self.values_now):
            self._failing(plan.before, self, self._path(module), module, args)

    def _after(self, module: nn.Module, args: tuple, output: Any) -> None:
        if _compiling():
            return
        try:
            plan = self._plan_of(module)
            if plan.after is not None and args:
                plan.after(self, self._path(module), module, args, output)
            if self.values_now and "finite" in self.options.checks:
                self._failing(check_output, self._path(module), type(module).__name__, args, output)
        finally:
            if module in self._stack:
                while self._stack.pop() is not module:
                    pass

    def _watch_parameters(self, module: nn.Module) -> None:
        if "finite" not in self.options.checks or module in self._watched_parameters:
            return
        self._watched_parameters[module] = True
        for name, parameter in module.named_parameters(recurse=False):
            if parameter.requires_grad:
                self._handles.append(parameter.register_hook(self._gradient_hook(module, name)))

    def _gradient_hook(self, module: nn.Module, name: str) -> Callable[[Any], None]:
        module_ref = weakref.ref(module)

        def hook(grad: Any) -> None:
            owner = module_ref()
            if self.values_now and owner is not None and not _compiling():
                check_gradient(f"{self._path(owner)}.{name}{self._rank}", grad)
        return hook

    # bookkeeping -------------------------------------------------------------------------------
    def _next_step(self) -> None:
        self.step += 1
        self.values_now = (bool(set(VALUE_FAMILIES) & self.options.checks)
                           and self.options.value_step(self.step))

    def _counts_steps(self, module: nn.Module) -> bool:
        # The guarded model counts; without one (the process guard), an outermost module with
        # parameters does, so that a loss module called after the model is not a step of its own.
        if self.model is not None:
            return module is self.model
        return next(module.parameters(), None) is not None

    def _plan_of(self, module: nn.Module) -> Plan:
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

    def _failing(self, check: Callable[..., None], *args: Any) -> None:
        try:
            check(*args)
        except GuardError:
            self._stack.clear()  # the forward is abandoned; the next call starts a new step
            raise


def guard(model: Optional[nn.Module] = None, *, checks: Optional[Any] = None, first: int = 10, every: int = 100,
          cudnn: Optional[bool] = None, name: str = "model") -> Guard:
    """Install the guard on `model` (every module of the process when None) and return its handle.

    Use it as a context manager (`with guard(model): ...`) or keep the handle and call
    `.remove()`. `checks` picks families (conv, rnn, batchnorm, index, finite; default all),
    `first`/`every` schedule the value checks, `cudnn=True` judges cuDNN-only limits on CPU
    too, `name` is the root of the printed module paths. See `GuardOptions`.
    """
    options = GuardOptions.make(checks, first=first, every=every, cudnn=cudnn)
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


def _is_compiled(model: nn.Module) -> bool:
    if hasattr(model, "_orig_mod"):
        return True
    return any(getattr(module, "_compiled_call_impl", None) is not None for module in _unwrap(model).modules())


def _rank_suffix() -> str:
    distributed = torch.distributed
    if distributed.is_available() and distributed.is_initialized() and distributed.get_world_size() > 1:
        return f" [rank {distributed.get_rank()}]"
    return ""
