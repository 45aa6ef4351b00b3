from __future__ import annotations

import ast
from typing import Dict, Iterator, Optional, Tuple

from torchlint.core.lazy import cst
from torchlint.analysis.names import ast_dotted_name, resolve
from torchlint.analysis.hot_paths import HotPathRule, fresh_cpu_tensor, own_nodes, parents_of, plainly_host
from torchlint.core.rule import Invalid, Report, SourceView

# torch functions whose result is a tensor (or, for equal/allclose, a bool computed on the
# device) that Python can only test by reading it back
_TENSOR_FUNCTIONS = frozenset(
    {
        "isfinite", "isnan", "isinf", "isneginf", "isposinf", "isclose", "any", "all", "equal", "allclose",
        "eq", "ne", "gt", "ge", "lt", "le", "logical_and", "logical_or", "logical_not", "logical_xor",
        "sum", "mean", "amax", "amin", "count_nonzero", "norm",
    }
)
# tensor methods that, called without arguments, give a 0-dim tensor (a reduction or test)
_TENSOR_METHODS = frozenset(
    {"any", "all", "isfinite", "isnan", "isinf", "sum", "mean", "max", "min", "amax", "amin", "norm", "count_nonzero"}
)
_CASTS = frozenset({"bool", "float", "int"})
_DATA_DEPENDENT = frozenset({"nonzero", "masked_select"})
_EXPLICIT_SYNCS = frozenset({"item", "tolist", "numpy"})  # TL003's
_LENGTHS_ON_CPU = "torch.nn.utils.rnn.pack_padded_sequence"  # requires its `lengths` on the CPU
SIZES = "check-sizes"
LOOP_EXITS = "check-loop-exits"
CPU_COPIES = "check-cpu-copies"
# calls that only tell (a check's warning branch is as deliberate as its raise)
_TELLERS = frozenset({"warn", "warning", "warn_once", "warning_once", "error", "info", "debug", "print", "log"})


class ImplicitHostSyncInHotPath(HotPathRule):
    """
    ## What it does
    Flags code that reads a tensor's value on the host without saying so, in TL003's hot
    paths (`forward` of a module, the `*_step` hooks of a `LightningModule`,
    `forward`/`backward` of an `autograd.Function`, and what they call on `self`, up to
    three calls deep): a tensor tested by Python (`if t.any():`,
    `if not torch.isfinite(loss).all():`, `while err.max() > tol:`), converted by `bool(t)`
    or `float(t)`, and `torch.nonzero` / `masked_select` whose data-dependent result feeds a
    `for` or an `if`. Off by default: select it with `--select TL005` or
    `extend-select = ["TL005"]`.

    Only evident tensors count: the result of a torch predicate or reduction
    (`torch.isnan(x)`, `x.sum()`, `x.any()`); not a plain variable (`if loss:`), a fresh CPU
    tensor (`float(torch.rand(1))`), or the lengths given to `pack_padded_sequence` (which
    must be on the CPU). A statement is reported once (`f(a.cpu(), b.cpu())` waits once).
    Sizes, explicit copies, loop exits and error checks are reported only with their
    options (below). `.item()`, `.tolist()`, `.numpy()` and `synchronize()` are TL003's.

    ## Why is this bad?
    Python cannot branch on a value that is still on the GPU: `if t.any():` calls
    `bool(t)`, which waits for every queued kernel and copies the value back, exactly like
    `.item()`, but nothing in the code says so. On every step it idles the GPU while Python
    prepares the next one (typically 5-30 % of throughput).

    ## Example
    ```python
    class Model(nn.Module):
        def forward(self, x, mask):
            if mask.any():
                x = x.masked_fill(mask, 0.0)
            return x
    ```

    ## Use instead
    ```python
            x = x.masked_fill(mask, 0.0)  # a no-op where mask is all False
    ```

    ## Fix safety
    No fix: keeping the value on the device means restructuring the code (`torch.where`,
    masking instead of branching, or checking once per epoch).

    ## Options
    - `check-sizes` (default `false`): `int()` of a tensor and `len()` of a `nonzero` /
      `masked_select` result (`int(lengths.max()) + 1`): a number Python needs for an
      allocation, a loop or an index.
    - `check-cpu-copies` (default `false`): `t.cpu()` (never one TL003 reports, as
      `.cpu().numpy()`, nor the lengths for `pack_padded_sequence`).
    - `check-loop-exits` (default `false`): a test that ends a loop (a `while` condition, an
      `if` whose body ends in `break`): the wait is the price of stopping early.
    - `check-error-paths` (default `false`): the condition of a check that raises, warns,
      logs or prints, and an `assert`'s test (their body and message never).
    - `check-periodic-branches` (default `false`): blocks that run now and then
      (`if step % n == 0:`, `if self.log_images:`), as TL003's option of the same name.

    ```toml
    [tool.torchlint.implicit-host-sync-in-hot-path]
    check-sizes = true
    ```
    """

    code = "TL005"
    name = "implicit-host-sync-in-hot-path"
    summary = "Tensor read on the host implicitly (if t.any(), float(t), nonzero) on every step"
    default_enabled = False
    triggers = ("torch",)
    options = {**HotPathRule.options, SIZES: False, CPU_COPIES: False, LOOP_EXITS: False}

    VALID = (
        # a plain variable, a fresh CPU tensor, lengths for pack_padded_sequence, TL003's calls
        "import torch\nfrom torch import nn\nfrom torch.nn.utils.rnn import pack_padded_sequence\n\n"
        "class M(nn.Module):\n    def forward(self, x, lengths, flag):\n        if flag:\n            x = -x\n"
        "        scale = float(torch.rand(1))\n        packed = pack_padded_sequence(x, lengths.cpu())\n"
        "        return packed, x.sum().item(), x.cpu().numpy(), scale\n",
        # an error path; a method no hot path calls; not a module
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, loss):\n"
        "        if not torch.isfinite(loss).all():\n            raise ValueError('loss is not finite')\n"
        "        return loss\n\n    def summary(self, x):\n        return float(x.mean())\n\n"
        "class Plain:\n    def forward(self, x):\n        return bool(x.any())\n",
        # sizes (an allocation's length, a count) and explicit copies, without their options
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x, lengths, keep):\n"
        "        out = x.new_zeros(len(x), int(lengths.max()) + 1)\n        n = len(torch.nonzero(keep))\n"
        "        return out, n, x.cpu()\n",
        # the exit of a decoding loop or a solver
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x, done):\n"
        "        while not done.all():\n            x, done = self.step(x)\n"
        "        for _ in range(10):\n            x = self.step(x)[0]\n            if x.abs().max() < 1e-3:\n"
        "                break\n        return x\n\n    def step(self, x):\n        return x / 2, x < 1\n",
        # a check that warns, or raises when strict: as deliberate as one that raises
        "import warnings\nimport torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        if torch.isnan(x).any():\n            if self.training:\n                raise ValueError('nan')\n"
        "            else:\n                warnings.warn('nan')\n        return x\n",
        # a reduction with arguments, an `is` test, a numpy array
        "import numpy as np\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x, cache):\n"
        "        if x.max(dim=1) is None or cache is not None:\n            x = x + 1\n"
        "        if np.zeros(3).any():\n            x = x * 2\n        return x\n",
    )
    INVALID = (
        Invalid(
            "from torch import nn\n\nclass M(nn.Module):\n    def forward(self, x, mask):\n"
            "        if mask.any():\n            x = x.masked_fill(mask, 0.0)\n        return x\n",
            line=5,
            column=12,
        ),
        # a check that skips the step instead of raising
        Invalid(
            "import torch\nimport lightning as L\n\nclass M(L.LightningModule):\n"
            "    def training_step(self, batch, i):\n        loss = self(batch)\n"
            "        if not torch.isfinite(loss).all():\n            return None\n        return loss\n",
            line=7,
            column=16,
        ),
        Invalid(
            "from torch import nn\n\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        return x / float(x.abs().max())\n",
            line=5,
            column=20,
        ),
        # reached through a helper; `nonzero` feeding a loop
        Invalid(
            "import torch\nfrom torch import nn\n\nclass Detector(nn.Module):\n    def forward(self, boxes, keep):\n"
            "        return self._select(boxes, keep)\n\n    def _select(self, boxes, keep):\n"
            "        picked = []\n        for index in torch.nonzero(keep):\n            picked.append(boxes[index])\n"
            "        return picked\n",
            line=10,
            column=22,
        ),
        Invalid(
            "import torch\n\nclass Scale(torch.autograd.Function):\n    @staticmethod\n"
            "    def backward(ctx, grad):\n        return grad.cpu() * 2\n",
            line=6,
            column=16,
            options=((CPU_COPIES, True),),
        ),
        Invalid(
            "from torch import nn\n\nclass M(nn.Module):\n    def forward(self, x, done):\n"
            "        while not done.all():\n            x = x / 2\n            done = x < 1\n        return x\n",
            line=5,
            column=19,
            options=((LOOP_EXITS, True),),
        ),
        # sizes: a count for an allocation, a data-dependent length
        Invalid(
            "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x, lengths):\n"
            "        out = x.new_zeros(len(x), int(lengths.max()))\n        return out\n",
            line=6,
            column=35,
            options=((SIZES, True),),
        ),
        Invalid(
            "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, loss):\n"
            "        assert torch.isfinite(loss).all(), 'loss is not finite'\n        return loss\n",
            line=6,
            column=16,
            options=(("check-error-paths", True),),
        ),
    )

    @classmethod
    def ast_candidate(cls, node: ast.AST, view: SourceView) -> bool:
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        if isinstance(func, ast.Name):
            return func.id in _CASTS or _is_torch(resolve(func.id, view.imports), _DATA_DEPENDENT | _TENSOR_FUNCTIONS)
        if not isinstance(func, ast.Attribute):
            return False
        if func.attr in _TENSOR_METHODS | _DATA_DEPENDENT or func.attr == "cpu":
            return True
        return _is_torch(resolve(ast_dotted_name(func), view.imports), _DATA_DEPENDENT | _TENSOR_FUNCTIONS)

    def method_reports(self, class_name: str, function) -> Iterator[Tuple[Report, bool]]:
        parents = parents_of(function.body)
        where = f"`{class_name}.{function.name.value}`"
        statements = set()
        for node, what in self._implicit_syncs(function.body, parents):
            if self.off_step(node, parents) or (not self.settings["check-error-paths"] and _tests_a_check(node, parents)):
                continue
            if not self.settings[LOOP_EXITS] and _ends_a_loop(node, parents):
                continue
            statement = _statement_of(node, parents)
            if statement in statements:  # once it has waited, the statement's next read is free
                continue
            statements.add(statement)
            message = f"{what} in {where} reads a tensor on the host: it waits for the GPU on every step"
            yield Report(self, node, message), False

    def _implicit_syncs(self, body, parents: Dict) -> Iterator[Tuple[object, str]]:
        bindings = _single_bindings(body)
        for node in own_nodes(body):
            if isinstance(node, (cst.If, cst.While, cst.IfExp, cst.CompIf, cst.Assert)):
                for operand in _truth_operands(node.test):
                    if self._tested_tensor(operand):
                        yield operand, f"`{self._code(node.test)}` tested by Python"
            elif isinstance(node, cst.Call):
                yield from self._call_sync(node, parents, bindings)

    def _call_sync(self, call, parents: Dict, bindings: Dict) -> Iterator[Tuple[object, str]]:
        func = call.func
        if isinstance(func, cst.Name) and func.value in _CASTS:
            # `int(lengths.max())`: a size, count or index Python needs as a number; the
            # wait comes with a data-dependent shape, not with the way it is written
            if func.value == "int" and not self.settings[SIZES]:
                return
            if len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star:
                if self._tensor_valued(call.args[0].value):
                    yield call, f"`{func.value}()` of a tensor"
            return
        if isinstance(func, cst.Attribute) and func.attr.value == "cpu":
            # an explicit copy, mostly of what host code (a metric, scipy) must have
            if self.settings[CPU_COPIES] and not self._host_bound(call, parents):
                yield call, "`.cpu()`"
            return
        if self._data_dependent(call) and _feeds_control_flow(call, parents, bindings, self.settings[SIZES]):
            name = func.attr.value if isinstance(func, cst.Attribute) else self._code(func)
            yield call, f"`{name}` (its size depends on the data) feeding Python control flow"

    def _tested_tensor(self, operand) -> bool:
        if isinstance(operand, cst.Comparison):
            if any(isinstance(target.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for target in operand.comparisons):
                return False
            operands = [operand.left] + [target.comparator for target in operand.comparisons]
            return any(self._tensor_valued(value) for value in operands)
        return self._tensor_valued(operand)

    def _tensor_valued(self, expression) -> bool:
        """Whether an expression is evidently a tensor on the device: a torch predicate or
        reduction, or a tensor method that reduces (`x.sum()`, `mask.any()`)."""
        if not isinstance(expression, cst.Call):
            return False
        imports = self.context.imports
        if fresh_cpu_tensor(expression, imports):
            return False
        if _is_torch(imports.qualified_name(expression.func), _TENSOR_FUNCTIONS):
            return True
        func = expression.func
        return (
            isinstance(func, cst.Attribute)
            and func.attr.value in _TENSOR_METHODS
            and not expression.args
            and not plainly_host(func.value, imports)
            and not self.cpu_state(func.value)
            and not isinstance(func.value, (cst.List, cst.Tuple, cst.Dict, cst.SimpleString))
        )

    def _data_dependent(self, call) -> bool:
        func = call.func
        if _is_torch(self.context.imports.qualified_name(func), _DATA_DEPENDENT):
            return True
        return isinstance(func, cst.Attribute) and func.attr.value in _DATA_DEPENDENT and not plainly_host(
            func.value, self.context.imports
        )

    def _host_bound(self, call, parents: Dict) -> bool:
        """A `.cpu()` TL003 reports (`.cpu().numpy()`), one of a host value, or the
        lengths `pack_padded_sequence` needs on the CPU."""
        imports = self.context.imports
        receiver = call.func.value
        if call.args or plainly_host(receiver, imports) or fresh_cpu_tensor(receiver, imports):
            return True
        parent = parents.get(call)
        while isinstance(parent, (cst.Attribute, cst.Call)):
            if isinstance(parent, cst.Attribute) and parent.attr.value in _EXPLICIT_SYNCS:
                return True
            parent = parents.get(parent)
        if isinstance(parent, cst.Arg):
            outer = parents.get(parent)
            return isinstance(outer, cst.Call) and imports.qualified_name(outer.func) == _LENGTHS_ON_CPU
        return False

    def _code(self, node) -> str:
        text = " ".join(self.context.module.code_for_node(node).split())
        return text if len(text) <= 40 else text[:37] + "..."


def _statement_of(node, parents: Dict):
    while node is not None and not isinstance(node, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
        node = parents.get(node)
    return node


def _is_torch(qualified: Optional[str], names: frozenset) -> bool:
    return bool(qualified) and qualified.startswith("torch.") and qualified.count(".") == 1 and qualified[6:] in names


def _truth_operands(test) -> Iterator:
    """The expressions whose truth Python takes: `a`, `b` in `not a or b`."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        yield from _truth_operands(test.expression)
    elif isinstance(test, cst.BooleanOperation):
        yield from _truth_operands(test.left)
        yield from _truth_operands(test.right)
    else:
        yield test


def _single_bindings(body) -> Dict[str, object]:
    """Names bound exactly once in a function body (`n = expr`), with their value."""
    values: Dict[str, object] = {}
    counts: Dict[str, int] = {}
    for node in own_nodes(body):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    name = target.target.value
                    counts[name] = counts.get(name, 0) + 1
                    values[name] = node.value
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For)) and isinstance(node.target, cst.Name):
            counts[node.target.value] = counts.get(node.target.value, 0) + 2
    return {name: value for name, value in values.items() if counts[name] == 1}


def _feeds_control_flow(call, parents: Dict, bindings: Dict, sizes: bool) -> bool:
    """Whether a value goes straight to a `for`, an `if`/`while` test or (with `sizes`)
    `len()`, itself or through a name bound once to it (`idx = torch.nonzero(m)` ...
    `for i in idx`)."""
    if _steers(call, parents, sizes):
        return True
    parent = parents.get(call)
    if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name)):
        return False
    name = parent.targets[0].target.value
    if bindings.get(name) is not call:
        return False
    return any(
        isinstance(node, cst.Name) and node.value == name and _steers(node, parents, sizes)
        for node in parents
    )


def _steers(node, parents: Dict, sizes: bool) -> bool:
    parent = parents.get(node)
    if isinstance(parent, (cst.For, cst.CompFor)):
        return parent.iter is node
    if isinstance(parent, (cst.If, cst.While)):
        return parent.test is node
    if isinstance(parent, cst.Arg) and sizes:
        outer = parents.get(parent)
        return isinstance(outer, cst.Call) and isinstance(outer.func, cst.Name) and outer.func.value == "len"
    return False


def _tests_a_check(node, parents: Dict) -> bool:
    """Whether `node` is in the test of an `if` whose body only raises or tells (`if
    torch.isnan(x).any(): if strict: raise ... else: warnings.warn(...)`): a deliberate
    check, like one that raises."""
    owner = _test_owner(node, parents)
    return isinstance(owner, cst.If) and _only_tells(owner.body)


def _test_owner(node, parents: Dict):
    """The `if` or `while` whose test holds `node`, else None."""
    child, parent = node, parents.get(node)
    while parent is not None and not isinstance(parent, (cst.If, cst.While, cst.BaseSmallStatement, cst.FunctionDef)):
        child, parent = parent, parents.get(parent)
    return parent if isinstance(parent, (cst.If, cst.While)) and child is parent.test else None


def _ends_a_loop(node, parents: Dict) -> bool:
    """Whether `node` is in a test that ends a loop: a `while` condition, or an `if`
    whose body ends in `break` (all sequences finished, a solver converged)."""
    owner = _test_owner(node, parents)
    if isinstance(owner, cst.While):
        return True
    if not isinstance(owner, cst.If) or not owner.body.body:
        return False
    last = owner.body.body[-1]  # a statement, or in `if c: break` a small statement
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1]
    return isinstance(last, cst.Break)


def _only_tells(block) -> bool:
    """A block of raises, warnings, log or print calls (nested under `if`/`else` too)."""
    statements = block.body if isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ()
    return bool(statements) and all(_tells_only(statement) for statement in statements)


def _tells_only(statement) -> bool:
    if isinstance(statement, cst.If):
        orelse = statement.orelse
        if isinstance(orelse, cst.If):  # elif
            return _only_tells(statement.body) and _tells_only(orelse)
        return _only_tells(statement.body) and (orelse is None or _only_tells(orelse.body))
    smalls = statement.body if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else [statement]
    return all(
        isinstance(small, cst.Raise)
        or (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and _tells(small.value.func))
        for small in smalls
    )


def _tells(func) -> bool:
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return name in _TELLERS
