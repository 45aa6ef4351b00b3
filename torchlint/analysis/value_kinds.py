"""Value kinds: whether an expression can be a torch tensor on a device.

A sync rule reads `.item()`, `.tolist()`, `.numpy()` and `float()` on tensors; the same
calls on a numpy array, a Python number or list, or a tensor just built on the CPU wait
for nothing. Within one function, and through simple assignments (`poly =
np.asarray(...)`, `n = len(x)`), an expression is:

- `HOST`: a number, string, list, tuple, dict or set (literal, comprehension, `list()`,
  `len()`, `float()`, ...); a call or attribute chain rooted in numpy, math, cv2, PIL,
  pandas, scipy or `random`; the result of `.numpy()`, `.tolist()`, `.item()`; a
  subscript, attribute or method of a `HOST` value (`arr.T`, `arr.reshape(-1)`);
  arithmetic on `HOST` values only;
- `TENSOR`: a torch call (`torch.from_numpy(a)`, `x.to(device)`, `x.cuda()`);
- `UNKNOWN`: anything else (a parameter, a loop variable, an attribute of `self`).

Unknown stays unknown: rules report it where they would without this analysis. Only the
rules ask (`cst_kind`, on LibCST); no gate or fact needs a value's kind.
"""

from __future__ import annotations

import ast
import enum
from typing import Dict, List, Mapping, Optional, Sequence

from torchlint.core.lazy import cst
from torchlint.analysis.statements import assigned_names
from torchlint.analysis.names import ast_dotted_name, resolve


class Kind(enum.Enum):
    HOST = "host"
    TENSOR = "tensor"
    UNKNOWN = "unknown"


# modules whose values are never torch tensors
HOST_MODULES = frozenset({"numpy", "math", "cv2", "PIL", "pandas", "scipy", "random", "statistics", "skimage"})
# builtins that return a Python value (not `sum`, `max`, `min`, `abs`: on tensors they give tensors)
HOST_BUILTINS = frozenset(
    {"len", "float", "int", "bool", "str", "list", "tuple", "dict", "set", "sorted", "range", "round", "repr", "format"}
)
# methods whose result is a host value whatever the receiver
HOST_METHODS = frozenset({"numpy", "tolist", "item"})
# methods whose result is a tensor on the receiver's device or another one
TENSOR_METHODS = frozenset({"to", "cuda", "detach", "float", "half", "long", "int", "bool", "contiguous", "clone"})
_DEPTH = 6


def combine(kinds: Sequence[Kind]) -> Kind:
    """Several possible values: `HOST` if all are, `TENSOR` if any is, else `UNKNOWN`."""
    if not kinds:
        return Kind.UNKNOWN
    if all(kind is Kind.HOST for kind in kinds):
        return Kind.HOST
    return Kind.TENSOR if Kind.TENSOR in kinds else Kind.UNKNOWN


def _module_kind(qualified: Optional[str]) -> Optional[Kind]:
    if not qualified:
        return None
    head = qualified.split(".", 1)[0]
    if head in HOST_MODULES:
        return Kind.HOST
    return Kind.TENSOR if head == "torch" else None


# ---- LibCST -----------------------------------------------------------------------

_CST_LITERALS = (
    "Integer", "Float", "Imaginary", "SimpleString", "ConcatenatedString", "FormattedString", "List", "Tuple",
    "Dict", "Set", "ListComp", "DictComp", "SetComp",
)


def cst_bindings(nodes) -> Dict[str, List]:
    """Name -> the values a function assigns it with a plain `name = value` (from the
    function's own nodes); a name bound any other way maps to None among its values."""
    found: Dict[str, List] = {}
    for node in nodes:
        kind = type(node)
        if kind is cst.Assign:
            for target in node.targets:
                if type(target.target) is cst.Name:
                    found.setdefault(target.target.value, []).append(node.value)
                else:
                    for name in assigned_names(target.target):
                        found.setdefault(name, []).append(None)
        elif kind in (cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr) or (kind is cst.AnnAssign):
            for name in assigned_names(node.target):
                found.setdefault(name, []).append(node.value if kind in (cst.NamedExpr, cst.AnnAssign) else None)
        elif kind is cst.AsName:
            for name in assigned_names(node.name):
                found.setdefault(name, []).append(None)
    return found


def cst_kind(expression, imports, bindings: Optional[Mapping[str, List]] = None, depth: int = 0) -> Kind:
    """The `Kind` of a LibCST expression (`imports`: the file's `ImportMap`; `bindings`:
    what `cst_bindings` gives for the enclosing function)."""
    if depth > _DEPTH or expression is None:
        return Kind.UNKNOWN
    name = type(expression).__name__
    if name in _CST_LITERALS:
        return Kind.HOST
    if name == "UnaryOperation":
        return cst_kind(expression.expression, imports, bindings, depth + 1)
    if name == "IfExp":
        return combine([cst_kind(expression.body, imports, bindings, depth + 1),
                        cst_kind(expression.orelse, imports, bindings, depth + 1)])
    if name == "BinaryOperation":
        return _arithmetic(cst_kind(expression.left, imports, bindings, depth + 1),
                           cst_kind(expression.right, imports, bindings, depth + 1))
    if name == "Call":
        func = expression.func
        if type(func) is cst.Name and func.value in HOST_BUILTINS and imports.qualified_name(func) is None:
            return Kind.HOST
        if type(func) is cst.Attribute:
            attr = func.attr.value
            if attr in HOST_METHODS:
                return Kind.HOST
            module = _module_kind(imports.qualified_name(func))
            if module is not None:
                return module
            if attr in TENSOR_METHODS:
                return Kind.TENSOR
            return _receiver(cst_kind(func.value, imports, bindings, depth + 1))
        return _module_kind(imports.qualified_name(func)) or Kind.UNKNOWN
    if name in ("Attribute", "Subscript"):
        module = _module_kind(imports.qualified_name(expression)) if name == "Attribute" else None
        if module is not None:
            return module
        return _receiver(cst_kind(expression.value, imports, bindings, depth + 1))
    if name == "Name":
        values = (bindings or {}).get(expression.value)
        if values is None:
            return _module_kind(imports.qualified_name(expression)) or Kind.UNKNOWN
        return combine([cst_kind(v, imports, bindings, depth + 1) if v is not None else Kind.UNKNOWN for v in values])
    return Kind.UNKNOWN


def cst_is_numpy(expression, imports, bindings: Optional[Mapping[str, List]] = None, depth: int = 0) -> bool:
    """Whether a LibCST expression is a NumPy value (an array or a NumPy scalar such as
    `np.float64`), which `torch.load(..., weights_only=True)` refuses to unpickle: a
    `numpy.*` call or constant, `.numpy()`, an item, attribute, method or arithmetic of
    such a value (`.item()` and `.tolist()` give Python values), or a name a function
    binds only to such values."""
    if depth > _DEPTH or expression is None:
        return False
    name = type(expression).__name__
    if name == "Call":
        func = expression.func
        if type(func) is cst.Attribute:
            if func.attr.value == "numpy":
                return True
            if func.attr.value in ("item", "tolist"):
                return False
        if (imports.qualified_name(func) or "").startswith("numpy."):
            return True
        return type(func) is cst.Attribute and cst_is_numpy(func.value, imports, bindings, depth + 1)
    if name in ("Attribute", "Subscript"):
        if name == "Attribute" and (imports.qualified_name(expression) or "").startswith("numpy."):
            return True
        return cst_is_numpy(expression.value, imports, bindings, depth + 1)
    if name == "BinaryOperation":
        return any(cst_is_numpy(side, imports, bindings, depth + 1) for side in (expression.left, expression.right))
    if name == "Name":
        values = (bindings or {}).get(expression.value)
        return bool(values) and all(
            value is not None and cst_is_numpy(value, imports, bindings, depth + 1) for value in values
        )
    return False


# ---- a tensor just built on the CPU (both forms) -----------------------------------


# torch factories that build a new tensor on the CPU unless given a `device`
_CPU_FACTORIES = frozenset(
    f"torch.{name}"
    for name in (
        "rand", "randn", "randint", "randperm", "tensor", "as_tensor", "empty", "zeros", "ones", "full",
        "arange", "linspace", "logspace", "normal", "poisson", "bernoulli", "multinomial", "Tensor",
        "FloatTensor", "LongTensor",
    )
)
# methods that keep a tensor where it is (in place, or a new tensor on the same device)
_MOVES = frozenset({"to", "cuda", "type", "as_subclass"})


def fresh_cpu_tensor(expression, imports) -> bool:
    """Whether an expression is a tensor just built on the CPU by a torch factory without
    a `device` (`torch.rand(1)`, `torch.empty(1).uniform_(0, 1)`): reading it syncs nothing."""
    while isinstance(expression, (cst.Call, cst.Attribute, cst.Subscript)):
        if isinstance(expression, cst.Call):
            func = expression.func
            qualified = imports.qualified_name(func)
            if qualified in _CPU_FACTORIES:
                return not any(arg.keyword is not None and arg.keyword.value == "device" for arg in expression.args)
            if qualified and qualified.startswith("torch.") and expression.args and expression.args[0].keyword is None:
                # a torch op gives its result on its input's device: `torch.exp(torch.rand(1))`
                return fresh_cpu_tensor(expression.args[0].value, imports)
            if isinstance(func, cst.Attribute) and func.attr.value in _MOVES:
                return False
            expression = func
        elif isinstance(expression, cst.Attribute):
            expression = expression.value
        else:
            expression = expression.value
    return False


def plainly_host(expression, imports) -> bool:
    """Whether an expression is plainly not a tensor, from the expression alone: a
    number, a literal, or a value rooted in numpy, math and the like (`np.float32(1)`,
    `np.mean(a)`)."""
    return cst_kind(expression, imports) is Kind.HOST


def ast_fresh_cpu_tensor(node: ast.AST, table: Mapping[str, str]) -> bool:
    """The stdlib-ast counterpart of `fresh_cpu_tensor` (a superset of what it says is
    not fresh, so gates built on it stay necessary conditions)."""
    while isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Call):
            func = node.func
            if resolve(ast_dotted_name(func), table) in _CPU_FACTORIES:
                return not any(keyword.arg == "device" or keyword.arg is None for keyword in node.keywords)
            if isinstance(func, ast.Attribute) and func.attr in _MOVES:
                return False
            node = func
        else:
            node = node.value
    return False


# ---- shared decisions ----------------------------------------------------------------


def _arithmetic(left: Kind, right: Kind) -> Kind:
    if left is Kind.TENSOR or right is Kind.TENSOR:
        return Kind.TENSOR
    return Kind.HOST if left is right is Kind.HOST else Kind.UNKNOWN


def _receiver(kind: Kind) -> Kind:
    """A method, attribute or item of a host value is a host value; of a tensor, unknown
    (`t.shape`, `t.dim()` are numbers, `t.sum()` a tensor)."""
    return Kind.HOST if kind is Kind.HOST else Kind.UNKNOWN
