"""The guard beside torch.compile: out of compiled graphs, never a graph of its own, and saying so.

Every hook returns at once when `torch.compiler.is_compiling()`, which dynamo treats as a
constant, so where a hook is traced into a graph it adds nothing and breaks nothing. Where a
model graph-breaks (an RNN, a data-dependent branch), the hooks run again as frames of their
own between the graphs, and dynamo would compile each of those frames into graphs of its own:
`skip_code` tells dynamo to run them as they are. Compiling while a guard is installed (a
model guarded first and compiled after) warns once, since nothing inside the graph is checked.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Optional

import torch

from torchlint.runtime.errors import GuardWarning

COMPILED_MESSAGE = (
    "torchlint guard: {what} is compiled with torch.compile. The guard's checks run in eager code only: "
    "inside the compiled graph they are skipped (each hook returns at once when "
    "torch.compiler.is_compiling()), so they neither break nor slow the graph, and they check nothing there. "
    "To check real batches, guard the uncompiled model for the first steps (or a CPU dry run) and compile "
    "after `handle.remove()`."
)

_SKIPPED_CODE: set = set()


def compiling() -> bool:
    return torch.compiler.is_compiling()


def keep_out_of_dynamo(*functions: Any) -> None:
    """Never compile these functions' frames, nor the frames they call, on their own (where a graph
    is traced through them they are still inlined, and return at once)."""
    try:
        from torch._dynamo.eval_frame import set_code_exec_strategy
        from torch._dynamo.types import FrameAction, FrameExecStrategy
    except ImportError:  # a torch without dynamo's per-code strategies
        return
    for function in functions:
        code = getattr(getattr(function, "__func__", function), "__code__", None)
        if code is not None and code not in _SKIPPED_CODE:
            _SKIPPED_CODE.add(code)
            set_code_exec_strategy(code, FrameExecStrategy(FrameAction.SKIP, FrameAction.SKIP))


def is_compiled(model: Any, unwrapped: Any) -> bool:
    if hasattr(model, "_orig_mod"):
        return True
    return any(getattr(module, "_compiled_call_impl", None) is not None for module in unwrapped.modules())


def warn_when_compiling(what: str) -> Optional[Callable[[], None]]:
    """Warn once when dynamo starts compiling while the guard is on; returns the remover."""
    try:
        from torch._dynamo.callback import callback_handler
    except ImportError:
        return None
    warned = []

    def on_start(*args: Any) -> None:
        if not warned:
            warned.append(True)
            warnings.warn(COMPILED_MESSAGE.format(what=f"code running while the guard on {what} is installed"),
                          GuardWarning, stacklevel=2)

    def stop() -> None:
        if on_start in callback_handler.start_callbacks:  # torch._dynamo.reset() may have cleared them
            callback_handler.remove_start_callback(on_start)

    callback_handler.register_start_callback(on_start)
    return stop
