# fix: TL003
# expect: same
# A count of matches started at an int: the safe fix sums the integer tensor on the device
# and reads it once after the loop, `correct = int(correct)`: exactly Python's sum.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(8, 3), torch.randint(0, 2, (8,))) for _ in range(30)]
correct = 0
for batch, labels in data:
    optimizer.zero_grad()
    logits = model(batch)
    nn.functional.cross_entropy(logits, labels).backward()
    optimizer.step()
    correct += (logits.argmax(1) == labels).sum().item()
print("correct:", correct)
