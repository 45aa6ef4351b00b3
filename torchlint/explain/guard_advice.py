"""Which error families the run-time guard catches before the failing call, keyed by signature id.

Kept beside the knowledge base rather than in it: one line per family, read by the
renderers as one more "Prevented by" entry.
"""

from __future__ import annotations

from typing import Optional

GUARD = "torchlint.runtime.guard(model)"
GUARD_CATCHES = {
    "device-side-assert": "checks embedding ids, gather/index_select/scatter indices, cross_entropy/nll_loss "
                          "targets and BCE inputs before the kernel, naming the module",
    "cuda-illegal-memory-access": "checks the indices of embeddings, gather/index_select/scatter and loss "
                                  "targets before the kernel that would read out of bounds, naming the module",
    "cudnn-execution-failed": "checks each convolution's input (dims, channels against in_channels/groups, "
                              "dtype, device) and the index consumers that fault earlier, naming the module",
    "cudnn-not-supported": "checks convolution inputs (including cuDNN's 32-bit size limit) and cuDNN RNNs "
                           "differentiated twice, naming the module",
    "cudnn-rnn-double-backward": "names the cuDNN RNN whose backward is recorded for a second differentiation, "
                                 "before cuDNN fails",
    "cudnn-rnn-projected-double-backward": "names the projected LSTM whose backward is recorded for a second "
                                           "differentiation, before cuDNN fails",
}


def guard_line(signature_id: str) -> Optional[str]:
    """`torchlint.runtime.guard(model): checks ...`, or None for a family the guard does not catch."""
    catches = GUARD_CATCHES.get(signature_id)
    return f"{GUARD}: {catches} (docs/guard.md)" if catches else None
