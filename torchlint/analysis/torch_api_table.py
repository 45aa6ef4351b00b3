"""Deprecated, removed and non-public PyTorch APIs, as data (read by TL101, TL102, TL103).

One row per symbol: its qualified name, the torch release that deprecated it and the one
that removed it, its replacement and the release where the replacement first exists, how a
call is rewritten (`rewrite`, a name from torchlint.fixing.torch_api_rewrites; None: no automatic
rewrite), whether that rewrite keeps behaviour exactly (`safe`), and where the facts come
from. A row whose name ends in `.*` covers every member of a module. `runtime_warning` is the
warning torch gives when the API is used while it is deprecated (None: deprecated in the
documentation only, silent at run time; TL102 reports those only with
`report-documentation-only`).

Versions were read from PyTorch's release notes, docs and deprecation messages, and checked
against torch 2.13 (whether the name still exists, and what calling it warns or raises).
Adding a deprecation is adding a row here.

Cost: data; readers look rows up by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

LINALG_DOCS = "https://pytorch.org/docs/stable/linalg.html"
AMP_DOCS = "https://pytorch.org/docs/stable/amp.html"
_LINALG_REMOVALS = "https://github.com/pytorch/pytorch/pull/69857"
_AMP_DEPRECATION = "https://github.com/pytorch/pytorch/commit/b5bf757ed99301ad2db1d0b8c41edd26f1d6bfbf"
USER = "UserWarning"
FUTURE = "FutureWarning"


@dataclass(frozen=True)
class TorchApi:
    name: str
    replacement: Optional[str]
    deprecated_in: Optional[str] = None
    removed_in: Optional[str] = None
    replacement_since: str = "1.0"
    rewrite: Optional[str] = None
    safe: bool = True
    reference: str = ""
    note: str = ""
    non_public: bool = False
    # the release that withdrew the deprecation (the name is public API again)
    withdrawn_in: Optional[str] = None
    # no fix in a file that names any of these: what of the old API the rewrite would break
    no_fix_beside: Tuple[str, ...] = ()
    # the category torch warns with when the API is used ("UserWarning", "FutureWarning":
    # checked on torch 2.13, or the last release before `withdrawn_in`); None: silent,
    # deprecated in the documentation only
    runtime_warning: Optional[str] = None


def _functorch(member: str) -> TorchApi:
    return TorchApi(
        f"functorch.{member}", f"torch.func.{member}", deprecated_in="2.0", replacement_since="2.0",
        rewrite="rename", reference="https://pytorch.org/docs/stable/func.migrating.html",
        runtime_warning=FUTURE,
    )


def _six(member: str, replacement: str) -> TorchApi:
    return TorchApi(
        f"torch._six.{member}", replacement, deprecated_in="1.8", removed_in="2.0",
        rewrite="six", reference="https://github.com/pytorch/pytorch/pull/94709",
    )


TABLE: Tuple[TorchApi, ...] = (
    # linear algebra: deprecated when torch.linalg became stable (1.9); the first five
    # now raise "This function was deprecated since version 1.9 and is now removed"; svd
    # and norm are deprecated in their documentation only (no warning in torch 2.13)
    TorchApi("torch.solve", "torch.linalg.solve", "1.9", "1.13", "1.9", reference=_LINALG_REMOVALS,
             note="`torch.linalg.solve(A, B)` takes the arguments in the other order and returns only the solution"),
    TorchApi("torch.lstsq", "torch.linalg.lstsq", "1.9", "1.13", "1.9", reference=_LINALG_REMOVALS,
             note="`torch.linalg.lstsq(A, B)` takes the arguments in the other order"),
    TorchApi("torch.eig", "torch.linalg.eig", "1.9", "1.13", "1.9", reference=_LINALG_REMOVALS,
             note="`torch.linalg.eig` returns complex tensors"),
    TorchApi("torch.matrix_rank", "torch.linalg.matrix_rank", "1.9", "1.13", "1.9", reference=_LINALG_REMOVALS),
    TorchApi("torch.symeig", "torch.linalg.eigh", "1.9", "2.0", "1.9", reference=_LINALG_REMOVALS,
             note="`torch.linalg.eigh` reads the lower triangle by default (`UPLO=\"L\"`)"),
    TorchApi("torch.qr", "torch.linalg.qr", "1.9", None, "1.9", rewrite="qr", reference=LINALG_DOCS,
             runtime_warning=USER),
    TorchApi("torch.cholesky", "torch.linalg.cholesky", "1.9", None, "1.9", rewrite="cholesky", reference=LINALG_DOCS,
             runtime_warning=USER),
    TorchApi("torch.chain_matmul", "torch.linalg.multi_dot", "1.9", None, "1.9", rewrite="chain_matmul",
             reference=LINALG_DOCS, runtime_warning=USER),
    TorchApi("torch.svd", "torch.linalg.svd", "1.9", None, "1.9", reference=LINALG_DOCS,
             note="`torch.linalg.svd` returns `Vh`, not `V`, and `full_matrices` is the opposite of `some`"),
    TorchApi("torch.norm", "torch.linalg.vector_norm", "1.9", None, "1.9",
             reference="https://pytorch.org/docs/stable/generated/torch.norm.html",
             note="use `torch.linalg.vector_norm` or `torch.linalg.matrix_norm`, whichever the call means"),
    TorchApi("torch.lu", "torch.linalg.lu_factor", "1.13", None, "1.13", rewrite="lu",
             reference="https://pytorch.org/docs/stable/generated/torch.lu.html", runtime_warning=USER),
    TorchApi("torch.lu_solve", "torch.linalg.lu_solve", "1.13", None, "1.13", rewrite="lu_solve",
             reference="https://pytorch.org/docs/stable/generated/torch.lu_solve.html", runtime_warning=USER),
    TorchApi("torch.triangular_solve", "torch.linalg.solve_triangular", "1.11", None, "1.11",
             reference="https://pytorch.org/docs/stable/generated/torch.triangular_solve.html",
             note="`solve_triangular(A, B, upper=...)` takes the arguments in the other order, "
             "has no default for `upper` and returns only the solution", runtime_warning=USER),
    TorchApi("torch.ger", "torch.outer", "1.8", None, "1.8", rewrite="rename",
             reference="https://pytorch.org/docs/stable/generated/torch.ger.html"),
    TorchApi("torch.range", "torch.arange", "0.4", None, "0.4", rewrite="range",
             reference="https://pytorch.org/docs/stable/generated/torch.range.html",
             note="`torch.range` includes its end and always makes floating-point values", runtime_warning=USER),
    TorchApi("torch.testing.assert_allclose", "torch.testing.assert_close", "1.12", None, "1.9", rewrite="rename",
             safe=False, reference="https://pytorch.org/docs/stable/testing.html",
             note="`assert_close` has other default tolerances and checks dtypes", runtime_warning=FUTURE),
    # modules
    TorchApi("torch.nn.UpsamplingNearest2d", "torch.nn.Upsample", "0.4.1", None, "0.4.1", rewrite="upsampling_nearest",
             safe=False, reference="https://pytorch.org/docs/stable/generated/torch.nn.UpsamplingNearest2d.html"),
    TorchApi("torch.nn.UpsamplingBilinear2d", "torch.nn.Upsample", "0.4.1", None, "0.4.1",
             rewrite="upsampling_bilinear", safe=False,
             reference="https://pytorch.org/docs/stable/generated/torch.nn.UpsamplingBilinear2d.html"),
    TorchApi("torch.nn.utils.weight_norm", "torch.nn.utils.parametrizations.weight_norm", "2.1", None, "2.1",
             rewrite="rename", safe=False,
             reference="https://pytorch.org/docs/stable/generated/torch.nn.utils.weight_norm.html",
             note="the parametrized module has no `weight_g`/`weight_v` attributes and saves "
             "`parametrizations.weight.original0/1` (it still loads old checkpoints)",
             no_fix_beside=("remove_weight_norm", "weight_g", "weight_v"), runtime_warning=FUTURE),
    TorchApi("torch.nn.utils.remove_weight_norm", "torch.nn.utils.parametrize.remove_parametrizations", "2.1", None,
             "2.1", reference="https://pytorch.org/docs/stable/generated/torch.nn.utils.weight_norm.html"),
    TorchApi("torch.backends.cuda.sdp_kernel", "torch.nn.attention.sdpa_kernel", "2.3", None, "2.3",
             reference="https://pytorch.org/docs/stable/generated/torch.nn.attention.sdpa_kernel.html",
             note="`sdpa_kernel` takes a list of `SDPBackend`s, not `enable_*` flags", runtime_warning=FUTURE),
    # automatic mixed precision: the device-specific spellings, deprecated in 2.4
    TorchApi("torch.cuda.amp.autocast", "torch.amp.autocast", "2.4", None, "2.0", rewrite="autocast_cuda",
             reference=AMP_DOCS, runtime_warning=FUTURE),
    TorchApi("torch.cpu.amp.autocast", "torch.amp.autocast", "2.4", None, "2.0", rewrite="autocast_cpu",
             reference=AMP_DOCS, runtime_warning=FUTURE),
    TorchApi("torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "2.4", None, "2.3", rewrite="device_cuda",
             reference=_AMP_DEPRECATION, runtime_warning=FUTURE),
    TorchApi("torch.cpu.amp.GradScaler", "torch.amp.GradScaler", "2.4", None, "2.3", rewrite="device_cpu",
             reference=_AMP_DEPRECATION, runtime_warning=FUTURE),
    TorchApi("torch.cuda.amp.custom_fwd", "torch.amp.custom_fwd", "2.4", None, "2.4", rewrite="device_type_cuda",
             reference=_AMP_DEPRECATION, runtime_warning=FUTURE),
    TorchApi("torch.cuda.amp.custom_bwd", "torch.amp.custom_bwd", "2.4", None, "2.4", rewrite="device_type_cuda",
             reference=_AMP_DEPRECATION, runtime_warning=FUTURE),
    # autograd and functional
    TorchApi("torch.autograd.Variable", None, "0.4", None, "0.4", rewrite="variable", safe=False,
             reference="https://pytorch.org/docs/stable/autograd.html#variable-deprecated",
             note="tensors carry autograd state themselves: use the tensor"),
    # torch 1.x warned "nn.functional.sigmoid is deprecated" (UserWarning); 2.0 withdrew it
    TorchApi("torch.nn.functional.sigmoid", "torch.sigmoid", "0.4.1", None, "0.4.1", rewrite="rename",
             reference="https://github.com/pytorch/pytorch/pull/86905", withdrawn_in="2.0", runtime_warning=USER),
    TorchApi("torch.nn.functional.tanh", "torch.tanh", "0.4.1", None, "0.4.1", rewrite="rename",
             reference="https://github.com/pytorch/pytorch/pull/86905", withdrawn_in="2.0", runtime_warning=USER),
    # functorch merged into torch.func (2.0)
    TorchApi("functorch.*", "torch.func", "2.0", None, "2.0",
             reference="https://pytorch.org/docs/stable/func.migrating.html", runtime_warning=FUTURE),
    # ... except AOT Autograd (`functorch.compile`): torch.func has no counterpart, and torch
    # 2.13 imports and runs it without a warning; a row that is neither deprecated nor
    # removed keeps the `functorch.*` row above from claiming it
    TorchApi("functorch.compile.*", None, reference="https://pytorch.org/docs/stable/func.migrating.html"),
    *(_functorch(member) for member in (
        "vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functionalize",
    )),
    # torch._six: the Python 2/3 shim, removed in 2.0
    TorchApi("torch._six.*", None, "1.8", "2.0", reference="https://github.com/pytorch/pytorch/pull/94709"),
    _six("string_classes", "(str, bytes)"),
    _six("int_classes", "int"),
    _six("inf", "math.inf"),
    _six("nan", "math.nan"),
    _six("container_abcs", "collections.abc"),
    _six("PY3", "True"),
    _six("PY37", "True"),
    # non-public names with a public home
    TorchApi("torch.utils.data._utils.collate.default_collate", "torch.utils.data.default_collate", None, None,
             "1.11", rewrite="rename", non_public=True,
             reference="https://pytorch.org/docs/stable/data.html#torch.utils.data.default_collate"),
    TorchApi("torch.utils.data._utils.collate.default_convert", "torch.utils.data.default_convert", None, None,
             "1.11", rewrite="rename", non_public=True,
             reference="https://pytorch.org/docs/stable/data.html#torch.utils.data.default_convert"),
    TorchApi("torch.utils.data.dataloader.default_collate", "torch.utils.data.default_collate", None, None,
             "1.11", rewrite="rename", non_public=True,
             reference="https://pytorch.org/docs/stable/data.html#torch.utils.data.default_collate"),
)

BY_NAME: Dict[str, TorchApi] = {api.name: api for api in TABLE}
# the last component of every name, for the cheap gate (`*` rows: the module's own)
LAST_NAMES = frozenset(
    (api.name[:-2] if api.name.endswith(".*") else api.name).rsplit(".", 1)[-1] for api in TABLE
)
# the names below `torch` of the APIs and their replacements (`linalg`, `qr`, `func`, `vmap`,
# `parametrizations`, `weight_norm`): what `hasattr(<a torch module>, ...)` asks to tell
# releases apart (torchlint.analysis.compat_guards)
API_PARTS = frozenset(
    part
    for api in TABLE
    for name in (api.name, api.replacement or "")
    for part in name.removesuffix(".*").split(".")[1:]
    if part.isidentifier()
)


def lookup(qualified: Optional[str]) -> Optional[TorchApi]:
    """The row for a qualified name: its own, else that of a `module.*` row above it."""
    if not qualified:
        return None
    api = BY_NAME.get(qualified)
    if api is not None:
        return api
    head = qualified
    while "." in head:
        head = head.rsplit(".", 1)[0]
        api = BY_NAME.get(head + ".*")
        if api is not None:
            return api
    return BY_NAME.get(qualified + ".*")
