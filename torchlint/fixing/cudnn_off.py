"""TL004's remedy: run a recurrent layer's calls in `forward` with cuDNN off.

A layer held as `self.<attr>` of a class is run by `self.<attr>(...)` calls in `forward`
and in the methods `forward` calls on `self`; each statement making such a call is
wrapped in `with torch.backends.cudnn.flags(enabled=False):`. Also here: what a layer
must say for that (`RnnLayer`), whether code already turns cuDNN off, and the message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, List, Optional, Set, Tuple

from torchlint.core.diagnostics import Applicability, Edit, Fix, Location
from torchlint.core.lazy import cst
from torchlint.fixing.import_insertion import insert_import
from torchlint.analysis.names import ImportMap
from torchlint.analysis.flow_scopes import ClassScope, Scope
from torchlint.analysis.call_arguments import bound_argument
from torchlint.analysis.second_order import literal_truth

if TYPE_CHECKING:
    from torchlint.analysis.pending import RnnLayerNote

WRAPPER = "torch.backends.cudnn.flags(enabled=False)"
CUDNN_FLAGS = "torch.backends.cudnn.flags"
CUDNN_ENABLED = "torch.backends.cudnn.enabled"


@dataclass(eq=False)
class RnnLayer:
    """One constructor call of a cuDNN RNN (or of a class that may be one)."""

    node: Any
    kind: str  # the class built: `torch.nn.LSTM`, or a subclass `pkg.layers.TimeLSTM`
    label: str  # the constructor as written: `nn.LSTM`
    projection: Optional[str]  # `proj_size=64` when projected
    unknown_projection: bool  # `*args`/`**kwargs` could carry proj_size
    top: Set[str]  # the top-level names whose definitions contain the constructor
    cls: Optional[ClassScope]
    attr: Optional[str]  # `self.<attr> = nn.LSTM(...)`


def projection_of(call, kind: str, module) -> Tuple[Optional[str], bool]:
    """(`proj_size=<as written>` if the layer built by `call` (of class `kind`) is
    projected, else None; whether `*args`/`**kwargs` could carry proj_size)."""
    if kind in ("torch.nn.GRU", "torch.nn.RNN"):  # an LSTM projects, or a subclass of one of the three
        return None, False
    proj = bound_argument(call, "proj_size", 7 if kind == "torch.nn.LSTM" else None)
    if proj is None:
        return None, any(arg.star for arg in call.args)
    if isinstance(proj.value, cst.Integer) and proj.value.evaluated_value == 0:
        return None, False
    return "proj_size=" + " ".join(module.code_for_node(proj.value).split()), False


def turns_cudnn_off(expression, imports: ImportMap) -> bool:
    """Whether a `with` item is `torch.backends.cudnn.flags(enabled=False)`."""
    if not isinstance(expression, cst.Call) or imports.qualified_name(expression.func) != CUDNN_FLAGS:
        return False
    enabled = bound_argument(expression, "enabled", 0)
    return enabled is not None and literal_truth(enabled.value) is False


def layer_message(layer: "RnnLayerNote", where: str, what: str, more: int) -> str:
    """The finding's message, in this file's pass or in the project pass."""
    also = f" (and {more} more)" if more else ""
    if layer.projection:
        return (
            f"Projected `{layer.label}(...)` ({layer.projection}) is reached by double backward "
            f"at {where}{also} via {what}: cuDNN RNNs have no double backward on CUDA, and turning "
            "cuDNN off is not known to cover projections; see `torchlint rule TL004` for options"
        )
    message = (
        f"`{layer.label}(...)` is reached by double backward at {where}{also} via {what}: cuDNN "
        f"RNNs have no double backward on CUDA; run the layer under `{WRAPPER}`"
    )
    if layer.no_fix:
        message += f" (no automatic fix: {layer.no_fix})"
    return message


def forward_calls(layer: RnnLayer) -> List[Tuple[str, Scope, Any, bool]]:
    """The calls of `self.<attr>(...)` in forward and the methods forward calls on self."""
    cls = layer.cls
    if cls is None or layer.attr is None or "forward" not in cls.methods:
        return []
    methods, stack = set(), ["forward"]
    while stack:
        name = stack.pop()
        if name in methods or name not in cls.methods:
            continue
        methods.add(name)
        scope = cls.methods[name]
        for callee, _ in scope.calls:
            if scope.instance and callee.startswith(scope.instance + "."):
                stack.append(callee[len(scope.instance) + 1 :])
    return [call for call in cls.self_calls if call[0] == layer.attr and call[1].name in methods]

def already_fixed(layer: RnnLayer) -> bool:
    """Whether every call of the layer that `forward` runs is already under cuDNN off."""
    if layer.projection:
        return False
    calls = forward_calls(layer)
    return bool(calls) and all(off for *_, off in calls)

def no_fix_reason(layer: RnnLayer, context) -> Optional[str]:
    """Why the layer gets no automatic fix, or None if it does."""
    if layer.projection:
        return "projected"
    if layer.unknown_projection:
        return (
            "`*args`/`**kwargs` may set proj_size, so a projection could not be ruled out, "
            "and turning cuDNN off is not known to cover projections"
        )
    if layer.cls is None or layer.attr is None:
        return "the layer is not held as `self.<attr>` of a class"
    calls = [call for call in forward_calls(layer) if not call[3]]
    if not calls:
        return f"`self.{layer.attr}` is not called in `forward`"
    for _, _, statement, _ in calls:
        if not isinstance(statement, cst.SimpleStatementLine):
            return f"`self.{layer.attr}(...)` is called in a one-line block"
        code = context.module.code_for_node(statement)
        if ('"""' in code or "'''" in code) and "\n" in code.strip():
            return f"`self.{layer.attr}(...)` is called in a statement with a multi-line string"
    torch = context.imports.table.get("torch")
    if torch not in (None, "torch"):
        return "`torch` names something else in this file"
    return None

def cudnn_off_fix(layer: RnnLayer, context, positions) -> Fix:
    """The unsafe fix: each statement of `forward` (and of what it calls on `self`) that
    calls the layer, wrapped in `with torch.backends.cudnn.flags(enabled=False):`."""
    newline = context.newline
    edits: List[Edit] = []
    done: Set[int] = set()
    for _, _, statement, off in forward_calls(layer):
        if off or id(statement) in done:
            continue
        done.add(id(statement))
        first, last = positions.start(statement).row, positions.end(statement).row
        indent = positions.indent_of(statement)
        unit = _indent_unit(indent, context.module.default_indent)
        body = "".join(
            (unit + line if line.strip() else line) + newline for line in positions.lines[first - 1 : last]
        )
        text = f"{indent}with {WRAPPER}:{newline}{body}"
        edits.append(Edit(Location(first, 1), Location(last + 1, 1), text))
    if context.imports.table.get("torch") != "torch":
        edits.append(insert_import(context.module, positions, context.newline))
    edits.sort(key=lambda edit: edit.start)
    return Fix(f"Run `self.{layer.attr}` with cuDNN off", tuple(edits), Applicability.UNSAFE)


def _indent_unit(indent: str, default: str) -> str:
    """One more level inside a block indented by `indent`, in that block's own character:
    the module's default (taken from its first block) may be a tab where this block uses
    spaces, and mixing them is a TabError."""
    if indent.endswith("\t"):
        return "\t"
    return default if "\t" not in default else "    "
