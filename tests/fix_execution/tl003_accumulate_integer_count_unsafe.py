# fix: TL003 --unsafe-fixes
# expect: differs hits
# An int start and an integer tensor (`.gt(1).int().sum()`): with --unsafe-fixes the sum
# stays on the device and `hits = float(hits)` after the loop; the only difference is
# that `hits` prints as a float (the type the doc warns of).
import torch

weights = torch.zeros(3, requires_grad=True)
optimizer = torch.optim.SGD([weights], lr=0.5)
hits = 0
for step in range(4):
    optimizer.zero_grad()
    scores = torch.arange(3.0) * weights + step
    scores.sum().backward()
    optimizer.step()
    hits += scores.detach().gt(1).int().sum().item()
print("hits:", hits)
print("weights:", weights.tolist())
