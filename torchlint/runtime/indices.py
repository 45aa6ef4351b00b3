"""Value checks of the index consumers behind most device-side asserts and illegal memory accesses.

On a GPU these kernels do not check their indices the way the CPU ones do: an embedding
index equal to `num_embeddings`, a gather index past the dimension, a class target of -1
or a BCE input of 1.0000001 ends in `device-side assert triggered` or an illegal memory
access, reported later by some unrelated call. Each check reads the values (one
synchronisation), so the guard runs them on the scheduled steps only.
"""

from __future__ import annotations

from typing import Any, Optional

import torch

from torchlint.runtime.errors import GuardError
from torchlint.runtime.tensors import describe, has_values


def check_indices(where: str, kind: str, check: str, indices: Any, size: int, what: str, advice: str,
                  ignore: Optional[int] = None) -> None:
    """Every index in [0, size) (or equal to `ignore`)."""
    if not has_values(indices):
        return
    if indices.is_floating_point() or indices.is_complex():
        return  # soft targets (probabilities), or a dtype torch itself rejects with a clear error
    indices = indices.detach()
    bad = (indices < 0) | (indices >= size)
    if ignore is not None:
        bad &= indices != ignore
    if not bool(bad.any()):
        return
    position = tuple(int(i) for i in bad.nonzero()[0]) if indices.dim() else ()
    value = int(indices[position]) if position else int(indices)
    low, high = (int(v) for v in torch.aminmax(indices))
    allowed = f"[0, {size})" + (f" or {ignore} (ignore_index)" if ignore is not None else "")
    raise GuardError(where, kind, check, [
        f"{what}: {describe(indices)}, min {low}, max {high}",
        f"allowed: {allowed}; first bad value {value} at index {list(position)}",
    ], advice)


def check_embedding(where: str, kind: str, indices: Any, num_embeddings: int) -> None:
    check_indices(where, kind, "embedding-index", indices, num_embeddings, "indices",
                  f"every index must be below num_embeddings={num_embeddings}: the vocabulary (or id "
                  "space) the data uses is larger than the table; build the embedding with the "
                  "tokenizer's full size (len(tokenizer), special tokens included) or remap the ids. "
                  "On a GPU this is a device-side assert or an illegal memory access.")


def check_dim_indices(where: str, kind: str, source: Any, dim: Any, index: Any) -> None:
    """gather / index_select / scatter / index_add: indices within `source.size(dim)`."""
    if not isinstance(source, torch.Tensor) or not isinstance(dim, int) or source.dim() == 0:
        return
    size = source.shape[dim]
    check_indices(where, kind, "index-range", index, size, "index",
                  f"indices along dim {dim} must lie in [0, {size}) for {describe(source)}; "
                  "an off-by-one, a -1 padding id, or indices computed for another tensor. On a GPU "
                  "this is a device-side assert or an illegal memory access reported later.")


def check_class_targets(where: str, kind: str, input: Any, target: Any, ignore_index: int) -> None:
    """cross_entropy / nll_loss: class-index targets in [0, C) or ignore_index."""
    if not isinstance(input, torch.Tensor) or input.dim() == 0:
        return
    classes = input.shape[1] if input.dim() >= 2 else input.shape[0]
    check_indices(where, kind, "class-target", target, classes, "target",
                  f"the logits have {classes} classes, so targets must be class ids in [0, {classes}) "
                  f"or ignore_index ({ignore_index}): a 1-based label, a -1 meaning 'no label' (pass "
                  "ignore_index=-1), or a label set larger than the head. On a GPU this is "
                  "`device-side assert triggered` (Loss.cu).", ignore=ignore_index)


def check_probabilities(where: str, kind: str, input: Any) -> None:
    """binary_cross_entropy: every input in [0, 1] (NaN included as bad)."""
    if not has_values(input) or not input.is_floating_point():
        return
    input = input.detach()
    bad = ~((input >= 0) & (input <= 1))
    if not bool(bad.any()):
        return
    low, high = (float(v) for v in torch.aminmax(input))
    nans = int(input.isnan().sum())
    raise GuardError(where, kind, "bce-input-range", [
        f"input: {describe(input)}, min {low:g}, max {high:g}, NaN count {nans}",
        "binary_cross_entropy takes probabilities in [0, 1]",
    ], "the input looks like logits (or a sigmoid pushed past 1 by a low-precision op): use "
       "`F.binary_cross_entropy_with_logits` / `nn.BCEWithLogitsLoss` on the raw scores, which is "
       "also numerically safer. On a GPU this is `device-side assert triggered` (Loss.cu).")


def check_ctc_lengths(where: str, kind: str, targets: Any, input_lengths: Any, target_lengths: Any) -> None:
    """ctc_loss: each sample's frames must fit its target (its length plus one blank between repeated labels).

    Where they cannot, no alignment exists: the loss is inf and its gradient NaN (unless zero_infinity=True)."""
    if not (has_values(targets) and has_values(target_lengths)):
        return
    frames = torch.as_tensor(input_lengths).detach().reshape(-1).tolist()
    lengths = torch.as_tensor(target_lengths).detach().reshape(-1).tolist()
    targets = targets.detach()
    offset = 0
    for sample, (available, length) in enumerate(zip(frames, lengths)):
        labels = targets[sample, :length] if targets.dim() == 2 else targets[offset:offset + length]
        offset += length
        needed = length + (int((labels[1:] == labels[:-1]).sum()) if length > 1 else 0)
        if available < needed:
            raise GuardError(where, kind, "ctc-lengths", [
                f"sample {sample}: {available} input frames, target of {length} labels needing {needed} frames "
                "(one blank between repeated labels)",
                f"input_lengths: {frames}", f"target_lengths: {lengths}",
            ], "no alignment exists, so the CTC loss is inf and its gradient NaN: downsample the input less (a "
               "stride or pooling too large for the longest transcript), drop or split samples whose transcript "
               "is too long, or pass the right input_lengths (after the encoder's downsampling); "
               "`zero_infinity=True` hides such samples instead.")
