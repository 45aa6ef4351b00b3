"""The `.item()` values a method gives to Lightning's `self.log` / `self.log_dict`, and whether
the progress bar reads them every training batch.

Cost: `logged_values` one pass over a method's own nodes, O(arguments) per logging call.
"""

from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple

from torchlint.analysis.classes import self_attribute
from torchlint.analysis.value_kinds import plainly_host
from torchlint.core.lazy import cst
from torchlint.rules.training.host_sync_in_hot_path.syncs import sync_method


def logged_values(nodes: Sequence, instance: Optional[str], imports) -> Dict[object, bool]:
    """Of a method's own `nodes`, the `.item()` calls given as the value to `self.log(...)` / `self.log_dict({...})`,
    except on a value that is plainly not a tensor (see `torchlint.analysis.value_kinds.plainly_host`),
    which has no `.detach()`; each with whether Lightning's progress bar reads it every
    training batch (`prog_bar=True`, not `on_step=False`)."""
    found: Dict[object, bool] = {}
    if instance is None:
        return found
    for node in nodes:
        if type(node) is not cst.Call:
            continue
        method_name = self_attribute(node.func, instance)
        if method_name not in _LOG_SIGNATURES:
            continue
        signature = _LOG_SIGNATURES[method_name]
        bar = _argument(node, signature, "prog_bar")
        step = _argument(node, signature, "on_step")
        every_batch = _is_constant(bar, "True") and not _is_constant(step, "False")
        if method_name == "log":
            values = [_argument(node, signature, "value")]
        else:
            first = _argument(node, signature, "dictionary")
            elements = first.elements if isinstance(first, cst.Dict) else ()
            values = [element.value for element in elements if isinstance(element, cst.DictElement)]
        for value in values:
            if not isinstance(value, cst.Call) or sync_method(value) != "item":
                continue
            if not plainly_host(value.func.value, imports):
                found[value] = every_batch
    return found


# Lightning's parameters, in order, up to those read here
_LOG_SIGNATURES = {
    "log": ("name", "value", "prog_bar", "logger", "on_step"),
    "log_dict": ("dictionary", "prog_bar", "logger", "on_step"),
}


def _argument(call, signature: Tuple[str, ...], name: str):
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    index = signature.index(name)
    return positional[index] if index < len(positional) else None


def _is_constant(node, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name
