"""NaN/Inf: the first module whose output turns non-finite, the first parameter whose gradient does.

Forward hooks run when a module returns, innermost first, so the first output found
non-finite belongs to the module that made it (or that first received it: the message
says whether its input was already non-finite). Parameter gradient hooks run as backward
reaches each parameter, so the first one found is the first in backward order.

In outputs, `-inf` is a value, not a fault: it is how masked logits (invalid actions,
attention masks before the softmax) are written. NaN and `+inf` are faults there; in
gradients every non-finite value is.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from torchlint.runtime.errors import GuardError
from torchlint.runtime.tensors import describe, has_values, own_reads, tensors_in

ADVICE_MADE_HERE = (
    "look for log/sqrt/division of values that can reach 0 or below (add an epsilon or clamp: "
    "`torch.log(x.clamp_min(1e-12))`, `torch.xlogy`), exp/pow overflow (fp16 above 65504: "
    "compute in fp32 or use autocast), and a learning rate too high for the loss scale.")


def _readable(tensor: Any) -> bool:
    return has_values(tensor) and tensor.is_floating_point()


def _total(tensor: Any) -> Any:
    # One sum is the cheapest full read that NaN and Inf cannot pass unseen (a third cheaper than
    # aminmax on CPU); half types add up in fp32, where healthy values do not overflow. A total that
    # looks bad is confirmed by `_extremes`, so an overflowing sum of finite values is never reported.
    tensor = tensor.detach()
    return tensor.sum(dtype=torch.float32) if tensor.dtype in (torch.float16, torch.bfloat16) else tensor.sum()


def _extremes(tensor: Any) -> Any:
    # min and max propagate NaN and reach +-Inf: one fused reduction, ten times cheaper on CPU
    # than materialising `isfinite(tensor)` and reducing it
    return torch.aminmax(tensor.detach())


def non_finite(tensor: Any) -> bool:
    """NaN or +-Inf anywhere (the test for gradients)."""
    with own_reads():
        if not _readable(tensor) or math.isfinite(_total(tensor).item()):
            return False
        low, high = _extremes(tensor)
        return not (math.isfinite(low.item()) and math.isfinite(high.item()))


# what an output holds, by `output_state`
CLEAN, NEGATIVE_INFINITY, FAULT = "clean", "-inf", "fault"


def output_state(tensor: Any) -> str:
    """FAULT for NaN or +Inf anywhere, NEGATIVE_INFINITY for -Inf and no fault (a mask, or a log of 0), else CLEAN."""
    with own_reads():
        if not _readable(tensor):
            return CLEAN
        total = _total(tensor).item()
        if total < math.inf:  # NaN and +Inf totals compare False; one -Inf with neither makes -Inf
            return NEGATIVE_INFINITY if total == -math.inf else CLEAN
        low, high = _extremes(tensor)
        low, high = low.item(), high.item()
        if low != low or high == math.inf:
            return FAULT
        return NEGATIVE_INFINITY if low == -math.inf else CLEAN


def faulty_value(tensor: Any) -> bool:
    """NaN or +Inf anywhere (the test for outputs: -Inf is a mask)."""
    return output_state(tensor) == FAULT


def counts(tensor: Any) -> str:
    tensor = tensor.detach()
    return (f"{int(tensor.isnan().sum())} NaN, {int(tensor.isposinf().sum())} +Inf, "
            f"{int(tensor.isneginf().sum())} -Inf of {tensor.numel()}")


def check_output(where: str, kind: str, inputs: Any, output: Any, origin_of: Any = None,
                 checked: Any = None) -> None:
    """Raise when an output tensor holds NaN/+Inf, saying whether the inputs already did.

    `origin_of()`, called only then, names the operation inside the module that made them. A tensor that
    `checked` (a `CheckedTensors`) holds unchanged is not read again; one found finite is added to it."""
    bad = None
    with own_reads():
        for tensor in tensors_in(output):
            if checked is not None and checked.unchanged(tensor):
                continue
            if faulty_value(tensor):
                bad = tensor.detach()
                break
            if checked is not None:
                checked.add(tensor)
    if bad is None:
        return
    fed = [t.detach() for t in tensors_in(inputs) if faulty_value(t)]
    if fed:
        facts = [f"output: {describe(bad)}: {counts(bad)}",
                 f"its input already held them ({describe(fed[0])}: {counts(fed[0])}): the data, or code "
                 "outside any module before this call, made them"]
        advice = ("check the batch (`torch.isfinite(x).all()` in the data pipeline) and the functional code "
                  "that runs before this module.")
    else:
        facts = [f"output: {describe(bad)}: {counts(bad)}", "its inputs were finite: this module made them"]
        if origin_of is not None:
            facts.append(origin_of())
        advice = ADVICE_MADE_HERE
    raise GuardError(where, kind, "finite-output", facts, advice)


def gradient_error(where: str, grad: Any) -> Any:
    """The `finite-gradient` error for a non-finite gradient, or None."""
    if not isinstance(grad, torch.Tensor) or not non_finite(grad):
        return None
    return GuardError(where, "parameter", "finite-gradient", [
        f"gradient: {describe(grad)}: {counts(grad)}",
        "this is the first parameter reached by backward whose gradient is non-finite",
    ], "the backward of the operation that uses this parameter (or one after it) produced NaN/Inf: "
       "a sqrt or norm at 0, a division by a value near 0, an fp16 overflow (use a GradScaler with fp16), "
       "or a loss that already was non-finite.")
