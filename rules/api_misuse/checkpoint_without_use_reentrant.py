from __future__ import annotations

import ast

from torchlint.analysis.call_arguments import append_keyword, has_double_star, keyword_argument
from torchlint.core.diagnostics import Applicability, Fix
from torchlint.rule_api.rule import Invalid, Rule

CHECKPOINTS = ("torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential")
# the keywords each takes for itself; the non-reentrant `checkpoint` hands any other on to
# the function, the reentrant one and `checkpoint_sequential` raise ValueError on it
OWN_KEYWORDS = {
    "checkpoint": frozenset({"function", "preserve_rng_state", "context_fn", "determinism_check", "debug", "early_stop"}),
    "checkpoint_sequential": frozenset({"functions", "segments", "input", "preserve_rng_state"}),
}


class CheckpointWithoutUseReentrant(Rule):
    """
    ## What it does
    Flags `torch.utils.checkpoint.checkpoint(...)` and `checkpoint_sequential(...)` calls
    that do not pass `use_reentrant` (under any import spelling: `checkpoint(...)` after
    `from torch.utils.checkpoint import checkpoint`, `cp.checkpoint(...)` after
    `import torch.utils.checkpoint as cp`). A call passing `**kwargs` is not reported.

    ## Why is this bad?
    Without it, torch picks the old reentrant implementation and warns on every call
    (torch 2.13 still does: "Starting in PyTorch 2.9, calling checkpoint without
    use_reentrant will raise an exception"), and the docs recommend
    `use_reentrant=False`. The reentrant variant gives no gradients to the checkpointed
    part unless an input requires grad (a frozen embedding feeding a checkpointed block
    silently trains nothing inside it), ignores tensors inside nested structures, does
    not support `torch.autograd.grad` or `backward(inputs=...)`, and fails on detached
    tensors in the region.

    ## Example
    ```python
    x = checkpoint(self.block, x)
    ```

    ## Use instead
    ```python
    x = checkpoint(self.block, x, use_reentrant=False)
    ```

    ## Fix safety
    Unsafe fix: adds `use_reentrant=False`. The non-reentrant variant differs (torch's
    `checkpoint` docs list the differences): it records the autograd graph during the
    forward pass instead of running it under `no_grad`, stops recomputing as soon as
    the needed activations are back, gives gradients when no input requires grad, counts
    tensors inside nested structures, and accepts detached tensors in the region. Code
    that relied on the reentrant behaviour (a region whose parameters were meant to get
    no gradient because its input did not require one, hooks on tensors inside the
    region, a custom `autograd.Function` in it) may behave differently.
    `use_reentrant=True` keeps today's behaviour exactly and only silences the warning.

    No fix for a call that passes keywords the checkpoint does not take itself
    (`checkpoint(custom_forward, x, mode=mode)`): the reentrant default raises ValueError
    on them, and with `use_reentrant=False` they go on to the function, which raises
    TypeError unless it takes them; `checkpoint_sequential` refuses them in either variant.
    """

    code = "TL202"
    name = "checkpoint-without-use-reentrant"
    summary = "Activation checkpoint without use_reentrant (warns; the reentrant default is deprecated)"
    fixable = True
    triggers = ("checkpoint",)

    VALID = (
        "from torch.utils.checkpoint import checkpoint\n\ndef f(block, x):\n"
        "    return checkpoint(block, x, use_reentrant=False)\n",
        "import torch.utils.checkpoint as cp\n\ndef f(block, x, **kw):\n    return cp.checkpoint(block, x, **kw)\n",
        "import deepspeed\n\ndef f(block, x):\n    return deepspeed.checkpointing.checkpoint(block, x)\n",
        "def checkpoint(fn, x):\n    return fn(x)\n\ny = checkpoint(abs, -1)\n",
    )
    INVALID = (
        Invalid(
            "from torch.utils.checkpoint import checkpoint\n\ndef f(block, x):\n    return checkpoint(block, x)\n",
            unsafe_fixed="from torch.utils.checkpoint import checkpoint\n\ndef f(block, x):\n"
            "    return checkpoint(block, x, use_reentrant=False)\n",
            line=4,
            column=12,
        ),
        Invalid(
            "import torch\n\ndef f(layers, x):\n    return torch.utils.checkpoint.checkpoint_sequential(layers, 2, x)\n",
            unsafe_fixed="import torch\n\ndef f(layers, x):\n"
            "    return torch.utils.checkpoint.checkpoint_sequential(\n        layers, 2, x, use_reentrant=False\n    )\n",
            line=4,
            column=12,
        ),
        Invalid(
            "from torch.utils.checkpoint import checkpoint\n\ndef f(custom_forward, x, mode):\n"
            "    return checkpoint(custom_forward, x, mode=mode)\n",
            line=4,
            column=12,
        ),
    )

    @classmethod
    def sites(cls, view, config) -> list:
        return [node for node in view.calls_to(CHECKPOINTS) if not _ast_passes(node)]

    def visit_Call(self, node) -> None:
        qualified = self.context.imports.qualified_name(node.func)
        if qualified not in CHECKPOINTS:
            return
        if keyword_argument(node, "use_reentrant") is not None or has_double_star(node):
            return
        short = qualified.rsplit(".", 1)[1]
        passed = [argument.keyword.value for argument in node.args if argument.keyword is not None]
        others = [keyword for keyword in passed if keyword not in OWN_KEYWORDS[short]]
        if others:
            self.report(node, self._passing_on(short, node, others))
            return

        def fix(positions, call=node):
            edit = append_keyword(positions, call, "use_reentrant=False", self.context.newline)
            return Fix("Pass `use_reentrant=False`", (edit,), Applicability.UNSAFE) if edit else None

        self.report(
            node,
            f"`{short}` without `use_reentrant`: torch warns and uses the deprecated reentrant variant; "
            "pass `use_reentrant=False` (recommended) or `use_reentrant=True` (today's behaviour)",
            fix,
        )

    def _passing_on(self, short: str, call, keywords) -> str:
        """The message for a call that passes keywords its checkpoint does not take: it
        fails today, and `use_reentrant=False` is no fix unless the function takes them."""
        named = ", ".join(f"`{keyword}=`" for keyword in keywords)
        them, go = ("it", "it goes") if len(keywords) == 1 else ("them", "they go")
        if short == "checkpoint_sequential":
            return (
                f"`checkpoint_sequential` without `use_reentrant` passes {named}, which it refuses in either "
                "variant (ValueError); no fix"
            )
        function = self.context.module.code_for_node(call.args[0].value) if call.args else "the function"
        return (
            f"`checkpoint` without `use_reentrant` passes {named}: the reentrant default refuses {them} "
            f"(ValueError); no fix: with `use_reentrant=False` {go} on to `{function}`, which fails (TypeError) "
            f"unless it takes {them}"
        )


def _ast_passes(call: ast.Call) -> bool:
    return any(keyword.arg in ("use_reentrant", None) for keyword in call.keywords)
