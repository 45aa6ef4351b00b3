"""Metadata checks of layer inputs (convolutions, batch norm): shapes, dtypes, devices.

They read sizes and attributes only, so they never wait for the GPU. Each takes the
guard (for the cuDNN judgement and one-time warnings), where the call is, and the call's
tensors.
"""

from __future__ import annotations

from typing import Any

import torch

from torchlint.runtime.errors import GuardError
from torchlint.runtime.tensors import describe

INT32_MAX = 2**31 - 1
# PyTorch's Normalization.cpp sends batch norm to cuDNN only below these batch sizes
# (spatial mode, input of 3 or more dims); older releases sent larger ones and cuDNN
# answered CUDNN_STATUS_NOT_SUPPORTED (pytorch/pytorch#2917, #19911, #29744).
CUDNN_BATCH_NORM_TRAINING_LIMIT = 880801
CUDNN_BATCH_NORM_EVAL_LIMIT = 65535


def check_conv(guard: Any, where: str, kind: str, input: Any, weight: Any, groups: int,
               transposed: bool, dims: int) -> None:
    """Dims, channels against the weight (and groups), dtype and device, cuDNN's size limit."""
    if not isinstance(input, torch.Tensor) or not isinstance(weight, torch.Tensor):
        return
    if isinstance(weight, torch.nn.parameter.UninitializedParameter):
        return
    expected_channels = weight.shape[0] if transposed else weight.shape[1] * groups
    if input.dim() not in (dims + 1, dims + 2):
        raise GuardError(where, kind, "conv-dims", [
            f"input: {describe(input)}", _layer(weight, expected_channels, groups),
            f"expected {dims + 2} dims (batch, channels, {dims} spatial) or {dims + 1} without the batch, "
            f"got {input.dim()}",
        ], "the tensor reaching this layer has the wrong rank: a missing `unsqueeze(0)` for a single "
           "sample, a flatten left in, or a sequence layout (batch, length, channels) that needs "
           "`.transpose(1, 2)` first.")
    channels = input.shape[-(dims + 1)]
    if channels != expected_channels:
        axis = input.dim() - dims - 1
        raise GuardError(where, kind, "conv-channels", [
            f"input: {describe(input)}", _layer(weight, expected_channels, groups),
            f"expected {expected_channels} channels at dim {axis}, got {channels}",
        ], "the tensor was built with another width than the layer: check what feeds it (a "
           "concatenation of feature maps whose widths changed, a backbone swapped for one "
           "with other widths, RGBA instead of RGB, channels-last data without a permute) or "
           "build the layer with in_channels matching the data.")
    if input.device != weight.device and weight.device.type != "meta":
        # (a weight still on `meta` is offloaded: Accelerate's hooks bring it in inside the forward)
        raise GuardError(where, kind, "conv-device", [
            f"input: {describe(input)}", _layer(weight, expected_channels, groups),
        ], f"move the input to the layer's device (`x.to({str(weight.device)!r})`) or the "
           "model to the data's; a tensor created inside forward needs `device=x.device`.")
    if input.dtype != weight.dtype and not _autocast(input):
        raise GuardError(where, kind, "conv-dtype", [
            f"input: {describe(input)}", _layer(weight, expected_channels, groups),
        ], f"cast the input to the layer's dtype (`x.to({weight.dtype})`), "
           "convert the model with `.to(dtype)`, or run the forward under `torch.autocast`.")
    if guard.uses_cudnn(input):
        per_sample = input[0].numel() if input.dim() == dims + 2 and input.shape[0] else input.numel()
        if per_sample > INT32_MAX:
            raise GuardError(where, kind, "conv-cudnn-size", [
                f"input: {describe(input)}", _layer(weight, expected_channels, groups),
                f"one sample holds {per_sample:,} elements; cuDNN indexes with 32 bits (at most {INT32_MAX:,})",
            ], "cuDNN rejects this call (CUDNN_STATUS_NOT_SUPPORTED); PyTorch can split only the batch "
               "dimension. Tile the input spatially, lower the resolution, or run this layer with "
               "`torch.backends.cudnn.flags(enabled=False)`.")


def check_batch_norm(guard: Any, where: str, module: Any, input: Any) -> None:
    """One value per channel in training; cuDNN's batch-size limits (a warning: torch routes around them)."""
    if not isinstance(input, torch.Tensor) or input.dim() < 2:
        return
    if module.training and input.numel() // max(input.shape[1], 1) == 1 and not _syncs_across_ranks(module):
        raise GuardError(where, type(module).__name__, "batchnorm-one-value", [
            f"input: {describe(input)}",
            "in training, batch norm needs more than one value per channel to estimate a variance",
        ], "this is usually the last batch of an epoch holding one sample: use "
           "`DataLoader(..., drop_last=True)`, a larger batch, or put the layer in eval() for it.")
    if input.dim() >= 3 and guard.uses_cudnn(input):
        limit = CUDNN_BATCH_NORM_TRAINING_LIMIT if module.training else CUDNN_BATCH_NORM_EVAL_LIMIT
        if input.shape[0] > limit or input.numel() >= INT32_MAX:
            guard.warn_once(("batchnorm-cudnn-limit", where), (
                f"torchlint guard: {where} ({type(module).__name__}): input {describe(input)} exceeds cuDNN's "
                f"batch-norm limits (batch <= {limit:,} in {'training' if module.training else 'eval'}, "
                f"< 2^31 elements). This torch runs it with its native kernel (slower); PyTorch releases "
                "that passed it to cuDNN failed with CUDNN_STATUS_NOT_SUPPORTED. Split the batch if speed "
                "matters or if the job must run on older torch."))


def _syncs_across_ranks(module: Any) -> bool:
    # SyncBatchNorm in training over a process group of two or more ranks pools the statistics of
    # every rank: one value here is one of several (torch raises only when the total is one)
    if not isinstance(module, torch.nn.SyncBatchNorm):
        return False
    distributed = torch.distributed
    if not (distributed.is_available() and distributed.is_initialized()):
        return False
    group = module.process_group or distributed.group.WORLD
    return distributed.get_world_size(group) > 1


def _layer(weight: Any, in_channels: int, groups: int) -> str:
    return f"weight: {describe(weight)}, in_channels={in_channels}, groups={groups}"


def _autocast(tensor: Any) -> bool:
    try:
        return torch.is_autocast_enabled(tensor.device.type)
    except TypeError:  # torch < 2.4 takes no device type
        return torch.is_autocast_enabled()
