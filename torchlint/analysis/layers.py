"""What an expression constructs (LibCST): the layer class a call builds, seen through
`nn.Sequential`, parametrizations such as `weight_norm`, and factory functions of the
same file.

Cost: `constructed_layer` is linear in the expression, following at most 3 levels of
factories of the file; `returned_values` walks the factory's body once per call (O(calls
× factory) when many calls use one factory).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

from torchlint.analysis.modules import canonical
from torchlint.analysis.names import ImportMap, cst_dotted_name
from torchlint.core.lazy import cst
from torchlint.core.walk import walk


def module_functions(module) -> Dict[str, Any]:
    """The module-level functions of a file, by name (the last definition wins)."""
    return {
        statement.name.value: statement
        for statement in module.body
        if isinstance(statement, cst.FunctionDef)
    }


def returned_values(function) -> List:
    """The expressions a function returns (its own `return`s, not nested functions')."""
    return [
        node.value
        for node in walk(function.body, into_functions=False)
        if isinstance(node, cst.Return) and node.value is not None
    ]


@dataclass(frozen=True)
class Layer:
    """What an expression constructs: the canonical qualified name of the layer class,
    and where it sits in what was built (`(0,)`: the first layer of a Sequential)."""

    qualified: str
    index: Tuple[int, ...] = ()
    via: str = ""  # "", "sequential" or the name of the factory function


SEQUENTIAL = "torch.nn.Sequential"
# functions that return the module they are given, reparametrized: `weight_norm(nn.Conv1d(...))`
# is still that Conv1d
PARAMETRIZATIONS = frozenset(
    f"torch.nn.utils.{name}"
    for name in (
        "weight_norm", "spectral_norm", "weight_norm.weight_norm", "spectral_norm.spectral_norm",
        "parametrizations.weight_norm", "parametrizations.spectral_norm", "parametrizations.orthogonal",
        "parametrize.register_parametrization",
    )
)


def constructed_layer(
    expression, imports: ImportMap, functions: Mapping[str, Any] = {}, depth: int = 0
) -> Optional[Layer]:
    """The layer an expression builds: `nn.Conv2d(...)` -> torch.nn.Conv2d; for
    `nn.Sequential(first, ...)` its first layer at index (0,); for a call of a function of
    the same file (`conv_bn_relu(...)`, or a method given by `class_functions`), what
    every one of its returns builds. `functions` maps the dotted name a call uses to the
    FunctionDef it calls."""
    if depth > 3 or not isinstance(expression, cst.Call):
        return None
    qualified = canonical(imports.qualified_name(expression.func))
    if qualified == SEQUENTIAL:
        args = expression.args
        if not args or args[0].star or args[0].keyword is not None:
            return None
        inner = constructed_layer(args[0].value, imports, functions, depth + 1)
        if inner is None:
            return None
        return Layer(inner.qualified, (0,) + inner.index, "sequential")
    if qualified in PARAMETRIZATIONS:
        args = expression.args
        if not args or args[0].star or (args[0].keyword is not None and args[0].keyword.value != "module"):
            return None
        return constructed_layer(args[0].value, imports, functions, depth + 1)
    if qualified is not None:
        return Layer(qualified)
    dotted = cst_dotted_name(expression.func)
    factory = functions.get(dotted) if dotted else None
    if factory is not None:
        layers = {
            constructed_layer(value, imports, functions, depth + 1) for value in returned_values(factory)
        }
        if len(layers) == 1:
            layer = layers.pop()
            if layer is not None:
                return Layer(layer.qualified, layer.index, dotted)
    return None
