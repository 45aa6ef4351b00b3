"""Small real models for the guard's benchmark and its no-false-alarm tests (CPU, no torchvision).

Each `make_*` returns `(model, batch)`: a model and a function `batch(step)` giving
`(inputs, loss_fn)` for one training step.
"""

from __future__ import annotations

import torch
from torch import nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + identity)


class ResNet18(nn.Module):
    """torchvision's resnet18 layout (BasicBlock x [2, 2, 2, 2]) at a chosen width."""

    def __init__(self, num_classes: int = 10, width: int = 64) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        layers, inplanes = [], width
        for index, planes in enumerate((width, width * 2, width * 4, width * 8)):
            stride = 1 if index == 0 else 2
            layers.append(nn.Sequential(BasicBlock(inplanes, planes, stride), BasicBlock(planes, planes)))
            inplanes = planes
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.fc = nn.Linear(inplanes, num_classes)

    def forward(self, x):
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class LSTMTagger(nn.Module):
    """Embedding -> bidirectional LSTM -> per-token tag scores."""

    def __init__(self, vocab: int = 5000, tags: int = 17, dim: int = 128, hidden: int = 256) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.lstm = nn.LSTM(dim, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, tags)

    def forward(self, tokens):
        return self.head(self.lstm(self.embed(tokens))[0])


class EncoderClassifier(nn.Module):
    """nn.TransformerEncoder over token embeddings, mean-pooled into classes."""

    def __init__(self, vocab: int = 1000, dim: int = 64, classes: int = 5) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, nhead=4, dim_feedforward=128, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens, padding_mask=None):
        return self.head(self.encoder(self.embed(tokens), src_key_padding_mask=padding_mask).mean(1))


def make_resnet(batch: int = 8, size: int = 64, width: int = 64):
    model = ResNet18(width=width)

    def batch_for(step: int):
        generator = torch.Generator().manual_seed(step)
        images = torch.randn(batch, 3, size, size, generator=generator)
        labels = torch.randint(0, 10, (batch,), generator=generator)
        return (images,), lambda out: F.cross_entropy(out, labels)
    return model, batch_for


def make_tagger(batch: int = 16, length: int = 40):
    model = LSTMTagger()
    criterion = nn.CrossEntropyLoss(ignore_index=-100)

    def batch_for(step: int):
        generator = torch.Generator().manual_seed(step)
        tokens = torch.randint(1, 5000, (batch, length), generator=generator)
        tags = torch.randint(0, 17, (batch, length), generator=generator)
        tags[:, -3:] = -100  # padding positions are ignored, as a real tagger's are
        return (tokens,), lambda out: criterion(out.reshape(-1, 17), tags.reshape(-1))
    return model, batch_for


def make_encoder(batch: int = 8, length: int = 32):
    model = EncoderClassifier()

    def batch_for(step: int):
        generator = torch.Generator().manual_seed(step)
        tokens = torch.randint(0, 1000, (batch, length), generator=generator)
        mask = torch.zeros(batch, length, dtype=torch.bool)
        mask[:, -4:] = True
        labels = torch.randint(0, 5, (batch,), generator=generator)
        return (tokens, mask), lambda out: F.cross_entropy(out, labels)
    return model, batch_for


def train_steps(model: nn.Module, batch_for, steps: int, start: int = 0) -> float:
    """Forward + backward + SGD step on `steps` batches; returns the last loss."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss = torch.tensor(0.0)
    for step in range(start, start + steps):
        inputs, loss_fn = batch_for(step)
        optimizer.zero_grad()
        loss = loss_fn(model(*inputs))
        loss.backward()
        optimizer.step()
    return loss.item()
