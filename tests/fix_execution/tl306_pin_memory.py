# fix: TL306 --unsafe-fixes
# expect: same
# cpu: pinning needs a GPU; on CPU torch ignores `pin_memory=True` (with a warning), so only
# the values, the same, can be compared here.
import torch
from torch.utils.data import DataLoader, TensorDataset

loader = DataLoader(TensorDataset(torch.arange(6.0)), batch_size=3, pin_memory=False)
device = torch.device("cpu")
for (batch,) in loader:
    print("batch:", batch.to(device, non_blocking=True).tolist())
