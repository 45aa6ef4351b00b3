# fix: TL201 --unsafe-fixes
# expect: no fix
# The same program saves a whole model (`torch.save(model, ...)`) and loads it. Torch
# below 2.6 loads it without `weights_only` (emulated here on 2.13, whose default is
# True, by TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD, which only acts where `weights_only` is not
# passed); with `weights_only=True` the load fails with UnpicklingError.
import os

os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"

import torch
from torch import nn


torch.manual_seed(0)
model = nn.Linear(2, 1)
torch.save(model, "whole.pt")
loaded = torch.load("whole.pt")
print("type:", type(loaded).__name__)
print("out:", round(loaded(torch.ones(1, 2)).item(), 6))
