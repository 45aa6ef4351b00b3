# fix: TL101
# expect: repairs AttributeError
import torch

print("limit:", 3.0 < torch._six.inf)
