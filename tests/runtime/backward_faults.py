"""Modules with a finite forward whose backward makes NaN/Inf: the faults the backward origin must name.
Imported by the tests only after they have skipped themselves when torch is missing."""

import torch
from torch import nn


class SqrtOfZero(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        h = self.fc(x)
        return torch.sqrt(h - h) + h  # a finite forward (0); SqrtBackward0 divides by 0


class LogOfZero(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        p = torch.softmax(self.fc(x) * 1e4, -1)  # saturated: exact zeros
        return torch.log(p).clamp(min=-100)  # -inf clamped: finite output, 0/0 in LogBackward0
