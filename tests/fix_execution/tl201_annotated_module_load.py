# fix: TL201 --unsafe-fixes
# expect: no fix
# A whole module saved by one function and loaded by another into an annotated name
# (`loaded: nn.Module = torch.load(path)`, as tianshou 1.2's persistence does), then used as
# a module (`loaded.state_dict()`): with `weights_only=True` the load fails with
# UnpicklingError. Torch below 2.6 is emulated as in tl201_whole_model_saved.py.
import os

os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"

import torch
from torch import nn


def persist(policy, path):
    torch.save(policy, path)


def restore(path):
    loaded: nn.Module = torch.load(path)
    return loaded.state_dict()


torch.manual_seed(0)
persist(nn.Linear(2, 1), "policy.pt")
print("keys:", sorted(restore("policy.pt")))
