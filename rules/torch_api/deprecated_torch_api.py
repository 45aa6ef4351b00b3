from __future__ import annotations

from torchlint.core.config import Config
from torchlint.rule_api.rule import Invalid
from torchlint.rule_api.bases.torch_api import TorchApiRule, selects_deprecated
from torchlint.analysis.torch_api_table import TorchApi

REPORT_DOCUMENTATION_ONLY = "report-documentation-only"


class DeprecatedTorchApi(TorchApiRule):
    """
    ## What it does
    Flags uses and imports of deprecated PyTorch APIs that still exist: `torch.qr`,
    `torch.cholesky`, `torch.chain_matmul`, `torch.svd`, `torch.norm` (1.9),
    `torch.triangular_solve` (1.11), `torch.lu`, `torch.lu_solve` (1.13), `torch.ger`
    (1.8), `torch.range`, `torch.autograd.Variable` (0.4), `nn.UpsamplingNearest2d`,
    `nn.UpsamplingBilinear2d` (0.4.1), `torch.testing.assert_allclose` (1.12), `functorch`
    (2.0, now `torch.func`), `torch.nn.utils.weight_norm` (2.1),
    `torch.backends.cuda.sdp_kernel` (2.3), and `torch.cuda.amp.autocast`,
    `torch.cpu.amp.autocast`, `torch.cuda.amp.GradScaler`, `torch.cuda.amp.custom_fwd` /
    `custom_bwd` (2.4). Names are resolved through the file's imports. The table, with each
    API's versions, replacement and reference, is `torchlint/analysis/torch_api_table.py`.

    An API is reported only once it is deprecated at `target-torch` (default 2.2), and
    fixed only where the replacement exists there: the mixed-precision names need
    `target-torch = "2.4"`. `F.sigmoid` and `F.tanh` (deprecated in 0.4.1, plain aliases
    again since 2.0) are reported only for a target below 2.0. APIs deprecated in their
    documentation only, which torch runs without a warning (`torch.norm`, `torch.svd`,
    `torch.ger`, `torch.autograd.Variable`, the two upsampling modules,
    `torch.nn.utils.remove_weight_norm`), are reported and fixed only with
    `report-documentation-only`.

    Not reported: code a compatibility guard picks for some torch releases, any branch of an
    `if` on torch's version (`torch.__version__`, `TORCH_GE_1_13`) or on `hasattr` of a torch
    module for one of these APIs, a `try` of torch imports with an `except ImportError` /
    `AttributeError` fallback (and that fallback), a default such an `if` overrides.

    ## Why is this bad?
    These APIs warn at run time and will be removed, as the linear-algebra functions of the
    same generation (`torch.solve`, `torch.symeig`) already are (TL101). Some have traps
    their replacements fix: `torch.range` includes its end point and always returns floats.

    ## Example
    ```python
    from torch.cuda.amp import autocast
    import torch

    with autocast(dtype=torch.bfloat16):
        q, r = torch.qr(a, some=False)
        idx = torch.range(0, 9)
    ```

    ## Use instead
    ```python
    import torch

    with torch.amp.autocast("cuda", dtype=torch.bfloat16):
        q, r = torch.linalg.qr(a, mode="complete")
        idx = torch.arange(0.0, 10.0)
    ```

    ## Fix safety
    Safe (same values, same types): `torch.qr(a, some=<literal>)` -> `torch.linalg.qr(a,
    mode=...)`; `torch.cholesky(a, upper=True)` -> `torch.linalg.cholesky(a).mH`;
    `torch.chain_matmul(a, b, c)` -> `torch.linalg.multi_dot([a, b, c])`; `torch.ger` ->
    `torch.outer`; `torch.lu(a)` -> `torch.linalg.lu_factor(a)`; `torch.lu_solve(b, lu,
    piv)` -> `torch.linalg.lu_solve(lu, piv, b)`; `torch.range` with literals ->
    `torch.arange` with the end moved past the last value (floats unless `dtype=` is
    given); `functorch` transforms -> `torch.func`; `torch.cuda.amp.autocast(**kw)` ->
    `torch.amp.autocast("cuda", **kw)` (keyword arguments only); `GradScaler(...)` ->
    `torch.amp.GradScaler("cuda", ...)`; `custom_fwd`/`custom_bwd` ->
    `torch.amp.custom_fwd(..., device_type="cuda")`. Imports are added and removed as needed;
    an imported name this file never reads moves to its new home (`from torch.func import
    vmap`), as other modules may import it from here; one with no new home is removed only
    outside a package `__init__` and while no other linted file imports it.

    Unsafe: `assert_allclose` -> `torch.testing.assert_close` (other tolerances, checks
    dtypes); the upsampling modules -> `nn.Upsample(..., mode=...)` (another class);
    `Variable(t)` -> `t` (the very tensor, no copy); `weight_norm` ->
    `torch.nn.utils.parametrizations.weight_norm` (no `weight_g`/`weight_v`; the saved keys
    change, old checkpoints still load; not offered in a file that calls
    `remove_weight_norm` or names `weight_g`/`weight_v`).

    No fix: `torch.svd` (returns `Vh`; `some` is the opposite of `full_matrices`),
    `torch.norm` (the replacement depends on the meaning), `triangular_solve` (other order
    and result), `sdp_kernel` (other signature), non-literal arguments
    (`torch.qr(a, some=cfg.some)`), and imported names also used in ways a rewrite does not
    reach (passed as a value).

    ## Options
    - `report-documentation-only` (default `false`): also report, and fix where a rewrite
      exists, the APIs deprecated in their documentation only (listed above).

    ```toml
    [tool.torchlint.deprecated-torch-api]
    report-documentation-only = true
    ```

    `target-torch` (`[tool.torchlint]`) decides what is reported and fixed.
    """

    code = "TL102"
    name = "deprecated-torch-api"
    summary = "Use of a deprecated PyTorch API"
    options = {REPORT_DOCUMENTATION_ONLY: False}

    @classmethod
    def selects(cls, api: TorchApi, config: Config) -> bool:
        if not selects_deprecated(api, config):
            return False
        if api.runtime_warning is not None:
            return True
        return config.options_for(cls.name).get(REPORT_DOCUMENTATION_ONLY, cls.options[REPORT_DOCUMENTATION_ONLY])

    VALID = (
        "import torch\n\nq, r = torch.linalg.qr(a)\nx = torch.arange(10)\n",
        # AOT Autograd stayed in functorch.compile: torch.func has no counterpart
        "from functorch.compile import aot_function, make_boxed_func\n\ncompiled = aot_function(f, make_boxed_func)\n",
        # not yet deprecated at the default target (2.2): the 2.4 mixed-precision names
        "import torch\n\nwith torch.cuda.amp.autocast():\n    pass\n",
        # un-deprecated in 2.0
        "import torch.nn.functional as F\n\ny = F.sigmoid(x) + F.tanh(x)\n",
        # methods and local names that only look alike
        "import torch\n\ny = x.norm() + x.qr()[0].sum()\nfor i in range(3):\n    pass\n",
        # deprecated in the documentation only (no run-time warning): reported only with
        # `report-documentation-only`
        "import torch\nfrom torch.autograd import Variable\n\n"
        "n = torch.norm(Variable(x), dim=1) + torch.ger(a, b)\nup = torch.nn.UpsamplingBilinear2d(scale_factor=2)\n",
        # compatibility guards: the old API is what older releases run
        "try:\n    from torch import vmap\nexcept ImportError:\n    from functorch import vmap\n",
        "import torch.nn as nn\n\ndef build(layer):\n    norm = nn.utils.weight_norm\n"
        "    if hasattr(nn.utils.parametrizations, 'weight_norm'):\n"
        "        norm = nn.utils.parametrizations.weight_norm\n    return norm(layer)\n",
        "import torch\n\nif torch.__version__ < '1.13':\n    factors = torch.lu(a)\n"
        "else:\n    factors = torch.linalg.lu_factor(a)\n",
    )
    INVALID = (
        # a test that picks no release, and a default nothing overrides by version
        Invalid(
            "import torch\nimport torch.nn as nn\n\nif hasattr(model, 'qr'):\n    factors = torch.lu(a)\n"
            "norm = nn.utils.weight_norm\nif use_spectral:\n    norm = nn.utils.spectral_norm\n",
            fixed="import torch\nimport torch.nn as nn\n\nif hasattr(model, 'qr'):\n    factors = torch.linalg.lu_factor(a)\n"
            "norm = nn.utils.weight_norm\nif use_spectral:\n    norm = nn.utils.spectral_norm\n",
            unsafe_fixed="import torch\nimport torch.nn as nn\n\nif hasattr(model, 'qr'):\n"
            "    factors = torch.linalg.lu_factor(a)\nnorm = nn.utils.parametrizations.weight_norm\nif use_spectral:\n"
            "    norm = nn.utils.spectral_norm\n",
            line=5,
            column=15,
        ),
        Invalid(
            "import torch as T\n\nq, r = T.qr(a, some=False)\nL = T.cholesky(a, upper=True)\n",
            fixed="import torch as T\n\nq, r = T.linalg.qr(a, mode=\"complete\")\nL = T.linalg.cholesky(a).mH\n",
            line=3,
            column=8,
        ),
        # `ger` is deprecated in the documentation only: reported and fixed with the option
        Invalid(
            "from torch import ger, chain_matmul\n\ny = ger(a, b) + chain_matmul(a, b, c)\n",
            fixed="import torch\n\ny = torch.outer(a, b) + torch.linalg.multi_dot([a, b, c])\n",
            line=1,
            column=19,
            options=((REPORT_DOCUMENTATION_ONLY, True),),
        ),
        Invalid(
            "import torch\n\nidx = torch.range(0, 9)\nback = torch.range(10, 2, -2, dtype=torch.long)\n",
            fixed="import torch\n\nidx = torch.arange(0.0, 10.0)\nback = torch.arange(10, 1, -2, dtype=torch.long)\n",
            line=3,
            column=7,
        ),
        # an argument that cannot be reasoned about: reported, not fixed
        Invalid("import torch\n\nL = torch.cholesky(a, upper=cfg.upper)\n", line=3, column=5),
        Invalid(
            "import functorch\n\ng = functorch.vmap(f)\n",
            line=1,
            column=8,
        ),
        Invalid(
            "from functorch import vmap, grad\n\ng = vmap(grad(f))\n",
            fixed="from torch.func import vmap, grad\n\ng = vmap(grad(f))\n",
            line=1,
            column=23,
        ),
        # never read here, but another module may import it from here: it moves, it stays
        Invalid("from functorch import vmap\n", fixed="from torch.func import vmap\n", line=1, column=23),
        Invalid(
            "import torch.nn as nn\n\nup = nn.UpsamplingBilinear2d(scale_factor=2)\n",
            unsafe_fixed="import torch.nn as nn\n\nup = nn.Upsample(scale_factor=2, mode=\"bilinear\", align_corners=True)\n",
            line=3,
            column=6,
            options=((REPORT_DOCUMENTATION_ONLY, True),),
        ),
        Invalid(
            "from torch.nn.utils import weight_norm\n\nconv = weight_norm(conv)\n",
            unsafe_fixed="from torch.nn.utils.parametrizations import weight_norm\n\nconv = weight_norm(conv)\n",
            line=1,
            column=28,
        ),
    )
