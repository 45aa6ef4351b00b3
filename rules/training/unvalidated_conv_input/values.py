"""What TL002 shares between its parts: the convolutions and concatenations it knows, its
option names, and the values, findings and convolutions it tracks through one `forward`.

Cost: data and small records, no analysis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from torchlint.rule_api.rule import Report

# layer or function -> its spatial dimensions
CONV_LAYERS = {
    f"torch.nn.{kind}{n}d": n for kind in ("Conv", "ConvTranspose") for n in (1, 2, 3)
}
CONV_FUNCTIONS = {
    f"{prefix}.{kind}{n}d": n
    for prefix in ("torch.nn.functional", "torch")
    for kind in ("conv", "conv_transpose")
    for n in (1, 2, 3)
}
CONCATENATIONS = frozenset({"torch.cat", "torch.stack", "torch.concat", "torch.concatenate"})
CONCAT_LAST_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in CONCATENATIONS)


PARAMETERS = "check-parameters"
CONCATS = "check-concatenations"
INTERNAL_CONCATS = "check-internal-concatenations"
FIXED_CONCATS = "check-fixed-concatenations"
MODEL_INPUTS = "check-model-inputs"
COUNT = "*count"  # provenance: the caller decides how many parts a concatenation has
INSIDE: frozenset = frozenset()


@dataclass
class TrackedValue:
    origin: str  # PARAMETERS | CONCATS
    checked: bool = False
    reported: bool = False
    axis: Optional[int] = None  # CONCATS: the `dim` joined along, None if not a literal
    # CONCATS: where a part, or the number of parts, comes from outside the module: the
    # parameters of forward it derives from, and COUNT if the caller decides how many
    outside: frozenset = frozenset({COUNT})


@dataclass
class Finding:
    origin: str  # PARAMETERS | CONCATS
    report: Report
    functional: bool  # F.conv*: no in_channels to name
    provenance: frozenset = frozenset()  # CONCATS: see TrackedValue.outside


@dataclass
class ConvCall:
    """A convolution call found in forward."""

    call: object
    label: str  # how the message names the layer
    dims: int
    access: Optional[str]  # `self.fusion[0]`: where in_channels is read, None for F.conv*
    optional: bool = False  # the attribute may hold None or nn.Identity() instead, here
