from __future__ import annotations

from torchlint.core.config import Config
from torchlint.rule_api.rule import Invalid
from torchlint.rule_api.bases.torch_api import TorchApiRule
from torchlint.analysis.torch_api_table import TorchApi


class NonPublicTorchApi(TorchApiRule):
    """
    ## What it does
    Flags uses and imports of private PyTorch names that have a public home:
    `torch.utils.data._utils.collate.default_collate` and `default_convert` (and
    `torch.utils.data.dataloader.default_collate`), public as
    `torch.utils.data.default_collate` / `default_convert` since torch 1.11. Names
    are resolved through the file's imports; the table is `torchlint/analysis/torch_api_table.py`.

    Not reported: code a compatibility guard picks for some torch releases, any branch of an
    `if` on torch's version (`torch.__version__`, `TORCH_GE_1_13`) or on `hasattr` of a torch
    module for one of these APIs, a `try` of torch imports with an `except ImportError` /
    `AttributeError` fallback (and that fallback), a default such an `if` overrides.

    ## Why is this bad?
    A module whose path starts with an underscore is PyTorch's own business: it can move
    or change in any release without a deprecation period. The public name is the same
    function and is kept stable.

    ## Example
    ```python
    from torch.utils.data._utils.collate import default_collate
    ```

    ## Use instead
    ```python
    from torch.utils.data import default_collate
    ```

    ## Fix safety
    Safe fix: the public name is the same function object, so the import is rebound to
    it (`from torch.utils.data import default_collate`) or the dotted use is renamed,
    also where this file never reads the name (other modules may import it from here).
    Offered only when `target-torch` is 1.11 or newer (where the public name exists).

    ## Options
    None.
    """

    code = "TL103"
    name = "non-public-torch-api"
    summary = "Use of a non-public PyTorch API that has a public equivalent"

    @classmethod
    def selects(cls, api: TorchApi, config: Config) -> bool:
        return api.non_public

    VALID = (
        "from torch.utils.data import default_collate\n",
        "import torch\n\nbatch = torch.utils.data.default_convert(x)\n",
        # the private name only where the public one is missing (torch < 1.11)
        "try:\n    from torch.utils.data import default_collate\nexcept ImportError:\n"
        "    from torch.utils.data._utils.collate import default_collate\n",
    )
    INVALID = (
        Invalid(
            "from torch.utils.data._utils.collate import default_collate\n\nbatch = default_collate(items)\n",
            fixed="from torch.utils.data import default_collate\n\nbatch = default_collate(items)\n",
            line=1,
            column=45,
        ),
        Invalid(
            "import torch.utils.data as data\n\nbatch = data._utils.collate.default_convert(items)\n",
            fixed="import torch.utils.data as data\n\nbatch = data.default_convert(items)\n",
            line=3,
            column=9,
        ),
    )
