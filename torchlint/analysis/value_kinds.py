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
- `TENSOR`: a torch call (`torch.from_numpy(a)`, `x.to(device)`, `x.cuda()`), arithmetic
  with a `TENSOR`, a reduction or elementwise method of one (`t.sum()`, `t.abs()`);
- `UNKNOWN`: anything else (a parameter, a loop variable, an attribute of `self`).

Unknown stays unknown: rules report it where they would without this analysis. Only the
rules ask (`NameKinds`, on LibCST); no gate or fact needs a value's kind.

Cost: `NameKinds` computes each name's kind once per function: a query costs its
expression, all queries together at most the function's bindings on top;
`fresh_cpu_tensor` and `plainly_host` are linear in the call chain.
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
# methods whose result, on a tensor, is a tensor (reductions and elementwise maths; not
# `max`/`min`, which give a pair with `dim`)
OF_TENSOR_METHODS = frozenset(
    {"sum", "mean", "abs", "exp", "log", "sqrt", "pow", "square", "neg", "clamp", "clamp_min", "clamp_max",
     "sigmoid", "softmax", "log_softmax", "norm", "prod", "reciprocal", "squeeze", "unsqueeze", "flatten"}
)
_DEPTH = 6
_OPEN_NAMES = 50


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


class NameKinds:
    """The kinds of one function's expressions. A name's kind combines the kinds of every
    value the function binds it to (`cst_bindings`), and is computed once: a query costs
    the size of its expression, and all queries together at most the size of the
    function's bindings on top, however often a name is rebound or used (a name that is
    being computed, as in `loss = loss + aux`, counts as `UNKNOWN` where it recurs).

    Within one expression the walk stops `_DEPTH` levels down (`UNKNOWN`, not `HOST`), and
    at most `_OPEN_NAMES` names are computed inside each other (longer chains of names are
    `UNKNOWN`), so Python's stack stays shallow."""

    def __init__(self, imports, bindings: Optional[Mapping[str, List]] = None) -> None:
        self._imports = imports
        self._bindings = bindings or {}
        self._kinds: Dict[str, Kind] = {}
        self._numpy: Dict[str, bool] = {}
        self._open: set = set()

    def kind(self, expression, depth: int = 0) -> Kind:
        """The `Kind` of a LibCST expression."""
        if depth > _DEPTH or expression is None:
            return Kind.UNKNOWN
        imports = self._imports
        name = type(expression).__name__
        if name in _CST_LITERALS:
            return Kind.HOST
        if name == "UnaryOperation":
            return self.kind(expression.expression, depth + 1)
        if name == "IfExp":
            return combine([self.kind(expression.body, depth + 1), self.kind(expression.orelse, depth + 1)])
        if name == "BinaryOperation":
            return _arithmetic(self.kind(expression.left, depth + 1), self.kind(expression.right, depth + 1))
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
                receiver = self.kind(func.value, depth + 1)
                return Kind.TENSOR if receiver is Kind.TENSOR and attr in OF_TENSOR_METHODS else _receiver(receiver)
            return _module_kind(imports.qualified_name(func)) or Kind.UNKNOWN
        if name in ("Attribute", "Subscript"):
            module = _module_kind(imports.qualified_name(expression)) if name == "Attribute" else None
            if module is not None:
                return module
            return _receiver(self.kind(expression.value, depth + 1))
        if name == "Name":
            if expression.value not in self._bindings:
                return _module_kind(imports.qualified_name(expression)) or Kind.UNKNOWN
            return self._name_kind(expression.value)
        return Kind.UNKNOWN

    def is_numpy(self, expression, depth: int = 0) -> bool:
        """Whether a LibCST expression is a NumPy value (an array or a NumPy scalar such as
        `np.float64`), which `torch.load(..., weights_only=True)` refuses to unpickle: a
        `numpy.*` call or constant, `.numpy()`, an item, attribute, method or arithmetic of
        such a value (`.item()` and `.tolist()` give Python values), or a name the function
        binds only to such values."""
        if depth > _DEPTH or expression is None:
            return False
        qualified = self._imports.qualified_name
        name = type(expression).__name__
        if name == "Call":
            func = expression.func
            if type(func) is cst.Attribute:
                if func.attr.value == "numpy":
                    return True
                if func.attr.value in ("item", "tolist"):
                    return False
            if (qualified(func) or "").startswith("numpy."):
                return True
            return type(func) is cst.Attribute and self.is_numpy(func.value, depth + 1)
        if name in ("Attribute", "Subscript"):
            if name == "Attribute" and (qualified(expression) or "").startswith("numpy."):
                return True
            return self.is_numpy(expression.value, depth + 1)
        if name == "BinaryOperation":
            return any(self.is_numpy(side, depth + 1) for side in (expression.left, expression.right))
        if name == "Name":
            return self._name_is_numpy(expression.value)
        return False

    def _name_kind(self, name: str) -> Kind:
        known = self._kinds.get(name)
        if known is not None:
            return known
        if name in self._open or len(self._open) >= _OPEN_NAMES:
            return Kind.UNKNOWN
        self._open.add(name)
        try:
            found = combine([self.kind(v, 1) if v is not None else Kind.UNKNOWN for v in self._bindings[name]])
        finally:
            self._open.discard(name)
        self._kinds[name] = found
        return found

    def _name_is_numpy(self, name: str) -> bool:
        known = self._numpy.get(name)
        if known is not None:
            return known
        values = self._bindings.get(name)
        if not values or name in self._open or len(self._open) >= _OPEN_NAMES:
            return False
        self._open.add(name)
        try:
            found = all(value is not None and self.is_numpy(value, 1) for value in values)
        finally:
            self._open.discard(name)
        self._numpy[name] = found
        return found


# ---- a tensor just built on the CPU (both forms) -----------------------------------


# torch factories that build a new tensor on the CPU unless given a `device` (not
# `multinomial`, `poisson`, `bernoulli`: they sample from a tensor, on its device)
_CPU_FACTORIES = frozenset(
    f"torch.{name}"
    for name in (
        "rand", "randn", "randint", "randperm", "tensor", "as_tensor", "empty", "zeros", "ones", "full",
        "arange", "linspace", "logspace", "normal", "Tensor",
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
    return NameKinds(imports).kind(expression) is Kind.HOST


def ast_fresh_cpu_tensor(node: ast.AST, table: Mapping[str, str]) -> bool:
    """The stdlib-ast counterpart of `fresh_cpu_tensor` (a superset of what it says is
    not fresh, so gates built on it stay necessary conditions)."""
    while isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Call):
            func = node.func
            qualified = resolve(ast_dotted_name(func), table)
            if qualified in _CPU_FACTORIES:
                return not any(keyword.arg == "device" or keyword.arg is None for keyword in node.keywords)
            if qualified and qualified.startswith("torch.") and node.args:
                # a torch op gives its result on its input's device: `torch.exp(torch.rand(1))`
                return ast_fresh_cpu_tensor(node.args[0], table)
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
