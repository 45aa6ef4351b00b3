# fix: TL202 --unsafe-fixes
# expect: differs frozen-input-grad
# The doc's difference: the reentrant variant gives the checkpointed part no gradient when
# no input requires grad; the non-reentrant one does. Values are the same.
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
layer = nn.Linear(4, 4)
x = torch.randn(2, 4)
out = checkpoint(layer, x)
print("value:", round(out.sum().item(), 5))
if out.requires_grad:
    out.sum().backward()
print("frozen-input-grad:", layer.weight.grad is not None)

x = torch.randn(2, 4, requires_grad=True)
out = checkpoint(layer, x, preserve_rng_state=False)
out.sum().backward()
print("input grad:", [round(v, 5) for v in x.grad.sum(0).tolist()])
