from __future__ import annotations

import ast

from torchlint.analysis.call_arguments import literal_bool
from torchlint.core.lazy import cst
from torchlint.analysis.names import ast_dotted_name, resolve
from torchlint.rule_api.rule import Invalid, Rule
from torchlint.core.walk import walk

ENABLED = "torch.backends.cudnn.enabled"


class CudnnDisabledGlobally(Rule):
    """
    ## What it does
    Flags `torch.backends.cudnn.enabled = False` (under any import spelling, e.g.
    `cudnn.enabled = False` after `from torch.backends import cudnn`) at module level, or
    in a function that never sets it back. A function that turns cuDNN off and on again
    is scoping it on purpose and is not flagged; nor is a non-literal value
    (`cudnn.enabled = args.cudnn`), which is a choice left to the user.

    ## Why is this bad?
    It is the usual dead-end answer to a cuDNN error (`CUDNN_STATUS_NOT_SUPPORTED`,
    `CUDNN_STATUS_EXECUTION_FAILED`, a crash in an RNN's double backward): every
    convolution, RNN and batch norm in the process then runs on slower fallback kernels,
    often several times slower, and the cause (a driver / CUDA / cuDNN mismatch, an
    unsupported input shape, a layer cuDNN cannot differentiate twice) stays unknown.

    ## Example
    ```python
    import torch

    torch.backends.cudnn.enabled = False  # "fixes" CUDNN_STATUS_EXECUTION_FAILED
    ```

    ## Use instead
    Find the cause first: `torchlint doctor` checks the installed torch, CUDA, cuDNN and
    driver against each other and runs small cuDNN kernels; `torchlint explain LOG`
    matches the error. If one call really needs cuDNN off, turn it off there only:
    ```python
    with torch.backends.cudnn.flags(enabled=False):
        out, _ = self.rnn(x)
    ```

    ## Fix safety
    No fix: which call needs cuDNN off, if any, is not in the code.
    """

    code = "TL207"
    name = "cudnn-disabled-globally"
    summary = "cuDNN turned off for the whole process (slow, and hides the cause)"
    triggers = (".enabled",)

    VALID = (
        "import torch\n\ndef rnn_grad(rnn, x):\n    torch.backends.cudnn.enabled = False\n"
        "    try:\n        return rnn(x)\n    finally:\n        torch.backends.cudnn.enabled = True\n",
        "import torch\n\ndef setup(args):\n    torch.backends.cudnn.enabled = args.cudnn\n",
        "import torch\n\ntorch.backends.cudnn.benchmark = False\n",
    )
    INVALID = (
        Invalid("import torch\n\ntorch.backends.cudnn.enabled = False\n", line=3, column=1),
        Invalid(
            "from torch.backends import cudnn\n\ndef main():\n    cudnn.enabled = False\n    run()\n",
            line=4,
            column=5,
        ),
    )

    @classmethod
    def sites(cls, view, config) -> list:
        imports = view.imports
        return [
            node for node in view.nodes_of(ast.Assign)
            if any(resolve(ast_dotted_name(target), imports) == ENABLED for target in node.targets)
        ]

    def visit_Module(self, node) -> None:
        self._scan(node)

    def _scan(self, scope) -> None:
        disabling = []
        sets_back = False
        for node in walk(scope, into_functions=False):
            if node is not scope and isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                self._scan(node)
                continue
            if isinstance(node, cst.Assign) and any(self._is_enabled(t.target) for t in node.targets):
                if literal_bool(node.value) is False:
                    disabling.append(node)
                else:
                    sets_back = True
        if isinstance(scope, cst.FunctionDef) and sets_back:
            return
        for node in disabling:
            self.report(
                node,
                "cuDNN turned off for the whole process: every convolution and RNN runs on slower kernels "
                "and the cuDNN error's cause stays hidden; run `torchlint doctor`, and if one call needs it, "
                "wrap only that call in `with torch.backends.cudnn.flags(enabled=False):`",
            )

    def _is_enabled(self, target) -> bool:
        return isinstance(target, cst.Attribute) and self.context.imports.qualified_name(target) == ENABLED
