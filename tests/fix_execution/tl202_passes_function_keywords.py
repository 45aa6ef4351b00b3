# fix: TL202 --unsafe-fixes
# expect: no fix
import torch
from torch.utils.checkpoint import checkpoint


def custom_forward(*inputs):
    return inputs[0] * 2


x = torch.ones(3, requires_grad=True)
mode = "train"
print("before the call: ok")
y = checkpoint(custom_forward, x, mode=mode)
print("sum:", y.sum().item())
