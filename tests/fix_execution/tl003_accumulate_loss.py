# fix: TL003 --unsafe-fixes
# expect: same
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [torch.randn(4, 3) for _ in range(3)]
running = 0.0
for batch in data:
    optimizer.zero_grad()
    loss = model(batch).pow(2).mean()
    loss.backward()
    optimizer.step()
    running += loss.item()
print("mean loss:", round(running / len(data), 5))
