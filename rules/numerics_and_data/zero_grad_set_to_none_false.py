from __future__ import annotations

import ast
from typing import Tuple

from torchlint.core.config import Config
from torchlint.core.diagnostics import Applicability, Fix
from torchlint.analysis.source_view import SourceView
from torchlint.rule_api.rule import Invalid, Positions, Rule
from torchlint.analysis.torch_calls import ast_method_receiver, has_comment, is_name, method_receiver


def _ast_keeps_zeros(call: ast.Call) -> bool:
    if ast_method_receiver(call, "zero_grad") is None:
        return False
    values = [k.value for k in call.keywords if k.arg == "set_to_none"] + call.args[:1]
    return len(values) == 1 and isinstance(values[0], ast.Constant) and values[0].value is False


class ZeroGradSetToNoneFalse(Rule):
    """
    ## What it does
    Flags `zero_grad(set_to_none=False)` (or `zero_grad(False)`) on an optimizer or a
    module.

    ## Why is this bad?
    With `set_to_none=False`, every step launches a kernel that writes zeros into every
    `.grad` tensor, and the next backward adds into those zeros instead of writing the
    gradient straight in: extra memory traffic on every step, and the gradient memory
    stays allocated between steps. Since torch 2.0 the default is `set_to_none=True`
    (grads become `None`, backward allocates them fresh), which PyTorch's docs and
    performance tuning guide recommend.

    ## Example
    ```python
    optimizer.zero_grad(set_to_none=False)
    ```

    ## Use instead
    ```python
    optimizer.zero_grad()
    ```

    ## Fix safety
    Unsafe (applied with `--unsafe-fixes`): removing the argument changes behaviour.
    After `zero_grad()` a parameter that gets no gradient in a step has `.grad is
    None`, not a zero tensor, so code that reads `p.grad` between `zero_grad()` and
    `backward()` (or for parameters unused in a step: frozen branches, conditional
    heads, gradient-norm logging, manual `p.grad.add_(...)`) raises `AttributeError`
    or `TypeError`; and optimizers skip parameters whose grad is `None`, so momentum
    and weight decay are no longer applied to them in that step, where a zero grad
    still moved them. Code written with `set_to_none=False` often relies on one of
    these on purpose. With `target-torch` below 2.0 (where the default was `False`)
    the fix writes `set_to_none=True` rather than dropping the argument. A call with a
    comment inside is reported without a fix.

    ## Options
    None.

    ## References
    - [`torch.optim.Optimizer.zero_grad`](https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html)
    - [Performance tuning guide](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html)
    """

    code = "TL304"
    name = "zero-grad-set-to-none-false"
    summary = "`zero_grad(set_to_none=False)` writes zeros into every gradient on every step"
    fixable = True
    triggers = ("zero_grad(",)

    VALID = (
        "optimizer.zero_grad()\nmodel.zero_grad(set_to_none=True)\nopt.zero_grad(set_to_none=flag)\n",
        "zero_grad(set_to_none=False)\n",
    )
    INVALID = (
        Invalid(
            "optimizer.zero_grad(set_to_none=False)\n",
            unsafe_fixed="optimizer.zero_grad()\n",
            line=1,
            column=1,
        ),
        Invalid("self.model.zero_grad(False)\n", unsafe_fixed="self.model.zero_grad()\n"),
        Invalid("opt.zero_grad(\n    set_to_none=False,  # keep zeros: hooks read .grad\n)\n"),
    )

    @classmethod
    def sites(cls, view: SourceView, config: Config) -> Tuple[ast.AST, ...]:
        """The whole file, if a call may keep zeros."""
        return (view.tree,) if any(_ast_keeps_zeros(call) for call in view.nodes_of(ast.Call)) else ()

    def visit_Call(self, node) -> None:
        if method_receiver(node, "zero_grad") is None or len(node.args) != 1:
            return
        arg = node.args[0]
        if arg.star or (arg.keyword is not None and arg.keyword.value != "set_to_none"):
            return
        if not is_name(arg.value, "False"):
            return
        fix = None
        if not has_comment(node):
            fix = self._fix(node)
        self.report(
            node,
            "`zero_grad(set_to_none=False)` writes zeros into every `.grad` each step: drop the argument "
            "(grads become `None`) unless code reads `.grad` between steps",
            fix,
        )

    def _fix(self, node):
        module = self.context.module
        argument = "" if self.context.config.targets_at_least("2.0") else "set_to_none=True"
        content = f"{module.code_for_node(node.func)}({argument})"

        def fix(positions: Positions) -> Fix:
            return Fix(f"Use `{content}`", (positions.replace(node, content),), Applicability.UNSAFE)

        return fix
