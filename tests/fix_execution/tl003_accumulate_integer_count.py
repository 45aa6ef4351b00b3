# fix: TL003
# expect: no fix
# `kept` starts at the integer 0 and adds `.item()` of an integer tensor (a boolean mask's
# sum): the total is an int. Read back with `float(kept)` after the loop it would print
# `3.0` for `3` (torchrl's distillation consistency check puts it in an error message).
# The code does not say the tensor's dtype, so that fix is unsafe: `--fix` leaves it.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 3), torch.rand(4) > 0.5) for _ in range(3)]
kept = 0
for batch, valid in data:
    optimizer.zero_grad()
    out = model(batch).squeeze(1)
    out.pow(2).mean().backward()
    optimizer.step()
    positive = valid & (out.detach() > 0)
    kept += positive.sum().item()
print(f"kept: {kept} of {4 * len(data)}")
