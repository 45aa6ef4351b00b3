# fix: TL103
# expect: same
import torch
from torch.utils.data._utils.collate import default_collate

print("batch:", default_collate([torch.ones(2), torch.zeros(2)]).tolist())
