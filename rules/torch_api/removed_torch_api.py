from __future__ import annotations

from torchlint.core.config import Config
from torchlint.rule_api.rule import Invalid
from torchlint.rule_api.bases.torch_api import TorchApiRule
from torchlint.analysis.torch_api_table import TorchApi


class RemovedTorchApi(TorchApiRule):
    """
    ## What it does
    Flags uses and imports of PyTorch APIs that current releases no longer have:
    `torch.solve`, `torch.lstsq`, `torch.eig`, `torch.matrix_rank` (removed in 1.13),
    `torch.symeig` and the `torch._six` module (removed in 2.0). Names are resolved
    through the file's imports (`import torch as T`, `from torch import cuda`). The
    table of APIs, with the release that deprecated and removed each one, its replacement
    and a reference, is `torchlint/analysis/torch_api_table.py`.

    Removals are reported whatever `target-torch` says, at level `error` (SARIF, GitHub
    annotations): the code fails on every torch since the removal.

    Not reported: code a compatibility guard picks for some torch releases, any branch of an
    `if` on torch's version (`torch.__version__`, `TORCH_GE_1_13`) or on `hasattr` of a torch
    module for one of these APIs, a `try` of torch imports with an `except ImportError` /
    `AttributeError` fallback (and that fallback), a default such an `if` overrides.

    ## Why is this bad?
    The call fails at run time: the linear-algebra functions raise `RuntimeError: This
    function was deprecated since version 1.9 and is now removed`, and
    `import torch._six` raises `ModuleNotFoundError`. The replacements in `torch.linalg`
    change argument order or return types, which is why they deserve a reading.

    ## Example
    ```python
    from torch._six import inf, string_classes
    x = torch.solve(b, A).solution
    ```

    ## Use instead
    ```python
    from math import inf
    string_classes = (str, bytes)
    x = torch.linalg.solve(A, b)
    ```

    ## Fix safety
    Safe fix for `from torch._six import ...` when every imported name has a known value:
    each name is bound to what `torch._six` held (`inf` from `math`, `container_abcs` as
    `collections.abc`, `int_classes = int`, `string_classes = (str, bytes)`), so the
    rest of the module keeps working unchanged; `torch._six.inf` written in full becomes
    `math.inf` (adding `import math`). The linear-algebra removals have no fix: each
    replacement takes its arguments in another order or returns something else
    (`torch.linalg.eig` returns complex tensors), which needs a reading.

    ## Options
    None. `target-torch` does not silence a removal.
    """

    code = "TL101"
    name = "removed-torch-api"
    summary = "Use of a PyTorch API that has been removed"
    level = "error"

    @classmethod
    def selects(cls, api: TorchApi, config: Config) -> bool:
        return api.removed_in is not None

    VALID = (
        "import torch\n\nx = torch.linalg.solve(A, b)\n",
        # a method and a local function of the same name are not the removed API
        "import torch\n\ndef solve(a, b):\n    return a\n\ny = solve(1, 2) + x.symeig\n",
        "from math import inf\n",
        # a compatibility guard: the removed name is tried first, the fallback is there
        "try:\n    from torch._six import inf\nexcept ImportError:\n    from math import inf\n",
    )
    INVALID = (
        Invalid("import torch\n\nx = torch.solve(b, A)\n", line=3, column=5),
        Invalid("import torch as T\n\nvalues = T.symeig(A)\n", line=3, column=10),
        Invalid(
            "from torch._six import inf, string_classes as strings\n\nLIMIT = inf\nKINDS = strings\n",
            fixed="from math import inf\n\nstrings = (str, bytes)\n\nLIMIT = inf\nKINDS = strings\n",
            line=1,
            column=24,
        ),
        Invalid(
            "import torch\n\nok = isinstance(x, torch._six.string_classes) and y < torch._six.inf\n",
            fixed="import math\n\nok = isinstance(x, (str, bytes)) and y < math.inf\n",
            line=3,
            column=20,
        ),
    )
