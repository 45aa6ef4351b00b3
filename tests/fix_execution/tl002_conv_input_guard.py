# fix: TL002
# expect: same
# A correct input passes the added check unchanged; a wrong one fails before and after
# (RuntimeError in the layer before, the check's AssertionError after).
import torch
from torch import nn


class Fusion(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(6, 4, 3)

    def forward(self, levels):
        x = torch.cat(levels, dim=1)
        return self.conv(x)


torch.manual_seed(0)
fusion = Fusion()
print("out:", round(fusion([torch.randn(1, 3, 8, 8), torch.randn(1, 3, 8, 8)]).sum().item(), 5))
try:
    fusion([torch.randn(1, 3, 8, 8)] * 3)
except (RuntimeError, AssertionError):
    print("wrong input fails: True")
