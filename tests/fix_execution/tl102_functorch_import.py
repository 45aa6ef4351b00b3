# fix: TL102
# expect: same
import torch
from functorch import vmap, grad

print("vmap:", vmap(torch.sin)(torch.arange(3.0)).tolist())
print("grad:", round(grad(lambda t: (t ** 3).sum())(torch.tensor(2.0)).item(), 6))
