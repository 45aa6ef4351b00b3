"""The TL102/TL103 rewrites compute what the code they replace computed, on the installed
CPU torch, for every deprecated API that still exists there (the removed ones cannot run)."""

from __future__ import annotations

import warnings
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")

from torchlint.core.config import Config  # noqa: E402
from torchlint.engine import lint_text  # noqa: E402
from torchlint.fixing.apply import fix_text  # noqa: E402
from torchlint.rule_api.registry import find_rule  # noqa: E402

RULES = [find_rule(code) for code in ("TL101", "TL102", "TL103")]
SETUP = (
    "import torch\n"
    "g = torch.Generator().manual_seed(0)\n"
    "a = torch.randn(4, 4, generator=g, dtype=torch.float64)\n"
    "spd = a @ a.mT + 4 * torch.eye(4, dtype=torch.float64)\n"
    "b = torch.randn(4, 2, generator=g, dtype=torch.float64)\n"
    "v = torch.randn(4, generator=g, dtype=torch.float64)\n"
)
# (name, code defining `result`, unsafe): each must be rewritten by a fix
CASES = [
    ("qr-reduced", "result = torch.qr(a)", False),
    ("qr-complete", "result = torch.qr(a[:, :3], some=False)", False),
    ("qr-some-true", "result = torch.qr(a[:, :3], True)", False),
    ("qr-input-keyword", "result = torch.qr(input=a)", False),
    ("cholesky-lower", "result = torch.cholesky(spd)", False),
    ("cholesky-upper-keywords", "result = torch.cholesky(upper=True, input=spd)", False),
    ("cholesky-upper", "result = torch.cholesky(spd, upper=True)", False),
    ("chain-matmul", "result = torch.chain_matmul(a, spd, a.mT)", False),
    ("ger", "result = torch.ger(v, v[:3])", False),
    ("lu", "result = torch.lu(a)", False),
    ("lu-solve", "LU, piv = torch.linalg.lu_factor(a)\nresult = torch.lu_solve(b, LU, piv)", False),
    ("range-up", "result = torch.range(-3, 7)", False),
    ("range-step", "result = torch.range(1, 10, 3)", False),
    ("range-down", "result = torch.range(10, -4, -3)", False),
    ("range-dtype", "result = torch.range(0, 5, dtype=torch.int32)", False),
    ("range-keyword-step", "result = torch.range(2, 9, step=2)", False),
    ("functorch-vmap", "from functorch import vmap\nresult = vmap(torch.sin)(a)", False),
    ("collate", "from torch.utils.data._utils.collate import default_collate\nresult = default_collate([v, v])", False),
    ("upsampling-nearest", "result = torch.nn.UpsamplingNearest2d(scale_factor=2)(a[None, None])", True),
    ("upsampling-bilinear", "result = torch.nn.UpsamplingBilinear2d(size=(7, 5))(a[None, None])", True),
    ("variable", "from torch.autograd import Variable\nresult = Variable(a * 2)", True),
    ("cpu-autocast", "with torch.cpu.amp.autocast(dtype=torch.bfloat16):\n    result = a.float() @ a.float()", False),
    ("cuda-scaler-disabled", "result = torch.cuda.amp.GradScaler(enabled=False).is_enabled()", False),
]


def fixed(code: str, unsafe: bool):
    # ger, the upsampling modules and Variable are deprecated in the documentation only
    documentation_only = (("deprecated-torch-api", (("report-documentation-only", True),)),)
    config = replace(Config(), target_torch="2.4", rule_options=documentation_only)
    return fix_text(code, lambda text: lint_text(text, "case.py", config, RULES), unsafe)


def run(code: str):
    scope: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, "case.py", "exec"), scope)
    return scope["result"]


def same(before, after) -> bool:
    if isinstance(before, torch.Tensor):
        return isinstance(after, torch.Tensor) and before.dtype == after.dtype and torch.equal(before, after)
    if isinstance(before, tuple):
        return isinstance(after, tuple) and len(before) == len(after) and all(map(same, before, after))
    return before == after


@pytest.mark.parametrize("name,body,unsafe", CASES, ids=[c[0] for c in CASES])
def test_rewrite_computes_the_same_values(name, body, unsafe):
    original = SETUP + body + "\n"
    outcome = fixed(original, unsafe)
    assert outcome.changed, f"not rewritten:\n{original}"
    # an unsafe rewrite is applied only with --unsafe-fixes
    assert fixed(original, False).changed is not unsafe
    rewritten = outcome.text
    before, after = run(original), run(rewritten)
    assert same(before, after), f"{name}:\n{rewritten}\n{before!r}\n{after!r}"


def test_the_comparison_catches_a_wrong_rewrite():
    assert not same(torch.range(0, 3), torch.arange(0, 3))
    assert not same(torch.range(0, 3), torch.arange(0, 4))  # int64, not float
    assert same(torch.range(0, 3), torch.arange(0.0, 4.0))
