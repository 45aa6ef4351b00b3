from __future__ import annotations

import ast
from typing import Iterator

from torchlint.rule_api.bases.expression import TorchExpressionRule
from torchlint.core.lazy import cst
from torchlint.analysis.source_view import SourceView
from torchlint.rule_api.rule import Invalid
from torchlint.analysis.torch_calls import ast_is_one, ast_unary_operand, is_one, rewritten_call, unary_operand

# calls whose result is a whole number: expm1's accuracy near zero is rounded away
_ROUNDING = frozenset({"round", "floor", "ceil", "trunc", "long", "int"})


def _rounded_operands(call) -> list:
    """What `torch.round(x)`, `x.round()`, `x.long()`, `round(x)`, `int(x)` ... round."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in _ROUNDING:
        return [arg.value for arg in call.args[:1]] + [func.value]
    if isinstance(func, cst.Name) and func.value in _ROUNDING:
        return [arg.value for arg in call.args[:1]]
    return []


def _arithmetic_parts(node):
    """The node and, through arithmetic operators, every operand it is computed from."""
    yield node
    if isinstance(node, cst.BinaryOperation):
        yield from _arithmetic_parts(node.left)
        yield from _arithmetic_parts(node.right)
    elif isinstance(node, cst.UnaryOperation):
        yield from _arithmetic_parts(node.expression)


class ExpMinusOne(TorchExpressionRule):
    """
    ## What it does
    Flags `torch.exp(x) - 1` and the tensor method `x.exp() - 1` (also `- 1.0`), and
    `1 - torch.exp(x)` (as in `1 - torch.exp(-rate * t)`), whose rewrite is
    `-torch.expm1(x)`, under any import spelling (`import torch as T`, `from torch import exp`).

    ## Why is this bad?
    For small `x`, `exp(x)` is close to 1 and the subtraction cancels almost every
    significant bit: in float32 `torch.exp(torch.tensor(1e-8)) - 1` is `0.0` where the
    true value is `1e-8`, and in float16 everything below about `5e-4` is lost.
    `torch.expm1(x)` computes `exp(x) - 1` directly and is accurate for every `x`
    (Box-Cox and Yeo-Johnson transforms, ELU/SELU written by hand, `exp(log_var) - 1`).

    ## Example
    ```python
    import torch

    y = alpha * (torch.exp(x) - 1)
    ```

    ## Use instead
    ```python
    y = alpha * torch.expm1(x)
    ```

    ## Fix safety
    Unsafe (applied with `--unsafe-fixes`), for the reason TL301 gives: the same
    function, dtype promotion, shape and gradient, but different rounding. Where
    `exp(x) - 1` is exact the two agree to float rounding; where it cancels, the new
    result is the right one; and `x = -0.0` gives `-0.0` instead of `0.0`. A different
    float result is a behaviour change (ruff's FURB163 is unsafe for the same reason;
    TorchFix's TOR107 has no fix). `tests/test_tl3xx_values.py` checks the
    agreement on random and edge inputs. One more difference: the TorchScript-based ONNX
    exporter (`torch.onnx.export(..., dynamo=False)`, the default before torch 2.9) has no
    converter for `aten::expm1`, so a module exported that way stops exporting with
    `UnsupportedOperatorError` (`exp(x) - 1` exports).

    Not reported where the result is rounded to a whole number (`torch.round(torch.exp(d)
    - 1).long()`, `int(...)`, `.floor()`; also through arithmetic, as in durations
    predicted in log space): the digits `expm1` keeps are rounded away.

    Only `exp(...) - 1` is matched: `a + torch.exp(x) - 1` is `(a + exp(x)) - 1` to
    Python and is left alone, as are calls with keywords (`torch.exp(x, out=buf) - 1`
    writes `buf`). The fix keeps the spelling (`T.exp(x) - 1` becomes `T.expm1(x)`; with
    only `from torch import exp` it uses the module's `torch` name or the tensor method
    `x.expm1()`, adding no import, and removing the import of `exp` when no read is
    left); with a comment inside, no fix.

    ## Options
    None.

    ## References
    - [`torch.expm1`](https://pytorch.org/docs/stable/generated/torch.expm1.html)
    """

    code = "TL302"
    name = "exp-minus-one"
    summary = "`torch.exp(x) - 1` cancels for small `x`: use `torch.expm1(x)`"
    triggers = ("exp(", "exp as ")
    functions = ("torch.exp",)

    VALID = (
        "import torch\n\ny = torch.expm1(x)\nz = torch.exp(x) - 2\nw = 2 - torch.exp(x)\n",
        "import torch\n\ny = a - torch.exp(x) - 1\nz = torch.exp(x, out=buf) - 1\n",
        "import math\nimport numpy as np\n\ny = math.exp(x) - 1\nz = np.exp(x) - 1\n",
        "y = x.exp() - 1\n",
        "import torch\n\nd = torch.clamp(torch.round((torch.exp(log_d) - 1) * factor).long(), min=0)\n",
        "import torch\n\nn = int(log_n.exp() - 1)\nm = (torch.exp(x) - 1).floor()\n",
    )
    INVALID = (
        Invalid(
            "import torch\n\ny = (1 - torch.exp(-x)) ** 2\n",
            unsafe_fixed="import torch\n\ny = (-torch.expm1(-x)) ** 2\n",
            line=3,
            column=6,
        ),
        Invalid(
            "import torch\n\ny = alpha * (torch.exp(x) - 1)\n",
            unsafe_fixed="import torch\n\ny = alpha * (torch.expm1(x))\n",
            line=3,
            column=14,
        ),
        Invalid(
            "import torch as T\n\ny = T.exp(a * b) - 1.0 - c\n",
            unsafe_fixed="import torch as T\n\ny = T.expm1(a * b) - c\n",
        ),
        Invalid(
            "import torch\n\ny = (a + b).exp() - 1\n",
            unsafe_fixed="import torch\n\ny = (a + b).expm1()\n",
        ),
        Invalid(
            "from torch import exp, sin\n\ny = exp(x) - 1 + sin(x)\n",
            unsafe_fixed="from torch import sin\n\ny = x.expm1() + sin(x)\n",
        ),
        Invalid("import torch\n\ny = (torch.exp(x) -  # keep me\n    1)\n"),
        Invalid(
            "import torch\n\nn = torch.round(torch.exp(d) - 1)\ny = torch.exp(n) - 1\n",
            unsafe_fixed="import torch\n\nn = torch.round(torch.exp(d) - 1)\ny = torch.expm1(n)\n",
            line=4,
        ),
    )

    @classmethod
    def ast_expressions(cls, view: SourceView) -> Iterator[ast.AST]:
        table = view.imports
        return (
            node
            for node in view.nodes_of(ast.BinOp)
            if isinstance(node.op, ast.Sub) and (
                (ast_is_one(node.right) and ast_unary_operand(node.left, table, "exp") is not None)
                or (ast_is_one(node.left) and ast_unary_operand(node.right, table, "exp") is not None)
            )
        )

    def __init__(self, context) -> None:
        super().__init__(context)
        self._rounded = set()

    def visit_Call(self, node) -> None:
        for operand in _rounded_operands(node):
            self._rounded.update(id(part) for part in _arithmetic_parts(operand))

    def visit_BinaryOperation(self, node) -> None:
        if not isinstance(node.operator, cst.Subtract) or id(node) in self._rounded:
            return
        # `exp(x) - 1` is `expm1(x)`; `1 - exp(x)` (as in `1 - torch.exp(-x)`) is `-expm1(x)`
        flipped = is_one(node.left)
        if not (flipped or is_one(node.right)):
            return
        imports = self.context.imports
        call = node.right if flipped else node.left
        operand, function = unary_operand(call, imports, "exp")
        if operand is None:
            return
        shown = "torch.exp(x)" if function is not None else "x.exp()"
        shown = f"1 - {shown}" if flipped else f"{shown} - 1"
        use = "-expm1(x)" if flipped else "expm1(x)"

        def rewrite():
            content = rewritten_call(self.context.module, call, function is not None, imports, operand, "expm1",
                                     self.block_indent)
            # a unary minus binds tighter than the binary one it replaces: wherever `1 - e`
            # stands without parentheses, `-expm1(...)` means the same
            return f"-{content}" if flipped and content is not None else content

        self.report_rewrite(node, f"`{shown}` cancels the leading 1 and loses small `x`: use `{use}`", rewrite)
