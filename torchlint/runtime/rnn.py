"""cuDNN RNNs differentiated in ways cuDNN cannot: twice, or in eval() mode.

The failure happens in backward, inside cuDNN (`derivative for _cudnn_rnn_backward is not
implemented`, `CUDNN_STATUS_NOT_SUPPORTED` from cudnnRNNBackwardData for a projected LSTM,
`cudnn RNN backward can only be called in training mode`). The guard hooks the RNN's
outputs: the hook runs when their gradient arrives, just before the RNN's backward node,
and autograd enables grad mode there exactly when the backward is recorded for a second
differentiation (`create_graph=True`).
"""

from __future__ import annotations

from typing import Any

import torch

from torchlint.runtime.errors import GuardError
from torchlint.runtime.tensors import describe, tensors_in

CUDNN_FLAGS = "`with torch.backends.cudnn.flags(enabled=False): out, _ = rnn(x)`"


def watch_rnn_outputs(where: str, module: Any, input: Any, output: Any) -> None:
    """Register the backward-time check on every output of the RNN that requires grad."""
    projected = getattr(module, "proj_size", 0) > 0
    kind = type(module).__name__ + (f"(proj_size={module.proj_size})" if projected else "")

    def on_gradient(grad: Any) -> None:
        if not module.training:
            raise GuardError(where, kind, "rnn-cudnn-eval-backward", [
                f"input: {describe(input)}", "the RNN ran forward in eval() mode and is now differentiated",
            ], "cuDNN RNN backward works only in training mode (`cudnn RNN backward can only be called in "
               "training mode`): call `model.train()` before a forward that needs gradients, or run this RNN "
               f"without cuDNN: {CUDNN_FLAGS}.")
        if torch.is_grad_enabled():
            raise GuardError(where, kind, "rnn-cudnn-double-backward", [
                f"input: {describe(input)}",
                "this backward is recorded for a second differentiation (create_graph=True: a gradient "
                "penalty, MAML, a physics-informed loss)",
            ], "cuDNN RNNs have no double backward"
               + (" (a projected LSTM fails with CUDNN_STATUS_NOT_SUPPORTED in cudnnRNNBackwardData)"
                  if projected else " (`derivative for _cudnn_rnn_backward is not implemented`)")
               + f": run this RNN's forward without cuDNN: {CUDNN_FLAGS}. Rule TL004 "
                 "(cudnn-rnn-double-backward) finds the pattern statically.")

    for tensor in tensors_in(output):
        if tensor.requires_grad:
            tensor.register_hook(on_gradient)

