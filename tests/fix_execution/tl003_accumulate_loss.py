# fix: TL003
# expect: same
# The sum is printed in full: Python adds the `.item()` numbers in float64, and the fixed
# loop must add the tensors in float64 too (a float32 sum drifts in the last digits).
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [torch.randn(4, 3) for _ in range(40)]
running = 0.0
correct = 0.0
for batch in data:
    optimizer.zero_grad()
    loss = model(batch).pow(2).mean()
    loss.backward()
    optimizer.step()
    running += loss.item() * batch.size(0) / 3
    correct += (model(batch) > 0).sum().item()
print("mean loss:", repr(running / len(data)), "positive:", correct)
