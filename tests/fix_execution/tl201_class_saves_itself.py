# fix: TL201 --unsafe-fixes
# expect: no fix
# A class that saves its own instance (`torch.save(self, fname)`, as pytorch-forecasting's
# TimeSeriesDataSet and torchrl's GPT2RewardModel do) and loads it back in a classmethod:
# with `weights_only=True` the load fails with UnpicklingError. Torch below 2.6 is
# emulated on 2.13 by TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD (it acts only where `weights_only`
# is not passed).
import os

os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"

import torch


class Normalizer:
    def __init__(self, center):
        self.center = torch.tensor(center)

    def save(self, fname):
        torch.save(self, fname)

    @classmethod
    def load(cls, fname):
        obj = torch.load(fname)
        assert isinstance(obj, cls), f"Loaded file is not of class {cls}"
        return obj


Normalizer([1.0, 2.0]).save("normalizer.pt")
print("center:", Normalizer.load("normalizer.pt").center.tolist())
