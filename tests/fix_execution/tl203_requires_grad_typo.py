# fix: TL203 --unsafe-fixes
# expect: differs frozen
# The doc's difference: the parameters are really frozen.
import torch
from torch import nn

layer = nn.Linear(2, 2)
for p in layer.parameters():
    p.require_grad = False
print("frozen:", all(not p.requires_grad for p in layer.parameters()))
