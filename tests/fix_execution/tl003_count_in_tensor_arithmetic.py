# fix: TL003 --unsafe-fixes
# expect: same
# The count becomes a 0-dim tensor; the loss, arithmetic with a tensor, was a tensor
# already and keeps its value (the dtype change the doc warns of needs integer operands).
import torch
from torch import nn


class L1(nn.Module):
    def forward(self, pred, gt, mask):
        count = int(mask.sum().item())
        return (torch.abs(pred - gt) * mask).sum() / (count + 1e-6)


torch.manual_seed(0)
pred, gt = torch.randn(4, 5), torch.randn(4, 5)
mask = (torch.rand(4, 5) > 0.5).float()
print("loss:", round(L1()(pred, gt, mask).item(), 5))
