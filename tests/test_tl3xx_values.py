"""TL301-TL303's rewrites compute what the code computed: the fixed functions, produced
by the real `torchlint check --fix --unsafe-fixes`, are run on CPU torch against the
originals on random and edge inputs, in every float dtype, for ints and bools, with
gradients. They agree to float rounding wherever the original is accurate; where the
original rounds `1 + x`, cancels `exp(x) - 1` or overflows `exp`, the rewrite is the
one that matches a float64 reference."""

from __future__ import annotations

import math

import pytest

from cli_support import run_torchlint

torch = pytest.importorskip("torch")

ORIGINAL = """\
import torch as T
from torch import exp, log


def log_one_plus(x):
    return T.log(1 + x)


def log_plus_one_method(x):
    return (x + 1.0).log()


def exp_minus_one(x):
    return T.exp(x) - 1


def exp_minus_one_bare(x):
    return exp(x) - 1


def log_sum_exp(x):
    return T.log(T.sum(T.exp(x), dim=-1))


def log_sum_exp_keepdim(x):
    return log(exp(x).sum(1, keepdim=True))
"""

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """(original functions, fixed functions): the fixed module is what the CLI wrote."""
    root = tmp_path_factory.mktemp("numerics")
    path = root / "ops.py"
    path.write_text(ORIGINAL, encoding="utf-8")
    result = run_torchlint(
        "check", "--no-cache", "--select", "TL301,TL302,TL303", "--fix", "--unsafe-fixes", str(path), cwd=root
    )
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
    fixed = path.read_text(encoding="utf-8")
    for name in ("log1p", "expm1", "logsumexp"):
        assert name in fixed, fixed
    assert "T.log(1" not in fixed and "- 1" not in fixed and "T.sum(" not in fixed, fixed
    return _functions(ORIGINAL), _functions(fixed)


def _functions(code: str) -> dict:
    namespace: dict = {}
    exec(compile(code, "<ops>", "exec"), namespace)
    return namespace


def _edge_and_random(dtype, edges, seed: int):
    generator = torch.Generator().manual_seed(seed)
    info = torch.finfo(dtype)
    special = [info.tiny, -info.tiny, info.eps, -info.eps, info.max, -info.max]
    random = torch.randn(400, generator=generator, dtype=torch.float64)
    scales = torch.tensor([1e-12, 1e-6, 1e-3, 1.0, 10.0], dtype=torch.float64).repeat(80)
    values = torch.cat([torch.tensor(edges + special, dtype=torch.float64), random * scales])
    return values.to(dtype)


def _ulp(dtype) -> float:
    return torch.finfo(dtype).eps


def _assert_same_specials(old, new):
    assert old.dtype == new.dtype and old.shape == new.shape
    assert torch.equal(torch.isnan(old), torch.isnan(new))
    for sign in (1, -1):
        assert torch.equal(old == sign * math.inf, new == sign * math.inf)


def _assert_accurate(old, new, reference, dtype):
    """`new` is within a few ulps of the float64 reference, and never further from it than
    `old` is, beyond that rounding."""
    finite = torch.isfinite(reference)
    ref = reference[finite]
    tolerance = 4 * _ulp(dtype) * ref.abs().clamp_min(torch.finfo(dtype).tiny)
    new_error = (new.double()[finite] - ref).abs()
    old_error = (old.double()[finite] - ref).abs()
    assert bool((new_error <= tolerance).all()), (new[finite][new_error > tolerance], ref[new_error > tolerance])
    assert bool((new_error <= old_error + tolerance).all())


LOG_EDGES = [0.0, -0.0, -1.0, -1.5, -0.5, 0.5, 1e-8, -1e-8, 1e-30, 1e30, math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", ["log_one_plus", "log_plus_one_method"])
def test_log1p_rewrite(pair, name, dtype):
    original, fixed = pair
    x = _edge_and_random(dtype, LOG_EDGES, seed=301)
    old, new = original[name](x), fixed[name](x)
    _assert_same_specials(old, new)
    _assert_accurate(old, new, torch.log1p(x.double()), dtype)
    exact = ((1 + x) - 1 == x) & torch.isfinite(old)  # where `1 + x` rounds nothing away
    assert torch.allclose(old[exact].double(), new[exact].double(), rtol=4 * _ulp(dtype), atol=4 * _ulp(dtype))
    tiny = x.abs() < _ulp(dtype) / 4
    assert bool((old[tiny & (x != 0)] == 0).all()) and bool((new[tiny] == x[tiny]).all())
    _assert_negative_zero_keeps_its_sign(x, old, new)


def _assert_negative_zero_keeps_its_sign(x, old, new):
    """The one documented difference besides rounding: `-0.0` in, `-0.0` out (was `0.0`)."""
    negative_zero = (x == 0) & torch.signbit(x)
    assert bool(negative_zero.any())
    assert bool(torch.signbit(new[negative_zero]).all()) and not bool(torch.signbit(old[negative_zero]).any())


EXP_EDGES = [0.0, -0.0, 1e-8, -1e-8, 1.0, -1.0, 20.0, -20.0, 88.0, 89.0, 709.0, 710.0, -1000.0, math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", ["exp_minus_one", "exp_minus_one_bare"])
def test_expm1_rewrite(pair, name, dtype):
    original, fixed = pair
    x = _edge_and_random(dtype, EXP_EDGES, seed=302)
    old, new = original[name](x), fixed[name](x)
    _assert_same_specials(old, new)
    _assert_accurate(old, new, torch.expm1(x.double()).to(dtype).double(), dtype)
    _assert_negative_zero_keeps_its_sign(x, old, new)
    large = x.abs() > 1
    assert torch.allclose(old[large].double(), new[large].double(), rtol=4 * _ulp(dtype), equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool], ids=str)
def test_integer_and_bool_inputs_promote_alike(pair, dtype):
    original, fixed = pair
    x = torch.tensor([0, 1, 2, 3, 7, 1, 0, 5], dtype=torch.int64).to(dtype)
    for name in ("log_one_plus", "log_plus_one_method", "exp_minus_one", "exp_minus_one_bare"):
        old, new = original[name](x), fixed[name](x)
        assert old.dtype == new.dtype
        assert torch.allclose(old, new, rtol=1e-6)


def _lse_inputs(dtype, seed: int):
    generator = torch.Generator().manual_seed(seed)
    rows = [torch.randn(8, generator=generator, dtype=torch.float64) * scale for scale in (1e-3, 1, 5, 30)]
    rows += [
        torch.full((8,), 1000.0, dtype=torch.float64),  # exp overflows: the original gives inf
        torch.full((8,), -1000.0, dtype=torch.float64),  # exp underflows: the original gives -inf
        torch.tensor([0.0, 1.0, math.inf, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=torch.float64),
        torch.full((8,), -math.inf, dtype=torch.float64),
        torch.tensor([0.0, math.nan, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=torch.float64),
    ]
    return torch.stack(rows).to(dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", ["log_sum_exp", "log_sum_exp_keepdim"])
def test_logsumexp_rewrite(pair, name, dtype):
    original, fixed = pair
    x = _lse_inputs(dtype, seed=303)
    old, new = original[name](x), fixed[name](x)
    assert old.dtype == new.dtype and old.shape == new.shape
    reference = torch.logsumexp(x.double(), dim=-1).reshape(old.shape)
    finite_before = torch.isfinite(old)
    assert torch.allclose(old[finite_before].double(), new[finite_before].double(), rtol=8 * _ulp(dtype), atol=8 * _ulp(dtype))
    # where exp overflowed or underflowed, the rewrite is the true value, not inf / -inf
    lost = ~finite_before & torch.isfinite(reference)
    assert bool(lost.any())
    assert torch.allclose(new[lost].double(), reference[lost], rtol=8 * _ulp(dtype))
    # a real inf, an all -inf row and a nan stay what they were
    kept = ~torch.isfinite(reference)
    assert torch.equal(torch.isnan(new[kept]), torch.isnan(old[kept]))
    assert torch.equal(new[kept][~torch.isnan(new[kept])], old[kept][~torch.isnan(old[kept])])


@pytest.mark.parametrize(
    "name",
    ["log_one_plus", "log_plus_one_method", "exp_minus_one", "exp_minus_one_bare", "log_sum_exp", "log_sum_exp_keepdim"],
)
def test_gradients_agree(pair, name):
    original, fixed = pair
    generator = torch.Generator().manual_seed(304)
    base = torch.rand(6, 5, generator=generator, dtype=torch.float64) * 4 - 1.5 + (0 if "exp" in name else 2)
    grads = []
    for functions in (original, fixed):
        x = base.clone().requires_grad_(True)
        functions[name](x).sum().backward()
        grads.append(x.grad)
    assert torch.allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)
