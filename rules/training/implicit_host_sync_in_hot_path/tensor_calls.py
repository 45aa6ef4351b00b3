"""The calls TL005 knows (torch predicates and reductions, casts, data-dependent calls, explicit syncs)
and its option names.

Cost: data, and O(1) lookups.
"""

from __future__ import annotations

from typing import Optional

from torchlint.rules.training.host_sync_in_hot_path.syncs import SYNC_METHODS

# torch functions whose result is a tensor (or, for equal/allclose, a bool computed on the
# device) that Python can only test by reading it back
TENSOR_FUNCTIONS = frozenset(
    {
        "isfinite", "isnan", "isinf", "isneginf", "isposinf", "isclose", "any", "all", "equal", "allclose",
        "eq", "ne", "gt", "ge", "lt", "le", "logical_and", "logical_or", "logical_not", "logical_xor",
        "sum", "mean", "amax", "amin", "count_nonzero", "norm", "std", "var", "prod",
    }
)
# tensor methods that, called without arguments, give a 0-dim tensor (a reduction or test)
TENSOR_METHODS = frozenset(
    {
        "any", "all", "isfinite", "isnan", "isinf", "sum", "mean", "max", "min", "amax", "amin", "norm",
        "count_nonzero", "std", "var", "prod",
    }
)
# torch functions and tensor methods whose result is a tensor where their first operand is
# (`torch.abs(x.max())` is as much a device tensor as `x.max()`)
ELEMENTWISE = frozenset(
    {"abs", "neg", "sqrt", "rsqrt", "exp", "log", "log2", "log10", "square", "sigmoid", "tanh", "relu"}
)
# tensor methods whose result is on their receiver's device whatever their arguments (`x.sum().mul_(scale)`)
SAME_DEVICE_METHODS = frozenset(
    {"add", "sub", "mul", "div", "add_", "sub_", "mul_", "div_", "float", "double", "half", "clamp", "clamp_min"}
)
# what returns the gradients' total norm as a tensor (torch's, accelerate's, a trainer's wrapper of them)
NORM_CLIPPERS = frozenset({"clip_grad_norm_", "clip_grad_norm"})
# Python's tests of a number: they convert a tensor argument with `float()`
MATH_TESTS = frozenset({"math.isnan", "math.isinf", "math.isfinite"})
CASTS = frozenset({"bool", "float", "int"})
DATA_DEPENDENT = frozenset({"nonzero", "masked_select"})
EXPLICIT_SYNCS = frozenset(SYNC_METHODS)  # TL003's
LENGTHS_ON_CPU = "torch.nn.utils.rnn.pack_padded_sequence"  # requires its `lengths` on the CPU
SIZES = "check-sizes"
LOOP_EXITS = "check-loop-exits"
CPU_COPIES = "check-cpu-copies"


def is_torch(qualified: Optional[str], names: frozenset) -> bool:
    return bool(qualified) and qualified.startswith("torch.") and qualified.count(".") == 1 and qualified[6:] in names
