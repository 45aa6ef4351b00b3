from __future__ import annotations

import ast
from typing import Iterator, Optional

from torchlint.rule_api.bases.expression import TorchExpressionRule
from torchlint.core.lazy import cst
from torchlint.analysis.source_view import SourceView
from torchlint.rule_api.rule import Invalid
from torchlint.analysis.torch_calls import ast_is_one, ast_unary_operand, is_one, rewritten_call, unary_operand


def ast_plus_one(node: Optional[ast.AST]) -> bool:
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add)
        and (ast_is_one(node.left) or ast_is_one(node.right))
    )


def plus_one_operand(node):
    """`x` of `1 + x` or `x + 1` (LibCST), else None."""
    if not isinstance(node, cst.BinaryOperation) or not isinstance(node.operator, cst.Add):
        return None
    return node.right if is_one(node.left) else node.left if is_one(node.right) else None


class LogOnePlus(TorchExpressionRule):
    """
    ## What it does
    Flags the natural log of one plus something: `torch.log(1 + x)`, `torch.log(x + 1)`
    and the tensor method `(1 + x).log()` (also `1.0 + x`), under any import spelling
    (`import torch as T`, `from torch import log`).

    ## Why is this bad?
    `1 + x` is rounded to the tensor's precision before the log sees it. For small `x`
    the rounding eats `x`: in float32 `torch.log(1 + torch.tensor(1e-8))` is `0.0`, and
    in float16 `torch.log(1 + x)` is `0.0` for every positive `x` below about `5e-4`,
    where the true value is about `x`. `torch.log1p(x)` computes the same function
    without forming `1 + x` and is accurate for every `x`. Losses and log-likelihoods
    of small probabilities (`log(1 + exp(-z))`, a softplus written by hand) lose their
    signal this way.

    Off by default: enable it with `extend-select = ["TL301"]`. Most `log(1 + x)` calls
    are on counts or on values far from zero, where `1 + x` loses nothing.

    ## Example
    ```python
    import torch

    nll = -torch.log(1 + torch.exp(-margin))
    ```

    ## Use instead
    ```python
    nll = -torch.log1p(torch.exp(-margin))
    ```

    ## Fix safety
    Unsafe (applied with `--unsafe-fixes`): the result can change, by design. The fix
    computes the same mathematical function with the same dtype promotion (an integer
    or bool `x` gives the default float dtype in both), shape and gradient formula
    (`1 / (1 + x)`), but it rounds differently: where `1 + x` is exact the two agree to
    float rounding; where it is not, `log1p` gives the right value and the old code did
    not (`0` for tiny `x`). And `x = -0.0` gives `-0.0` instead of `0.0`. torchlint
    calls a fix safe only if behaviour stays exactly the same, and a different float
    result is a different behaviour: a golden-output test, a reproduced training run or
    a checkpoint comparison would see it. Ruff draws the same line for the same kind of
    rewrite (FURB163, `math.log(x, 2)` to `math.log2(x)`, is unsafe "due to
    floating-point rounding"); TorchFix (TOR106) offers no fix at all.
    `tests/test_tl3xx_values.py` checks that the results agree on random and edge
    inputs (0, -0.0, -1, below -1, inf, nan, tiny and huge values) in float16, bfloat16,
    float32, float64, int and bool, and that `log1p` is never less accurate.

    The fix keeps the spelling: `T.log(1 + x)` becomes `T.log1p(x)`; with only `from
    torch import log` in the module it uses the module's `torch` name if there is one,
    else the tensor method `x.log1p()`, so no import is added; when the rewrites take
    away every read of `log`, its import goes in the same fix. A call with a comment
    inside is reported without a fix (the rewrite would drop the comment). Only a call
    with a single positional argument is reported (not `torch.log(1 + x, out=buf)`).

    ## Options
    None.

    ## References
    - [`torch.log1p`](https://pytorch.org/docs/stable/generated/torch.log1p.html)
    """

    code = "TL301"
    default_enabled = False
    name = "log-one-plus"
    summary = "`torch.log(1 + x)` rounds `1 + x` first: use `torch.log1p(x)`"
    triggers = ("log(", "log as ")
    functions = ("torch.log",)

    VALID = (
        "import torch\n\ny = torch.log(2 + x)\nz = torch.log1p(x)\nw = torch.log(1 - x)\n",
        # not torch's log, and a log with a base argument
        "import math\nimport numpy as np\n\ny = math.log(1 + x)\nz = np.log(1 + x)\n",
        "import torch\n\ny = torch.log(1 + x, out=buf)\n",
        # `.log()` on a module that never imports torch may be anything's method
        "y = (1 + x).log()\n",
    )
    INVALID = (
        Invalid(
            "import torch\n\ny = torch.log(1 + x)\n",
            unsafe_fixed="import torch\n\ny = torch.log1p(x)\n",
            line=3,
            column=5,
        ),
        Invalid(
            "import torch as T\n\ny = T.log(p * q + 1.0)\n",
            unsafe_fixed="import torch as T\n\ny = T.log1p(p * q)\n",
        ),
        Invalid(
            "import torch\n\ny = (1 + a * b).log()\n",
            unsafe_fixed="import torch\n\ny = (a * b).log1p()\n",
        ),
        Invalid(
            "import os\nfrom torch import log\n\ny = log(1 + x.exp())\n",
            unsafe_fixed="import os\n\ny = x.exp().log1p()\n",
        ),
        # two uses: the import goes only with both, in one fix; `exp` stays read
        Invalid(
            "import torch\nfrom torch import exp, log\n\na = log(1 + x)\nb = log(exp(y) + 1)\n",
            unsafe_fixed="import torch\nfrom torch import exp\n\na = torch.log1p(x)\nb = torch.log1p(exp(y))\n",
        ),
        Invalid("import torch\n\ny = torch.log(1 +  # keep me\n    x)\n"),
    )

    @classmethod
    def ast_expressions(cls, view: SourceView) -> Iterator[ast.AST]:
        table = view.imports
        return (call for call in view.nodes_of(ast.Call) if ast_plus_one(ast_unary_operand(call, table, "log")))

    def visit_Call(self, node) -> None:
        imports = self.context.imports
        inner, function = unary_operand(node, imports, "log")
        operand = plus_one_operand(inner)
        if operand is None:
            return
        shown = "torch.log(1 + x)" if function is not None else "(1 + x).log()"
        self.report_rewrite(
            node,
            f"`{shown}` rounds `1 + x` before the log and loses small `x`: use `log1p(x)`",
            lambda: rewritten_call(self.context.module, node, function is not None, imports, operand, "log1p",
                                   self.block_indent),
        )
