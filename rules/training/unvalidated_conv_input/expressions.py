"""What TL002 reads from one expression or statement of `forward` (LibCST): calls in
evaluation order, a convolution's input, the axis a concatenation joins, shape reads,
check calls, and calls whose channel count is written down.

Cost: each function O(the expression or statement given); `calls_in_order` recurses through
the expression (generators nested as deep as the expression: O(depth²) for a left-nested `a + b + ...`).
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Tuple

from torchlint.analysis.classes import self_attribute
from torchlint.analysis.modules import canonical
from torchlint.analysis.names import cst_dotted_name
from torchlint.core.lazy import cst
from torchlint.core.walk import children, walk

# methods that return the same tensor's data with the same channel layout
_SAME_CHANNELS = frozenset(
    {"float", "half", "double", "bfloat16", "to", "contiguous", "cuda", "cpu", "type", "type_as", "detach", "clone"}
)
_CHECK_PREFIXES = ("check", "validate", "assert", "ensure")


# reductions that, over the channel axis with keepdim=True, leave one channel (CBAM's
# `torch.cat([x.mean(1, keepdim=True), x.max(1, keepdim=True)[0]], 1)`)
_REDUCTIONS = frozenset({"mean", "sum", "max", "min", "amax", "amin", "std", "var", "norm", "logsumexp", "prod"})
# calls whose second positional argument is the channel count of what they build
_SHAPED = frozenset(
    {"reshape", "view", "new_zeros", "new_ones", "new_empty", "zeros", "ones", "empty", "rand", "randn"}
)


def fixed_channels(call) -> bool:
    """Whether a call's result has a channel count written in the call, whatever its
    input: a reduction over axis 1 with `keepdim=True` (one channel), or
    `t.reshape(b, 2, h, w)` / `torch.zeros(b, 1, h, w)` with a literal channel count."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    if name in _REDUCTIONS:
        keep = keywords.get("keepdim")
        if not (isinstance(keep, cst.Name) and keep.value == "True"):
            return False
        # x.mean(1, ...) or torch.mean(x, 1, ...): the axis follows the tensor
        axis = keywords.get("dim", keywords.get("axis"))
        if axis is None:
            position = 0 if isinstance(func, cst.Attribute) and not _is_torch_module(func.value) else 1
            axis = positional[position] if len(positional) > position else None
        return isinstance(axis, cst.Integer) and axis.evaluated_value == 1
    if name in _SHAPED and len(positional) >= 3 and not any(arg.star for arg in call.args):
        return isinstance(positional[1], cst.Integer)
    return False


def _is_torch_module(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "torch"


def parameter_positions(forward) -> Dict[str, Optional[int]]:
    """forward's parameters after `self`: name -> position (None for keyword-only)."""
    params = forward.params
    positional = [p.name.value for p in (*params.posonly_params, *params.params)][1:]
    found: Dict[str, Optional[int]] = {name: index for index, name in enumerate(positional)}
    found.update((p.name.value, None) for p in params.kwonly_params)
    return found


def concat_axis(call) -> Optional[int]:
    """The `dim` a torch.cat/stack call joins along, if written as an integer literal
    (`dim=1`, `axis=-3`, the second positional argument; 0 when left out)."""
    found = None
    for position, arg in enumerate(call.args):
        if arg.star:
            return None
        named = arg.keyword is not None and arg.keyword.value in ("dim", "axis")
        if (arg.keyword is None and position == 1) or named:
            found = arg.value
    if found is None:
        return 0
    sign = 1
    if isinstance(found, cst.UnaryOperation) and isinstance(found.operator, cst.Minus):
        sign, found = -1, found.expression
    return sign * found.evaluated_value if isinstance(found, cst.Integer) else None


def joins_channels(axis: Optional[int], dims: int) -> bool:
    """Whether joining along `axis` adds up channels for a conv with `dims` spatial dims:
    axis 1 of a batch, or the channel axis counted from the end. A time or batch axis
    (causal padding, stacked samples) does not, nor an axis the code computes."""
    return axis is not None and axis in (1, -(dims + 1))


def placeholder(value, imports) -> Optional[str]:
    """"None" for `None`, "Identity" for `nn.Identity()`: what a class stores where it
    has no conv to put."""
    if isinstance(value, cst.Name) and value.value == "None":
        return "None"
    if isinstance(value, cst.Call) and canonical(imports.qualified_name(value.func)) == "torch.nn.Identity":
        return "Identity"
    return None


def present_attribute(test, instance: str) -> Optional[str]:
    """`x` for a test `self.x is not None` or `self.x`: true only when self.x is set."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if isinstance(target.operator, cst.IsNot) and isinstance(target.comparator, cst.Name):
            if target.comparator.value == "None":
                return self_attribute(test.left, instance)
        return None
    return self_attribute(test, instance)


def shape_sources(value, tracked) -> set:
    """The tracked names whose shape an expression reads: `x` in `x.shape[1]`,
    `x.size(1)`, `x.dim()`, `x.ndim`."""
    found = set()
    for node in walk(value):
        if (
            isinstance(node, cst.Attribute)
            and node.attr.value in ("shape", "size", "dim", "ndim", "ndimension")
            and isinstance(node.value, cst.Name)
            and node.value.value in tracked
        ):
            found.add(node.value.value)
    return found


def calls_in_order(node, conditional: bool) -> Iterator[Tuple[object, bool]]:
    """Calls in an expression, in evaluation order (roughly), each with whether it runs
    only on some paths through the statement."""
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return
    if isinstance(node, cst.Lambda):
        yield from calls_in_order(node.body, True)
        return
    if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
        for child in children(node):
            yield from calls_in_order(child, True)
        return
    if isinstance(node, cst.IfExp):
        yield from calls_in_order(node.test, conditional)
        yield from calls_in_order(node.body, True)
        yield from calls_in_order(node.orelse, True)
        return
    if isinstance(node, cst.BooleanOperation):
        yield from calls_in_order(node.left, conditional)
        yield from calls_in_order(node.right, True)
        return
    if isinstance(node, cst.Call):
        # arguments are evaluated before the call itself
        for child in children(node):
            yield from calls_in_order(child, conditional)
        yield node, conditional
        return
    for child in children(node):
        yield from calls_in_order(child, conditional)


def conv_input(call):
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            return arg.value
        if arg.keyword.value == "input":
            return arg.value
    return None


def is_check_call(call) -> bool:
    dotted = cst_dotted_name(call.func)
    if dotted is None:
        return False
    return dotted.rsplit(".", 1)[-1].lstrip("_").lower().startswith(_CHECK_PREFIXES)


def raises(block) -> bool:
    body = block.body if isinstance(block, cst.IndentedBlock) else (block,)
    for statement in body:
        smalls = statement.body if isinstance(statement, cst.SimpleStatementLine) else ()
        if isinstance(block, cst.SimpleStatementSuite):
            smalls = block.body
        if any(isinstance(small, cst.Raise) for small in smalls):
            return True
    return False


def same_channels_source(value) -> Optional[str]:
    """`x` for `x.float()`, `x.to(device)`, `x.contiguous()`..., else None."""
    while (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in _SAME_CHANNELS
    ):
        value = value.func.value
    return value.value if isinstance(value, cst.Name) else None


def header_expressions(statement) -> List:
    if isinstance(statement, cst.For):
        return [statement.iter]
    if isinstance(statement, cst.While):
        return [statement.test]
    if isinstance(statement, cst.With):
        return [item.item for item in statement.items]
    return []


def header_targets(statement) -> List:
    if isinstance(statement, cst.For):
        return [statement.target]
    if isinstance(statement, cst.With):
        return [item.asname.name for item in statement.items if item.asname is not None]
    return []
