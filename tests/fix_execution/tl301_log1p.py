# fix: TL301 --unsafe-fixes
# expect: differs tiny
# The doc's difference: for tiny x, `log(1 + x)` rounds to 0 and `log1p` does not.
import torch

x = torch.tensor([0.5, 2.0])
print("regular:", [round(v, 5) for v in torch.log(1 + x).tolist()])
tiny = torch.tensor([1e-10])
print("tiny:", torch.log(1 + tiny).item() != 0.0)
