from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Iterator, List, Optional

from torchlint.rule_api.bases.expression import TorchExpressionRule
from torchlint.core.lazy import cst
from torchlint.analysis.source_view import SourceView
from torchlint.rule_api.rule import Invalid
from torchlint.analysis.torch_calls import (
    ast_method_receiver,
    ast_torch_function,
    ast_unary_operand,
    is_name,
    method_receiver,
    receiver_code,
    split_args,
    torch_alias,
    torch_function,
    unary_operand,
)

_SUM_KEYWORDS = frozenset({"dim", "keepdim"})


def _ast_sums_exp_over_dim(node: Optional[ast.AST], table) -> bool:
    """`torch.sum(torch.exp(x), dim...)` or `x.exp().sum(dim...)`: a sum of exp with a dim."""
    if not isinstance(node, ast.Call) or any(k.arg not in _SUM_KEYWORDS for k in node.keywords):
        return False
    args = list(node.args)
    if ast_torch_function(node, table) == "sum":
        summed = args.pop(0) if args else None
    else:
        summed = ast_method_receiver(node, "sum")
    dims = args[:1] + [k.value for k in node.keywords if k.arg == "dim"]
    has_dim = bool(dims) and not (isinstance(dims[0], ast.Constant) and dims[0].value is None)
    return has_dim and len(args) <= 2 and ast_unary_operand(summed, table, "exp") is not None


@dataclass
class _Match:
    """The parts of `log(sum(exp(x), dim, keepdim))` the fix needs."""

    operand: Any  # x
    dim: Any  # the Arg that gives dim
    keepdim: Any  # the Arg that gives keepdim, or None
    functions: List[Any]  # the calls spelled as torch functions, outermost first


def _literal_dims(node) -> bool:
    """An int literal (`1`, `-1`) or a tuple/list of them: never None, never empty."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, (cst.Tuple, cst.List)):
        return bool(node.elements) and all(_literal_dims(element.value) for element in node.elements)
    return False


def _bare(module, arg) -> str:
    """An argument's code (`1`, `dim=-1`) without its comma and trailing space."""
    return module.code_for_node(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=cst.SimpleWhitespace("")))


class LogSumExp(TorchExpressionRule):
    """
    ## What it does
    Flags a log of a sum of exponentials over a dimension: `torch.log(torch.sum(
    torch.exp(x), dim=d))`, `torch.log(torch.exp(x).sum(d))`, `x.exp().sum(dim=d,
    keepdim=True).log()` and the other mixes of function and method spellings, under any
    import spelling. Only with a `dim`: a sum over all elements has no `logsumexp`
    counterpart with the same meaning (`torch.logsumexp` needs `dim`; `dim=None` counts
    as none).

    ## Why is this bad?
    `exp` overflows float32 for inputs above about 88 (float16 above about 11), so the
    sum is `inf` and the log is `inf`; for very negative inputs every `exp` underflows to
    0 and the log is `-inf`. The gradient, `exp(x) / sum(exp(x))`, becomes `nan` in the
    first case. `torch.logsumexp(x, dim)` subtracts the maximum first and is finite and
    accurate for any input whose true result is (log-likelihoods, log-partition
    functions, CTC and CRF losses, attention in log space).

    Off by default: enable it with `extend-select = ["TL303"]`. Most hand-written
    log-sum-exps already subtract the maximum before `exp` (a Viterbi decoder's
    `m + log(sum(exp(t - m)))`, a contrastive loss's `s -= s.max(1)[0]`), so they cannot
    overflow and the rewrite only tidies them.

    ## Example
    ```python
    import torch

    log_z = torch.log(torch.sum(torch.exp(scores), dim=-1))
    ```

    ## Use instead
    ```python
    log_z = torch.logsumexp(scores, dim=-1)
    ```

    ## Fix safety
    Unsafe (applied with `--unsafe-fixes`): where the old expression was finite the
    two agree to float rounding, but they round differently, and where it overflowed
    or underflowed (`inf`, `-inf`, `nan` gradients) the new one gives the true value. A
    different float result is a behaviour change (see TL301). `keepdim` is carried
    over; the shape and dtype are the same. The fix is offered only when `dim` is an
    integer literal or a tuple or list of them: a `dim` that may be `None` at run time
    (`dim=self.dim`) sums every element in `torch.sum` but is an error in
    `torch.logsumexp`, so such a call is reported without a fix, as is one with a
    comment inside or a `dtype=` / `out=` argument (not reported). The fix uses the
    call's own spelling of `torch` (or the module's), else the tensor method
    `x.logsumexp(...)`, and adds no import; imports of `log`, `sum` or `exp` that
    the rewrites leave unread are removed in the same fix. `tests/test_tl3xx_values.py`
    checks the agreement on random and edge inputs.

    ## Options
    None.

    ## References
    - [`torch.logsumexp`](https://pytorch.org/docs/stable/generated/torch.logsumexp.html)
    """

    code = "TL303"
    name = "log-sum-exp"
    default_enabled = False
    summary = "`log(sum(exp(x), dim))` overflows: use `torch.logsumexp(x, dim)`"
    triggers = ("exp(", "exp as ")
    functions = ("torch.exp", "torch.log", "torch.sum")

    VALID = (
        "import torch\n\ny = torch.logsumexp(x, dim=1)\n",
        # no dim: a sum over all elements
        "import torch\n\ny = torch.log(torch.sum(torch.exp(x)))\nz = x.exp().sum().log()\n"
        "w = torch.log(torch.exp(x).sum(dim=None))\n",
        "import torch\n\ny = torch.log(torch.sum(torch.exp(x), dim=1, dtype=torch.float64))\n",
        "import numpy as np\n\ny = np.log(np.sum(np.exp(x), axis=1))\n",
        "y = x.exp().sum(1).log()\n",
    )
    INVALID = (
        Invalid(
            "import torch\n\nlog_z = torch.log(torch.sum(torch.exp(scores), dim=-1))\n",
            unsafe_fixed="import torch\n\nlog_z = torch.logsumexp(scores, dim=-1)\n",
            line=3,
            column=9,
        ),
        Invalid(
            "import torch as T\n\ny = T.log(T.exp(a - m).sum(1, keepdim=True)) + m\n",
            unsafe_fixed="import torch as T\n\ny = T.logsumexp(a - m, 1, keepdim=True) + m\n",
        ),
        Invalid(
            "import torch\n\ny = (x * t).exp().sum(dim=(1, 2)).log()\n",
            unsafe_fixed="import torch\n\ny = (x * t).logsumexp(dim=(1, 2))\n",
        ),
        Invalid(
            "import numpy as np\nfrom torch import exp, log\n\ny = log(exp(x).sum(-1))\n",
            unsafe_fixed="import numpy as np\n\ny = x.logsumexp(-1)\n",
        ),
        # dim may be None at run time: reported, no fix
        Invalid("import torch\n\ndef f(x, dim=None):\n    return torch.log(torch.exp(x).sum(dim))\n"),
    )

    @classmethod
    def ast_expressions(cls, view: SourceView) -> Iterator[ast.AST]:
        table = view.imports
        return (
            call for call in view.nodes_of(ast.Call) if _ast_sums_exp_over_dim(ast_unary_operand(call, table, "log"), table)
        )

    def visit_Call(self, node) -> None:
        imports = self.context.imports
        summed, log_function = unary_operand(node, imports, "log")
        found = self._match_sum(summed, imports) if summed is not None else None
        if found is None:
            return
        if log_function is not None:
            found.functions.insert(0, log_function)
        self.report_rewrite(
            node,
            "`log(sum(exp(x), dim))` overflows for large `x`: use `torch.logsumexp(x, dim)`",
            lambda: self._rewrite(self.context.module, found, imports) if _literal_dims(found.dim.value) else None,
        )

    @staticmethod
    def _match_sum(call, imports) -> Optional[_Match]:
        if not isinstance(call, cst.Call):
            return None
        parts = split_args(call)
        if parts is None or set(parts[1]) - _SUM_KEYWORDS:
            return None
        positional_args = [arg for arg in call.args if arg.keyword is None]
        functions = []
        if torch_function(call, imports) == "sum":
            if not positional_args:
                return None
            summed = positional_args.pop(0).value
            functions.append(call)
        else:
            summed = method_receiver(call, "sum")
        keywords = parts[1]
        dim = positional_args[0] if positional_args else keywords.get("dim")
        keepdim = positional_args[1] if len(positional_args) > 1 else keywords.get("keepdim")
        if dim is None or is_name(dim.value, "None") or len(positional_args) > 2:
            return None
        operand, exp_function = unary_operand(summed, imports, "exp")
        if operand is None:
            return None
        return _Match(operand, dim, keepdim, functions + ([exp_function] if exp_function is not None else []))

    @staticmethod
    def _rewrite(module, found: _Match, imports) -> str:
        arguments = [_bare(module, arg) for arg in (found.dim, found.keepdim) if arg is not None]
        # the spelling of the outermost torch function (`T.log`), else the module's name for
        # torch if a function was called by its bare name; with none, the tensor method
        spelled = [call.func.value for call in found.functions if isinstance(call.func, cst.Attribute)]
        if spelled:
            prefix = module.code_for_node(spelled[0])
        else:
            prefix = torch_alias(imports) if found.functions else None
        if prefix is None:
            return f"{receiver_code(module, found.operand)}.logsumexp({', '.join(arguments)})"
        return f"{prefix}.logsumexp({module.code_for_node(found.operand)}, {', '.join(arguments)})"
