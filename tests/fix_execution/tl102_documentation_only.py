# fix: TL102 --unsafe-fixes
# config: [tool.torchlint.deprecated-torch-api]
# config: report-documentation-only = true
# expect: differs upsample-class variable-is-tensor
# The doc's differences: `nn.Upsample` is another class (same values); `Variable(t)` is `t`
import torch
import torch.nn as nn
from torch.autograd import Variable

t = torch.arange(4.0).reshape(1, 1, 2, 2)
up = nn.UpsamplingNearest2d(scale_factor=2)
print("upsample-class:", type(up).__name__)
print("upsample:", up(t).flatten().tolist())
v = Variable(t)
print("variable-is-tensor:", v is t)
print("variable:", v.sum().item())
print("ger:", torch.ger(torch.arange(2.0), torch.arange(3.0)).tolist())
