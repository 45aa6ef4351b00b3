# fix: TL303 --unsafe-fixes
# expect: differs large
# The doc's difference: where `log(sum(exp(x)))` overflows, `logsumexp` gives the true value.
import torch

x = torch.tensor([[0.5, 1.0, 2.0]])
print("regular:", [round(v, 5) for v in torch.log(torch.sum(torch.exp(x), dim=1)).tolist()])
big = torch.tensor([[1000.0, 1000.0]])
print("large:", torch.log(torch.sum(torch.exp(big), dim=1)).tolist())
