"""NaN/Inf: the first module whose output turns non-finite, the first parameter whose gradient does.

Forward hooks run when a module returns, innermost first, so the first output found
non-finite belongs to the module that made it (or that first received it: the message
says whether its input was already non-finite). Parameter gradient hooks run as backward
reaches each parameter, so the first one found is the first in backward order.
"""

from __future__ import annotations

from typing import Any

import torch

from torchlint.runtime.errors import GuardError
from torchlint.runtime.tensors import describe, has_values, tensors_in


def _non_finite(tensor: Any) -> bool:
    # min and max propagate NaN and reach +-Inf: one fused reduction, ten times cheaper on CPU
    # than materialising `isfinite(tensor)` and reducing it
    if not tensor.is_floating_point() or not has_values(tensor):
        return False
    low, high = torch.aminmax(tensor.detach())
    return not bool(torch.isfinite(low) & torch.isfinite(high))


def _counts(tensor: Any) -> str:
    return f"{int(tensor.isnan().sum())} NaN, {int(tensor.isinf().sum())} Inf of {tensor.numel()}"


def check_output(where: str, kind: str, inputs: Any, output: Any) -> None:
    """Raise when an output tensor holds NaN/Inf, saying whether the inputs already did."""
    bad = next((t.detach() for t in tensors_in(output) if _non_finite(t)), None)
    if bad is None:
        return
    fed = [t.detach() for t in tensors_in(inputs) if _non_finite(t)]
    if fed:
        origin = (f"its input already held them ({describe(fed[0])}: {_counts(fed[0])}): the data, or code "
                  "outside any module before this call, made them")
        advice = ("check the batch (`torch.isfinite(x).all()` in the data pipeline) and the functional code "
                  "that runs before this module.")
    else:
        origin = "its inputs were finite: this module made them"
        advice = ("look for log/sqrt/division of values that can reach 0 or below (add an epsilon or clamp: "
                  "`torch.log(x.clamp_min(1e-12))`, `torch.xlogy`), exp/pow overflow (fp16 above 65504: "
                  "compute in fp32 or use autocast), and a learning rate too high for the loss scale.")
    raise GuardError(where, kind, "finite-output", [f"output: {describe(bad)}: {_counts(bad)}", origin], advice)


def check_gradient(where: str, grad: Any) -> None:
    if isinstance(grad, torch.Tensor) and _non_finite(grad):
        raise GuardError(where, "parameter", "finite-gradient", [
            f"gradient: {describe(grad)}: {_counts(grad)}",
            "this is the first parameter reached by backward whose gradient is non-finite",
        ], "the backward of the operation that uses this parameter (or one after it) produced NaN/Inf: "
           "a sqrt or norm at 0, a division by a value near 0, an fp16 overflow (use a GradScaler "
           "with fp16), or a loss that already was non-finite.")
