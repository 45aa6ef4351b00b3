"""Which calls differentiate twice: `create_graph=True` and the calls that always do.

Shared knowledge of PyTorch's autograd API, read by the stdlib-ast gate and by the LibCST
traversal alike.

Cost: the call checks are O(arguments); `transform_of` follows each (scope, name) at
most once per call; `create_graph_note` climbs the scopes around one name.
"""

from __future__ import annotations

import ast
from typing import Any, Callable, Iterable, Optional, Tuple

from torchlint.core.lazy import cst
from torchlint.analysis.modules import canonical
from torchlint.analysis.names import ImportMap
from torchlint.analysis.flow_scopes import Scope
from torchlint.analysis.call_arguments import bound_argument

# callables that build a second-order graph when `create_graph` is true: the positional
# index of `create_graph` in their signature
CREATE_GRAPH_AT = {
    "torch.autograd.grad": 4,
    "torch.autograd.backward": 3,
    "torch.autograd.functional.jacobian": 2,
    "torch.autograd.functional.vjp": 3,
}
# always second order (jvp: torch.autograd.functional computes it with the double-vjp trick)
ALWAYS_SECOND_ORDER = frozenset(
    {
        "torch.autograd.functional.hessian",
        "torch.autograd.functional.hvp",
        "torch.autograd.functional.vhp",
        "torch.autograd.functional.jvp",
        "torch.autograd.gradgradcheck",
        "torch.autograd.gradcheck.gradgradcheck",
        "torch.func.hessian",
        "functorch.hessian",
    }
)
# function transforms: nesting two of them (not both forward-mode) differentiates twice
TRANSFORMS = {
    f"{package}.{name}": name
    for package in ("torch.func", "functorch")
    for name in ("grad", "grad_and_value", "jacrev", "jacfwd", "hessian")
}


def literal_truth(node) -> Optional[bool]:
    """The truth of a literal (`True`, `0`, `None`); None if not a literal."""
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return node.value == "True"
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.evaluated_value != 0
    return None


def _ast_false(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and not node.value


def ast_may_create_graph(node: ast.Call, qualified: Optional[str]) -> bool:
    """Whether a call (stdlib ast) passes a `create_graph` that is not literally false."""
    if any(k.arg == "create_graph" and not _ast_false(k.value) for k in node.keywords):
        return True
    index = CREATE_GRAPH_AT.get(qualified or "")
    if index is not None and len(node.args) > index and not _ast_false(node.args[index]):
        return True
    is_backward = isinstance(node.func, ast.Attribute) and node.func.attr == "backward"
    return is_backward and len(node.args) > 2 and not _ast_false(node.args[2])


def ast_differentiates_twice(calls: Iterable[Tuple[ast.Call, Optional[str]]]) -> bool:
    """Whether any of these (call, qualified name of its function) may differentiate
    twice (the stdlib-ast counterpart of `second_order_call`, a superset of it)."""
    transforms = 0
    for node, qualified in calls:
        if qualified in ALWAYS_SECOND_ORDER or ast_may_create_graph(node, qualified):
            return True
        transforms += qualified in TRANSFORMS
    return transforms >= 2


def runs_first_argument(qualified: Optional[str], callee: Optional[str]) -> bool:
    """Whether a call runs the function it is given first (`hessian(f, x)`, `jacrev(f)`,
    `functional_call(net, ...)`, `vmap(f)`)."""
    return (
        qualified in TRANSFORMS
        or qualified in ALWAYS_SECOND_ORDER
        or qualified in ("torch.autograd.functional.jacobian", "torch.autograd.functional.vjp")
        or (callee or "").rsplit(".", 1)[-1] in ("functional_call", "vmap")
    )


def transform_of(expression, scope: Optional[Scope], imports: ImportMap) -> Optional[str]:
    """Which function transform an expression is: `jacrev(f)`, or a name that `scope`
    (or a scope around it) assigns one to (the first value, in binding order, that is one
    or names one).

    Cost: O(values bound to the names it follows) per call: a name is followed at most
    once per (scope, name) in a call (a name followed again, on a cycle such as
    `f = g; g = f` or through a second path, adds nothing: everything followed before the
    first transform found is not one)."""
    return _transform_of(expression, scope, imports, set())


def _transform_of(expression, scope: Optional[Scope], imports: ImportMap, seen: set) -> Optional[str]:
    if isinstance(expression, cst.Call):
        return TRANSFORMS.get(canonical(imports.qualified_name(expression.func)) or "")
    if isinstance(expression, cst.Name):
        while scope is not None:
            key = (id(scope), expression.value)
            if key in seen:
                # followed already in this call: it found nothing (or is still being
                # followed, a cycle): nothing here or in the scopes around it either
                return None
            seen.add(key)
            for value in scope.assigns.get(expression.value, ()):
                found = _transform_of(value, scope, imports, seen)
                if found:
                    return found
            scope = scope.parent
    return None


def second_order_call(node, qualified: Optional[str], scope: Scope, imports: ImportMap):
    """(how to describe it, the `create_graph` expression or None) if the call (whose
    function resolves to `qualified`, made in `scope`) may differentiate twice, else None."""
    if qualified in ALWAYS_SECOND_ORDER:
        return f"`{qualified}(...)`", None
    if qualified in CREATE_GRAPH_AT:
        arg = bound_argument(node, "create_graph", CREATE_GRAPH_AT[qualified])
        if arg is not None and literal_truth(arg.value) is not False:
            return f"`{qualified}(..., create_graph=%s)`", arg.value
        return None
    if isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward":
        arg = bound_argument(node, "create_graph", 2)
        if arg is not None and literal_truth(arg.value) is not False:
            return "`.backward(create_graph=%s)`", arg.value
        return None
    outer = TRANSFORMS.get(qualified or "")
    if outer is not None and node.args and node.args[0].keyword is None and not node.args[0].star:
        inner = transform_of(node.args[0].value, scope, imports)
        if inner is not None and not (outer == inner == "jacfwd"):
            return f"`{outer}({inner}(...))`", None
    return None


def differentiated(call, qualified: Optional[str]) -> Tuple[Any, Any]:
    """(outputs, inputs) of a second-order call, where it names them."""
    if qualified in ("torch.autograd.grad", "torch.autograd.backward"):
        outputs = bound_argument(call, "outputs" if qualified.endswith("grad") else "tensors", 0)
        inputs = bound_argument(call, "inputs", 1 if qualified.endswith("grad") else None)
        return (outputs.value if outputs else None), (inputs.value if inputs else None)
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward":
        inputs = bound_argument(call, "inputs", None)
        return call.func.value, (inputs.value if inputs else None)
    return None, None


def create_graph_note(value, scope: Scope, passed: Callable[[Scope, str], list], code: str) -> Optional[str]:
    """None if a call's `create_graph` expression `value` (written `code`, in `scope`)
    cannot be true; "" if it is literally true (or the call always differentiates twice:
    `value` None); else why it can be. `passed(function_scope, parameter)`: the values the
    calls of the file pass for that parameter."""
    if value is None or literal_truth(value) is True:
        return ""
    if isinstance(value, cst.Name):
        name = value.value
        while scope is not None:
            if name in scope.params:
                default = scope.defaults.get(name)
                if default is None or literal_truth(default) is not False:
                    return f", and `{code}` can be True"
                if any(literal_truth(value) is not False for value in passed(scope, name)):
                    return f", and a call in this file passes `{code}` as True"
                return None
            if name in scope.assigns:
                if all(literal_truth(v) is False for v in scope.assigns[name]):
                    return None
                return f", and `{code}` can be True"
            scope = scope.parent
    return f", and `{code}` can be True"
