"""What TL003 counts as an explicit host sync (`.item()`, `.tolist()`, `.numpy()`,
`torch.cuda.synchronize()`), on LibCST and on the stdlib ast (the gate), and the timers a sync may serve.

Cost: O(1) per call or receiver chain; `calls_a_timer` one pass over a method's nodes.
"""

from __future__ import annotations

import ast
from typing import Optional, Sequence

from torchlint.analysis.names import ast_dotted_name, resolve
from torchlint.core.lazy import cst

SYNC_METHODS = ("item", "tolist", "numpy")
SYNCHRONIZE = "torch.cuda.synchronize"
_TIMERS = frozenset({"time.time", "time.perf_counter", "time.monotonic", "time.perf_counter_ns", "time.time_ns"})


def calls_a_timer(nodes: Sequence, imports) -> bool:
    return any(type(node) is cst.Call and imports.qualified_name(node.func) in _TIMERS for node in nodes)


def sync_method(call) -> Optional[str]:
    """`item` for `t.item()`, `tolist`, `numpy` (`numpy(force=True)` too); None otherwise."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in SYNC_METHODS:
        return None
    if any(arg.keyword is None or arg.keyword.value != "force" for arg in call.args):
        return None
    if func.attr.value != "numpy" and call.args:
        return None
    return func.attr.value


def is_sync(call, imports) -> bool:
    """Whether a LibCST call is an explicit sync (the visitor's counterpart of `ast_is_sync`)."""
    return sync_method(call) is not None or imports.qualified_name(call.func) == SYNCHRONIZE


def after_sync(receiver) -> bool:
    """Whether a receiver already went through a sync (`x.numpy()` in `x.numpy().tolist()`):
    one value, one finding."""
    while isinstance(receiver, (cst.Call, cst.Attribute, cst.Subscript)):
        if isinstance(receiver, cst.Call):
            if sync_method(receiver) is not None:
                return True
            receiver = receiver.func
        else:
            receiver = receiver.value
    return False


def sync_receiver(call):
    """The tensor an explicit sync reads (`x` in `x.item()`), or None."""
    return call.func.value if sync_method(call) is not None else None


def ast_is_sync(node, imports) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):  # `from torch.cuda import synchronize`
        return resolve(func.id, imports) == SYNCHRONIZE
    if not isinstance(func, ast.Attribute):
        return False
    attr = func.attr
    if attr in ("item", "tolist"):
        return not node.args and not node.keywords
    if attr == "numpy":
        return not node.args
    if attr == "synchronize":
        return resolve(ast_dotted_name(func), imports) == SYNCHRONIZE
    return False
