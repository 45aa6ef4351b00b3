# fix: TL302 --unsafe-fixes
# expect: differs tiny
# The doc's difference: for tiny x, `exp(x) - 1` cancels to 0 and `expm1` does not.
import torch

x = torch.tensor([0.5, 2.0])
print("regular:", [round(v, 5) for v in (torch.exp(x) - 1).tolist()])
tiny = torch.tensor([1e-10])
print("tiny:", (torch.exp(tiny) - 1).item() != 0.0)
