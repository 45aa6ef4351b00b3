# fix: TL302 --unsafe-fixes
# expect: differs tiny
# `1 - torch.exp(-x)` becomes `-torch.expm1(-x)`: the same values for regular `x`; for a
# tiny `x` the subtraction cancels to 0 and expm1 keeps it (the difference the doc states).
import torch

x = torch.tensor([0.5, 1.0, 3.0])
print("regular:", [round(v, 5) for v in (1 - torch.exp(-x)).tolist()])
print("squared:", [round(v, 5) for v in ((1 - torch.exp(-x)) ** 2).tolist()])
tiny = torch.tensor([1e-9])
print("tiny:", (1 - torch.exp(-tiny)).tolist())
