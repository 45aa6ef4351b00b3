from __future__ import annotations

import ast
from typing import Optional

from torchlint.core.lazy import cst
from torchlint.rule_api.rule import Invalid, Rule
from torchlint.core.walk import walk

LAUNCH_BLOCKING = "CUDA_LAUNCH_BLOCKING"
DSA = "TORCH_USE_CUDA_DSA"
VARIABLES = (LAUNCH_BLOCKING, DSA)
# torch.cuda functions that query without creating a CUDA context, or whose effect is
# deferred until CUDA is initialised (is_available may initialise the driver; it is
# left out rather than risk a wrong finding)
_NO_CONTEXT = frozenset(
    {
        "is_available", "device_count", "is_initialized", "get_arch_list", "manual_seed", "manual_seed_all",
        "seed", "seed_all", "empty_cache", "set_per_process_memory_fraction", "memory_allocated",
    }
)


class CudaEnvVarSetTooLate(Rule):
    """
    ## What it does
    Flags two environment variables set from Python where they cannot take effect:

    - `os.environ["CUDA_LAUNCH_BLOCKING"] = "1"` (or `setdefault`, `update`, `os.putenv`)
      after code in the same module or function has already used CUDA (`x.cuda()`,
      `.to("cuda")`, `device="cuda"`, `torch.cuda.set_device(...)`, `torch.cuda.synchronize()`),
      or set a second time in one function (switched on and off around a block).
    - `TORCH_USE_CUDA_DSA`, set anywhere at run time.

    ## Why is this bad?
    `CUDA_LAUNCH_BLOCKING` is read once, when the process initialises CUDA (torch does
    that lazily, on the first CUDA operation); set after that, it changes nothing, and
    the error being debugged is still reported asynchronously, at a later, unrelated line.
    `TORCH_USE_CUDA_DSA` is read only when PyTorch itself is compiled from source: it is
    a build switch for device-side assertions, and the installed binary never looks at
    it. Both lines look like they help while they do nothing.

    ## Example
    ```python
    model = Net().cuda()
    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
    ```

    ## Use instead
    Set it for the whole process, before Python starts:
    <!-- not run: train.py stands for your training script -->
    ```shell
    CUDA_LAUNCH_BLOCKING=1 python train.py
    ```
    or as the first lines of the entry script, before anything touches CUDA.

    ## Fix safety
    No fix: the right place is outside the code (the shell, the job's environment).

    ## Limits
    Only uses of CUDA earlier in the same module body or the same function are seen;
    `torch.cuda.is_available()` and `device_count()` are not counted as uses.
    """

    code = "TL208"
    name = "cuda-env-var-set-too-late"
    summary = "CUDA_LAUNCH_BLOCKING set after CUDA is initialised, or TORCH_USE_CUDA_DSA set at run time"
    triggers = VARIABLES

    VALID = (
        "import os\nos.environ['CUDA_LAUNCH_BLOCKING'] = '1'\nimport torch\n\nmodel = torch.nn.Linear(2, 2).cuda()\n",
        "import os\n\ndef main():\n    os.environ.setdefault('CUDA_LAUNCH_BLOCKING', '1')\n    import torch\n"
        "    return torch.zeros(1, device='cuda')\n",
        "import os\n\nblocking = os.environ.get('CUDA_LAUNCH_BLOCKING') == '1'\n",
    )
    INVALID = (
        Invalid(
            "import os\nimport torch\n\nmodel = torch.nn.Linear(2, 2).cuda()\nos.environ['CUDA_LAUNCH_BLOCKING'] = '1'\n",
            line=5,
            column=1,
        ),
        Invalid("import os\n\nos.environ['TORCH_USE_CUDA_DSA'] = '1'\n", line=3, column=1),
        Invalid(
            "import os\n\ndef profile_step(step):\n    os.environ['CUDA_LAUNCH_BLOCKING'] = '1'\n    run(step)\n"
            "    os.environ['CUDA_LAUNCH_BLOCKING'] = '0'\n",
            line=6,
            column=5,
        ),
        Invalid(
            "import os\nimport torch\n\ndef debug(x):\n    y = x.to('cuda')\n"
            "    os.environ.update({'CUDA_LAUNCH_BLOCKING': '1'})\n    return y\n",
            line=6,
            column=5,
        ),
    )

    @classmethod
    def sites(cls, view, config) -> list:
        return [node for node in view.nodes_of(ast.Constant) if isinstance(node.value, str) and node.value in VARIABLES]

    def visit_Module(self, node) -> None:
        self._scan(node)

    def _scan(self, scope) -> None:
        first_use = None
        set_before = False
        for node in walk(scope, into_functions=False):
            if node is not scope and isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                self._scan(node)
                continue
            variable = self._variable_set(node)
            if variable == DSA:
                self.report(
                    node,
                    "`TORCH_USE_CUDA_DSA` is read only when PyTorch is built from source; "
                    "setting it at run time does nothing",
                )
            elif variable == LAUNCH_BLOCKING:
                if first_use is not None:
                    row = self.context.positions.start(first_use).row
                    why = f"CUDA is already in use here (line {row})"
                elif set_before and isinstance(scope, cst.FunctionDef):
                    why = "switching it at run time changes nothing"
                else:
                    set_before = True
                    continue
                self.report(
                    node,
                    f"`CUDA_LAUNCH_BLOCKING` is read once, when the process initialises CUDA; {why}: "
                    "set it before Python starts (`CUDA_LAUNCH_BLOCKING=1 python ...`)",
                )
                set_before = True
            elif first_use is None and isinstance(node, cst.Call) and self._uses_cuda(node):
                first_use = node

    def _variable_set(self, node) -> Optional[str]:
        """The variable an `os.environ[...] = `, `setdefault`, `update` or `putenv` sets."""
        keys = []
        if isinstance(node, cst.Assign):
            for target in node.targets:
                subscript = target.target
                if isinstance(subscript, cst.Subscript) and self._is(subscript.value, "os.environ"):
                    keys += [element.slice.value for element in subscript.slice if isinstance(element.slice, cst.Index)]
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            owner, method = node.func.value, node.func.attr.value
            if method in ("setdefault", "__setitem__") and self._is(owner, "os.environ") and node.args:
                keys.append(node.args[0].value)
            elif method == "putenv" and self._is(owner, "os") and node.args:
                keys.append(node.args[0].value)
            elif method == "update" and self._is(owner, "os.environ"):
                for arg in node.args:
                    if arg.keyword is not None:
                        keys.append(cst.SimpleString(repr(arg.keyword.value)))
                    elif isinstance(arg.value, cst.Dict):
                        keys += [e.key for e in arg.value.elements if isinstance(e, cst.DictElement)]
        for key in keys:
            if isinstance(key, cst.SimpleString) and key.evaluated_value in VARIABLES:
                return key.evaluated_value
        return None

    def _is(self, expression, qualified: str) -> bool:
        return self.context.imports.qualified_name(expression) == qualified

    def _uses_cuda(self, call) -> bool:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "cuda":
            return self.context.imports.qualified_name(func) is None  # `x.cuda(...)`, not a module
        qualified = self.context.imports.qualified_name(func) or ""
        if qualified.startswith("torch.cuda.") and qualified.count(".") == 2:
            return qualified.rsplit(".", 1)[1] not in _NO_CONTEXT and qualified != "torch.cuda.device"
        if qualified == "torch.device":
            return False
        devices = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "device"]
        if isinstance(func, cst.Attribute) and func.attr.value == "to":
            devices += [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        return any(_names_cuda(value) for value in devices)


def _names_cuda(value) -> bool:
    if not isinstance(value, cst.SimpleString):
        return False
    text = value.evaluated_value
    return isinstance(text, str) and text.startswith("cuda")
