"""The guard over the example models of real packages: no false alarm, and what a planted fault says.

    pip download --no-deps efficientnet-pytorch==0.7.1 pytorch-crf==0.7.2 vit-pytorch==1.26.11 einops -d DL
    pip install --no-deps DL/*            # pure-Python packages: the installed torch stays
    python bench/guard_packages.py

Each model trains a few steps (forward + backward + SGD) with every check family on
every step, then runs in eval; any GuardError or guard warning is a false alarm. Then
one planted fault per model shows the error the guard raises. vit-pytorch's package
__init__ needs torchvision, so its `vit.py` is loaded from the installed file directly.
"""

from __future__ import annotations

import importlib.util
import sys
import warnings

import torch
from torch import nn
import torch.nn.functional as F

from torchlint.runtime import GuardError, guard


def efficientnet():
    from efficientnet_pytorch import EfficientNet

    model = EfficientNet.from_name("efficientnet-b0", num_classes=10, image_size=64)

    def batch(step, fault=False):
        generator = torch.Generator().manual_seed(step)
        images = torch.randn(4, 4 if fault else 3, 64, 64, generator=generator)  # fault: RGBA
        labels = torch.randint(0, 10, (4,), generator=generator)
        return (images,), lambda out: F.cross_entropy(out, labels)
    return "efficientnet_pytorch 0.7.1 EfficientNet-b0", model, batch


class CRFTagger(nn.Module):
    """pytorch-crf's documented use: emissions from a BiLSTM, the CRF's negative log-likelihood."""

    def __init__(self, vocab=300, tags=7):
        super().__init__()
        from torchcrf import CRF

        self.embed = nn.Embedding(vocab, 32)
        self.lstm = nn.LSTM(32, 32, batch_first=True, bidirectional=True)
        self.emit = nn.Linear(64, tags)
        self.crf = CRF(tags, batch_first=True)

    def forward(self, tokens, tags, mask):
        emissions = self.emit(self.lstm(self.embed(tokens))[0])
        return -self.crf(emissions, tags, mask=mask, reduction="mean")


def crf_tagger():
    model = CRFTagger()

    def batch(step, fault=False):
        generator = torch.Generator().manual_seed(step)
        tokens = torch.randint(1, 300, (4, 12), generator=generator)
        if fault:
            tokens[2, 5] = 300  # a token id from a larger vocabulary
        tags = torch.randint(0, 7, (4, 12), generator=generator)
        mask = torch.ones(4, 12, dtype=torch.bool)
        mask[1, 9:] = False
        return (tokens, tags, mask), lambda loss: loss
    return "pytorch-crf 0.7.2 BiLSTM-CRF tagger", model, batch


def vit():
    spec = importlib.util.find_spec("vit_pytorch")
    path = spec.submodule_search_locations[0] + "/vit.py"
    module_spec = importlib.util.spec_from_file_location("vit_pytorch_vit", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    model = module.ViT(image_size=32, patch_size=8, num_classes=10, dim=64, depth=2, heads=4, mlp_dim=128,
                       dropout=0.1, emb_dropout=0.1)

    def batch(step, fault=False):
        generator = torch.Generator().manual_seed(step)
        images = torch.randn(4, 3, 32, 32, generator=generator)
        labels = torch.randint(0, 10, (4,), generator=generator)
        if fault:
            labels[3] = 10  # 1-based labels
        return (images,), lambda out: F.cross_entropy(out, labels)
    return "vit-pytorch ViT (vit.py)", model, batch


def run(make, steps=4):
    name, model, batch = make()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # a guard warning counts as an alarm too
        with guard(model, first=10**9) as handle:
            for step in range(steps):
                inputs, loss_fn = batch(step)
                optimizer.zero_grad()
                loss_fn(model(*inputs)).backward()
                optimizer.step()
            model.eval()
            with torch.no_grad():
                inputs, _ = batch(steps)
                model(*inputs)
    modules = sum(1 for _ in model.modules())
    print(f"{name}: {handle.step} steps ({steps} train + 1 eval), {modules} modules guarded, every check on "
          "every step: no false alarm")
    model.train()
    inputs, loss_fn = batch(0, fault=True)
    with guard(model):
        try:
            loss_fn(model(*inputs)).backward()
        except GuardError as error:
            print("  planted fault ->\n    " + str(error).replace("\n", "\n    "))
            return
    print("  planted fault not caught")


def main() -> int:
    torch.manual_seed(0)
    for make in (efficientnet, crf_tagger, vit):
        run(make)
    return 0


if __name__ == "__main__":
    sys.exit(main())
