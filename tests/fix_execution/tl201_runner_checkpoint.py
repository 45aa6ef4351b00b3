# fix: TL201 --unsafe-fixes
# expect: no fix
# A training checkpoint read back by its keys (`optimizer` with `epoch`): such files keep
# objects beside the tensors, here a NumPy RNG state, which `weights_only=True` refuses.
# Torch below 2.6 is emulated on 2.13 as in tl201_whole_model_saved.py.
import os

os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"

import numpy as np
import torch
from torch import nn

model = nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
torch.save({"epoch": 3, "optimizer": optimizer.state_dict(), "rng": np.random.get_state()}, "last.pt")


def resume(path):
    ckpt = torch.load(path)
    optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt["epoch"]


print("epoch:", resume("last.pt"))
