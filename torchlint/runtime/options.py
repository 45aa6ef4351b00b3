"""What the guard checks and when: the families, the value-check schedule, the cuDNN judgement."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, FrozenSet, Iterable, Mapping, Optional

# Checks of shapes, dtypes and devices read tensor metadata only and never synchronise
# with the GPU; they run on every call.
META_FAMILIES = ("conv", "rnn", "batchnorm")
# Checks of values (index ranges, probabilities, NaN/Inf) read the data: on a GPU each one
# waits for the kernels before it, so they run on the scheduled steps only.
VALUE_FAMILIES = ("index", "finite")
FAMILIES = META_FAMILIES + VALUE_FAMILIES
# The check ids each family raises, for `skip=` (and the docs' table).
CHECKS = {
    "conv": ("conv-dims", "conv-channels", "conv-device", "conv-dtype", "conv-cudnn-size"),
    "rnn": ("rnn-cudnn-double-backward", "rnn-cudnn-eval-backward"),
    "batchnorm": ("batchnorm-one-value", "batchnorm-cudnn-limit"),
    "index": ("embedding-index", "index-range", "class-target", "bce-input-range", "ctc-lengths"),
    "finite": ("finite-output", "finite-gradient", "finite-op"),
}


@dataclass(frozen=True)
class GuardOptions:
    """How a guard behaves; every field has a default that suits a training run.

    - `checks`: the families to run (default all): `conv` (dims, channels against
      `in_channels`/`groups`, dtype, device, cuDNN's 32-bit size limit), `rnn` (a cuDNN RNN
      differentiated twice or in `eval()`), `batchnorm` (one value per channel in training;
      cuDNN's batch-size limits), `index` (embedding indices, `gather`/`index_select`/
      `scatter` indices, `cross_entropy`/`nll_loss` targets, `binary_cross_entropy` inputs),
      `finite` (the first module whose output, and the first parameter whose gradient,
      holds NaN/Inf).
    - `first`, `every`: value checks (`index`, `finite`) run on the first `first` steps and
      then on every `every`-th step (0: never after the first ones). A step is one call of
      the guarded model (outermost module call that owns parameters).
    - `cudnn`: judge cuDNN-only limits when the input is on a CUDA device and cuDNN is
      enabled (`None`, the default), always (`True`: a CPU dry run that finds what the GPU
      run would hit), or never (`False`).
    - `skip`: opt-outs, `{"model.pos_embed": ["embedding-index"], "model.policy": ["finite"]}`:
      a module path (its subtree included) or fnmatch pattern, mapped to check ids, families
      or `"*"` (see `torchlint.runtime.skips`).
    """

    checks: FrozenSet[str] = field(default_factory=lambda: frozenset(FAMILIES))
    first: int = 10
    every: int = 100
    cudnn: Optional[bool] = None
    skip: Optional[Mapping[str, Any]] = None

    def __post_init__(self) -> None:
        unknown = set(self.checks) - set(FAMILIES)
        if unknown:
            raise ValueError(f"unknown guard check families {sorted(unknown)}; known: {', '.join(FAMILIES)}")
        if self.first < 0 or self.every < 0:
            raise ValueError("`first` and `every` must be >= 0")

    @classmethod
    def make(cls, checks: Optional[Iterable[str]] = None, **values) -> "GuardOptions":
        chosen = frozenset(FAMILIES if checks is None else ([checks] if isinstance(checks, str) else checks))
        return cls(checks=chosen, **values)

    def value_step(self, step: int) -> bool:
        """Whether the value checks run on this (1-based) step."""
        return step <= self.first or (self.every > 0 and step % self.every == 0)
