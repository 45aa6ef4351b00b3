# fix: TL201 --unsafe-fixes
# expect: same
# A state_dict of tensors loads alike with `weights_only=True` (the doc's difference,
# objects refused, needs a file holding objects).
import torch
from torch import nn

torch.manual_seed(0)
torch.save(nn.Linear(2, 2).state_dict(), "weights.pt")
state = torch.load("weights.pt")
print("keys:", sorted(state))
print("bias:", [round(v, 6) for v in state["bias"].tolist()])
