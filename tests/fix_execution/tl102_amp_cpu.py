# fix: TL102
# config: [tool.torchlint]
# config: target-torch = "2.4"
# expect: same
import torch

x = torch.randn(3, 3)
with torch.cpu.amp.autocast(dtype=torch.bfloat16):
    y = x @ x
print("dtype:", y.dtype)
scaler = torch.cpu.amp.GradScaler(init_scale=8.0)
print("scale:", scaler.get_scale() if scaler.is_enabled() else "off", type(scaler).__name__)
