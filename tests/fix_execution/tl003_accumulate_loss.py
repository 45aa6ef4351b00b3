# fix: TL003 --unsafe-fixes
# expect: differs mean
# A float total: with --unsafe-fixes the loss is summed on the device and read once after
# the loop. The tensor adds in float32 where Python added the `.item()` numbers in float64,
# so the mean differs in its last digits (the difference the doc states); a count summed
# into the float total stays exact.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [torch.randn(4, 3) for _ in range(40)]
running = 0.0
positive = 0.0
for batch in data:
    optimizer.zero_grad()
    loss = model(batch).pow(2).mean()
    loss.backward()
    optimizer.step()
    running += loss.item() * batch.size(0) / 3
    positive += (model(batch) > 0).sum().item()
print("mean:", repr(running / len(data)))
print("positive:", positive)
