# fix: TL202 --unsafe-fixes
# expect: same
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint_sequential

torch.manual_seed(0)
layers = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
x = torch.randn(2, 3, requires_grad=True)
out = checkpoint_sequential(layers, 2, x)
out.sum().backward()
print("out:", [round(v, 5) for v in out.flatten().tolist()])
print("grad:", [round(v, 5) for v in x.grad.flatten().tolist()])
