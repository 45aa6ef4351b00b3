import torch
from torch import nn


class ConvBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, padding=1)
        self.norm = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.norm(self.conv(x)))


class Encoder(nn.Module):
    def __init__(self, hidden: int = 32) -> None:
        super().__init__()
        self.blocks = nn.Sequential(ConvBlock(3), ConvBlock(3))
        self.lstm = nn.LSTM(3, hidden, batch_first=True, proj_size=8)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        features = self.blocks(images).mean(dim=2).transpose(1, 2)
        output, _ = self.lstm(features)
        return output
