"""TL005's examples: code the rule must leave alone, and code it must flag.

Cost: data, no analysis.
"""

from __future__ import annotations

from torchlint.rule_api.rule import Invalid
from torchlint.rules.training.implicit_host_sync_in_hot_path.tensor_calls import LOOP_EXITS, SIZES

VALID = (
    # `print` of sizes, strings and a plain variable (no evident tensor)
    "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x):\n"
    "        print('input', x.shape, x.size(0), f'{len(x)} rows')\n        print(x)\n        return x\n",
    # a detached fresh CPU tensor is read without a wait
    "import torch\n\ndef train(model, loader, optim, history):\n    for batch in loader:\n"
    "        loss = model(batch)\n        loss.backward()\n        optim.step()\n"
    "        history.append(float(torch.zeros(1).detach()))\n",
    # a plain variable, a fresh CPU tensor, lengths for pack_padded_sequence, TL003's calls
    "import torch\nfrom torch import nn\nfrom torch.nn.utils.rnn import pack_padded_sequence\n\n"
    "class M(nn.Module):\n    def forward(self, x, lengths, flag):\n        if flag:\n            x = -x\n"
    "        scale = float(torch.rand(1))\n        packed = pack_padded_sequence(x, lengths.cpu())\n"
    "        return packed, x.sum().item(), x.cpu().numpy(), scale\n",
    # an error path; a method no hot path calls; not a module
    "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, loss):\n"
    "        if not torch.isfinite(loss).all():\n            raise ValueError('loss is not finite')\n"
    "        return loss\n\n    def summary(self, x):\n        return float(x.mean())\n\n"
    "class Plain:\n    def forward(self, x):\n        return bool(x.any())\n",
    # sizes (an allocation's length, a count), without their option
    "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x, lengths, keep):\n"
    "        out = x.new_zeros(len(x), int(lengths.max()) + 1)\n        n = len(torch.nonzero(keep))\n"
    "        return out, n\n",
    # the exit of a decoding loop or a solver
    "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x, done):\n"
    "        while not done.all():\n            x, done = self.step(x)\n"
    "        for _ in range(10):\n            x = self.step(x)[0]\n            if x.abs().max() < 1e-3:\n"
    "                break\n        return x\n\n    def step(self, x):\n        return x / 2, x < 1\n",
    # a check that warns, or raises when strict: as deliberate as one that raises
    "import warnings\nimport torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x):\n"
    "        if torch.isnan(x).any():\n            if self.training:\n                raise ValueError('nan')\n"
    "            else:\n                warnings.warn('nan')\n        return x\n",
    # a reduction with arguments, an `is` test, a numpy array
    "import numpy as np\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x, cache):\n"
    "        if x.max(dim=1) is None or cache is not None:\n            x = x + 1\n"
    "        if np.zeros(3).any():\n            x = x * 2\n        return x\n",
)

INVALID = (
    # a reduction formatted by `print` in a loss (flood_forecast's debugging prints), also in an f-string
    Invalid(
        "import torch\nfrom torch import nn\n\nclass RMSELoss(nn.Module):\n    def forward(self, output, target):\n"
        "        std_dev = torch.std(target - output)\n        print('std_dev', std_dev)\n"
        "        return ((target - output) ** 2).mean().sqrt() + std_dev\n",
        line=7,
        column=9,
    ),
    Invalid(
        "import torch\n\ndef train(model, loader, optim):\n    for batch in loader:\n"
        "        loss = model(batch)\n        loss.backward()\n        optim.step()\n"
        "        print(f'grad norm {model.weight.grad.norm():.3f}')\n",
        line=8,
        column=9,
    ),
    # a loss function in a file with no training call: a runner calls it on every step; an
    # elementwise function of a reduction is a device tensor; a parameter's default is no run-once test
    Invalid(
        "import torch\n\ndef sure_loss(x, y, eps=-1.0):\n    if eps == -1.0:\n"
        "        eps = float(torch.abs(y.max())) / 1000\n    return ((x + eps) - y).pow(2).mean()\n",
        line=5,
        column=15,
    ),
    # a loss's count (hard-negative mining) needs no option
    Invalid(
        "import torch\nfrom torch import nn\n\nclass BalancedLoss(nn.Module):\n    def forward(self, loss, positive):\n"
        "        k = int(positive.sum())\n        return torch.topk(loss, k)[0].sum()\n",
        line=6,
        column=13,
    ),
    # Python's NaN test of the gradients' norm skips a step on the host's word
    Invalid(
        "import math\nimport torch\n\ndef train(model, loader, optim):\n    for batch in loader:\n"
        "        model(batch).backward()\n        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
        "        if math.isnan(norm):\n            continue\n        optim.step()\n",
        line=8,
        column=12,
    ),
    Invalid(
        "from torch import nn\n\nclass M(nn.Module):\n    def forward(self, x, mask):\n"
        "        if mask.any():\n            x = x.masked_fill(mask, 0.0)\n        return x\n",
        line=5,
        column=12,
    ),
    # a check that skips the step instead of raising
    Invalid(
        "import torch\nimport lightning as L\n\nclass M(L.LightningModule):\n"
        "    def training_step(self, batch, i):\n        loss = self(batch)\n"
        "        if not torch.isfinite(loss).all():\n            return None\n        return loss\n",
        line=7,
        column=16,
    ),
    # a number read through a copy, in a hand-written training loop
    Invalid(
        "import torch\n\ndef train(model, loader, optim):\n    for batch in loader:\n        loss = model(batch)\n"
        "        loss.backward()\n        optim.step()\n        print(float(loss.cpu().detach()))\n",
        line=8,
        column=15,
    ),
    # a number read from a detached loss: only a tensor has `.detach()`
    Invalid(
        "import torch\n\ndef train(model, loader, optim, history):\n    for batch in loader:\n"
        "        loss_tensor = model(batch)\n        loss_tensor.backward()\n        optim.step()\n"
        "        history.append(float(loss_tensor.detach()))\n",
        line=8,
        column=24,
    ),
    # the step of a task object the LightningModule delegates to (not a module itself)
    Invalid(
        "import torch\nimport lightning as L\n\nclass Task(L.LightningDataModule):\n"
        "    def training_step(self, batch, batch_idx):\n        loss = self.model.loss_func(self.model(batch))\n"
        "        if torch.isnan(loss):\n            return None\n        return {'loss': loss}\n",
        line=7,
        column=12,
    ),
    Invalid(
        "from torch import nn\n\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        return x / float(x.abs().max())\n",
        line=5,
        column=20,
    ),
    # reached through a helper; `nonzero` feeding a loop
    Invalid(
        "import torch\nfrom torch import nn\n\nclass Detector(nn.Module):\n    def forward(self, boxes, keep):\n"
        "        return self._select(boxes, keep)\n\n    def _select(self, boxes, keep):\n"
        "        picked = []\n        for index in torch.nonzero(keep):\n            picked.append(boxes[index])\n"
        "        return picked\n",
        line=10,
        column=22,
    ),
    Invalid(
        "import torch\n\nclass Scale(torch.autograd.Function):\n    @staticmethod\n"
        "    def backward(ctx, grad):\n        return grad.cpu() * 2\n",
        line=6,
        column=16,
    ),
    Invalid(
        "from torch import nn\n\nclass M(nn.Module):\n    def forward(self, x, done):\n"
        "        while not done.all():\n            x = x / 2\n            done = x < 1\n        return x\n",
        line=5,
        column=19,
        options=((LOOP_EXITS, True),),
    ),
    # sizes: a count for an allocation, a data-dependent length
    Invalid(
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x, lengths):\n"
        "        out = x.new_zeros(len(x), int(lengths.max()))\n        return out\n",
        line=6,
        column=35,
        options=((SIZES, True),),
    ),
    Invalid(
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, loss):\n"
        "        assert torch.isfinite(loss).all(), 'loss is not finite'\n        return loss\n",
        line=6,
        column=16,
        options=(("check-error-paths", True),),
    ),
)
