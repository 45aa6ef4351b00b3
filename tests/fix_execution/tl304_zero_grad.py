# fix: TL304 --unsafe-fixes
# expect: differs unused-grad
# The doc's difference: after `zero_grad()` a parameter with no gradient this step has
# `.grad is None`, not zeros; the trained values are the same here (plain SGD).
import torch
from torch import nn

torch.manual_seed(0)
used, unused = nn.Linear(2, 1), nn.Linear(2, 1)
optimizer = torch.optim.SGD([*used.parameters(), *unused.parameters()], lr=0.1)
unused(torch.ones(1, 2)).sum().backward()
for step in range(3):
    optimizer.zero_grad(set_to_none=False)
    used(torch.ones(1, 2)).sum().backward()
    optimizer.step()
print("weights:", [round(v, 6) for v in used.weight.flatten().tolist()])
print("unused-grad:", unused.weight.grad is None)
