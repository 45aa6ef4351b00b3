# fix: TL003 --unsafe-fixes
# expect: no fix
# The value feeds `np.full(...)`, `torch.full(...)` and a JSON record through arithmetic
# with numbers only: as a tensor it cannot go to `json.dumps` (TypeError), so no fix.
import json

import numpy as np
import torch
from torch import nn


class Completion(nn.Module):
    def forward(self, tokens, mask):
        completion_start = int(torch.nonzero(mask)[0].item())
        labels = np.full((tokens.shape[0] - completion_start,), -100)
        prompt = torch.full((completion_start + 0,), -1)
        record = json.dumps({"completion": tokens.shape[0] - completion_start})
        return tokens[len(prompt):], labels, record


tokens = torch.arange(8)
mask = torch.tensor([0, 0, 0, 1, 1, 1, 1, 1], dtype=torch.bool)
kept, labels, record = Completion()(tokens, mask)
print("kept:", kept.tolist())
print("labels:", labels.tolist())
print("record:", record)
