"""TL003's examples: code the rule must leave alone, and code it must flag (with the fixed text).

Cost: data, no analysis.
"""

from __future__ import annotations

from torchlint.rule_api.rule import Invalid

VALID = (
    # a returned number handed to a plain function (no logger, no callback): needed on the host
    "import torch\n\ndef train_step(model, opt, batch):\n    loss = model(batch).sum()\n    loss.backward()\n"
    "    opt.step()\n    return loss.item()\n\n"
    "def train(model, opt, loader, schedule):\n    for batch in loader:\n"
    "        value = train_step(model, opt, batch)\n        schedule.on_value(value)\n",
    # a module's `train_step` that a method of the tree calls is no runner's: its callers decide (here, once)
    "from torch import nn\n\nclass Probe(nn.Module):\n    def train_step(self, data, optimizer):\n"
    "        return {'loss': self.head(data).mean().item()}\n\n"
    "    def smoke_test(self, data, optimizer):\n        print(self.train_step(data, optimizer))\n",
    # a sum kept on `self` that the step branches on is needed on the host
    "from torch import nn\n\nclass Net(nn.Module):\n    def forward(self, x):\n"
    "        self.tokens += x.sum().item()\n        if self.tokens < self.warmup:\n            x = x * 0.5\n"
    "        return x\n",
    # a count that builds a sequence is needed on the host
    "from torch import nn\n\nclass Net(nn.Module):\n    def forward(self, x):\n"
    "        self.seen += x.sum().long().item() * ['x']\n        return x\n",
    # a predictor's `forward` under `torch.inference_mode()`: no training step starts there
    "import torch\nfrom torch import nn\n\nclass Predictor(nn.Module):\n    @torch.inference_mode()\n"
    "    def forward(self, x):\n        out = self.model(x)\n        self.history.append(out.mean().item())\n"
    "        return out\n",
    # the evaluation side of a module's mode (`not model.training`) never runs on a training step
    "from torch import nn\n\nclass CtcCriterion(nn.Module):\n    def forward(self, model, x):\n"
    "        loss = model(x).sum()\n        if not model.training:\n            print(x.argmax(-1).tolist())\n"
    "        return loss\n",
    # a function that returns a number, with no caller in the file and no training of its own: its callers decide
    "import torch\n\nclass Agent:\n    def learn(self, batch):\n        loss = self.step(batch)\n"
    "        return loss.item()\n\n    def step(self, batch):\n        loss = self.net(batch).mean()\n"
    "        loss.backward()\n        self.optimizer.step()\n        return loss\n",
    # a step function whose returned number a caller branches on: needed on the host
    "import torch\n\ndef train_step(model, opt, batch):\n    loss = model(batch).sum()\n    loss.backward()\n"
    "    opt.step()\n    return loss.item()\n\n"
    "def train(model, opt, loader):\n    best = 1e9\n    for batch in loader:\n"
    "        value = train_step(model, opt, batch)\n        if value < best:\n            best = value\n",
    # a per-batch callback that returns early on most steps: the rest runs now and then
    "import lightning as L\n\nclass LogImages(L.Callback):\n"
    "    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):\n"
    "        if not self.should_log:\n            return\n        print(outputs['loss'].item())\n",
    "import lightning as L\n\nclass LogEvery(L.Callback):\n"
    "    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):\n"
    "        if trainer.global_step % 100 != 0:\n            return\n        print(outputs['loss'].item())\n",
    # an evaluation loop, an epoch loop, numpy values and a scheduler step in a training loop
    "import numpy as np\nimport torch\n\n@torch.no_grad()\ndef evaluate(model, loader):\n"
    "    return [model(x).item() for x in loader]\n\n"
    "def train(model, loader, opt, sched, boxes):\n    for x in loader:\n        model(x).backward()\n"
    "        opt.step()\n        print(np.asarray(boxes).tolist())\n    sched.step()\n\n"
    "def main(model, loader, opt, sched):\n    for epoch in range(3):\n        train(model, loader, opt, sched, [])\n"
    "        print(evaluate(model, loader))\n",
    # epoch hooks, __repr__, helpers, look-alikes
    "import pytorch_lightning as pl\n\nclass M(pl.LightningModule):\n"
    "    def on_train_epoch_end(self):\n        print(self.metric.compute().item())\n\n"
    "    def __repr__(self):\n        return str(self.scale.item())\n",
    "from torch import nn\n\nclass M(nn.Module):\n    def forward(self, x, table):\n"
    "        for key, value in table.items():\n            x = x + value\n"
    "        return x, self.item, x.item\n",
    "from torch import nn\n\nclass M(nn.Module):\n    def forward(self, x, arr):\n"
    "        return x * arr.item(0)\n",
    # not a module, not a LightningModule (for training_step)
    "class M:\n    def forward(self, x):\n        return x.item()\n",
    "from torch import nn\n\nclass M(nn.Module):\n    def training_step(self, batch, i):\n"
    "        return batch.sum().item()\n",
    # an imported base with only a `forward`: not enough to call it a module
    "from .base import BaseBackend\n\nclass OnnxBackend(BaseBackend):\n    def forward(self, im):\n"
    "        return self.session.run(None, {\"images\": im.cpu().numpy()})\n",
    # a fresh CPU tensor; an error path; a helper no hot path calls
    "import torch\nfrom torch import nn\n\nclass Jitter(nn.Module):\n    def forward(self, x):\n"
    "        if x.dim() != 4:\n            raise ValueError(f\"bad input: {x.sum().item()}\")\n"
    "        assert x.min() >= 0, x.min().item()\n"
    "        return x * torch.empty(1).uniform_(0.5, 1.5).item() + torch.randint(0, 3, (1,)).item()"
    " + torch.exp(torch.rand(1)).item()\n\n"
    "    def describe(self, x):\n        return x.mean().item()\n",
    # a block that runs now and then: an image logged every 100 steps, a debug switch
    "import lightning as L\n\nclass M(L.LightningModule):\n    def training_step(self, batch, batch_idx):\n"
    "        out = self(batch)\n        if batch_idx % 100 == 0:\n"
    "            self.logger.experiment.add_image('out', out[0].cpu().numpy())\n"
    "        if self.hparams.debug:\n            print(out.mean().item())\n        return out.sum()\n",
    # state the class only ever sets to a CPU tensor
    "import torch\nfrom torch import nn\n\nclass Attention(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self._state = {}\n        self.calls = torch.zeros(())\n\n"
    "    def forward(self, x):\n        if 'offset' not in self._state:\n"
    "            self._state['offset'] = torch.tensor(0)\n        self._state['offset'] += x.shape[1]\n"
    "        self.calls += 1\n"
    "        return x[:, int(self._state['offset'].item()):], self.calls.item()\n",
    # a nested function is not run by forward itself
    "from torch import nn\n\nclass M(nn.Module):\n    def forward(self, x):\n"
    "        def stats():\n            return x.mean().item()\n        return x, stats\n",
    # an opt-in statistics switch, a run-once initialisation, a None-check of what the step made
    "from torch import nn\n\nclass Miner(nn.Module):\n    def __init__(self, collect_stats=False):\n"
    "        super().__init__()\n        self.collect_stats = collect_stats\n        self._iter = -1\n\n"
    "    def forward(self, x):\n        if self.collect_stats:\n            self.avg = x.mean().item()\n"
    "        if self._iter == -1:\n            self._iter = int(x.sum().item())\n"
    "        evicted = self.evict(x)\n        if evicted is not None:\n            print(evicted.sum().item())\n"
    "        return x\n",
    # a dict handed to a plain function is its input, not a record
    "from torch import nn\n\nclass M(nn.Module):\n    def forward(self, x):\n"
    "        to_record({\"input\": x.cpu().numpy()})\n        return x\n",
    # the value was read already (the NaN check waited for it); a progress-bar value in
    # training_step, which Lightning reads with `.item()` every batch anyway
    "import torch\nimport lightning as L\n\nclass M(L.LightningModule):\n"
    "    def training_step(self, batch, batch_idx):\n        loss = self(batch)\n"
    "        if torch.isnan(loss):\n            raise ValueError(\"loss is NaN\")\n"
    "        self.log(\"loss\", loss.item())\n        self.log(\"aux\", batch.mean().item(), prog_bar=True)\n"
    "        return loss\n",
)

INVALID = (
    # a number formatted with `str.format` for `print`, and a NumPy copy summed into a running total
    Invalid(
        "import torch\n\ndef fit(model, loader, opt):\n    total = 0.0\n    for x, y in loader:\n"
        "        loss = model(x, y)\n        loss.backward()\n        opt.step()\n"
        "        print('loss {:.3f}'.format(loss.item()))\n        total += loss.cpu().detach().numpy() * len(x)\n"
        "    return total\n",
        line=9,
        column=36,
    ),
    # a step function reaches the method of an object its class's `__init__` builds
    Invalid(
        "import torch\n\nclass Discriminator:\n    def __init__(self):\n        self.net = torch.nn.Linear(4, 1)\n\n"
        "    def score(self, batch):\n        estimate = self.net(batch)\n"
        "        return -estimate.mean(), {'estimate': estimate.mean().item()}\n\n"
        "class Provider:\n    def __init__(self):\n        self.discriminator = Discriminator()\n\n"
        "    def update(self, batch):\n        loss, stats = self.discriminator.score(batch)\n"
        "        loss.backward()\n        self.optimizer.step()\n        return stats\n",
        line=9,
        column=47,
    ),
    # the optimizers stepped in a loop of their own: the batch loop around it trains
    Invalid(
        "import torch\n\ndef train(model, loader, optimizers):\n    losses = []\n    for batch in loader:\n"
        "        loss = model(batch)\n        loss.backward()\n        for optimizer in optimizers:\n"
        "            optimizer.step()\n        losses.append(loss.item())\n    return losses\n",
        line=10,
        column=23,
    ),
    # trl's preference trainers call `get_batch_loss_metrics` from `compute_loss` on every step
    Invalid(
        "from trl import DPOTrainer\n\nclass Trainer(DPOTrainer):\n"
        "    def get_batch_loss_metrics(self, model, batch, train_eval='train'):\n"
        "        losses, chosen, rejected = self.compute_preference_loss(model, batch)\n"
        "        return losses.mean(), {'margin': (chosen - rejected).mean().item()}\n",
        line=6,
        column=42,
    ),
    # a step function's returned number that its caller sums and hands to callbacks, which observe the step
    Invalid(
        "import torch\n\nclass Loop:\n    def _forward_pass(self, batch):\n        loss = self.model(batch).sum()\n"
        "        loss.backward()\n        return loss.item()\n\n"
        "    def train_epoch(self, loader, callbacks):\n        total = 0.0\n        for batch in loader:\n"
        "            batch_loss = self._forward_pass(batch)\n            total += batch_loss\n"
        "            callbacks.on_batch(batch=batch, batch_loss=batch_loss)\n"
        "            self.optimizer.step()\n        return total\n",
        line=7,
        column=16,
    ),
    # a copy read as a number in turn goes where the number goes: a stats dict
    Invalid(
        "import torch\n\ndef train_step(model, opt, batch, logs):\n    loss = model(batch).sum()\n    loss.backward()\n"
        "    opt.step()\n    logs['loss'] = loss.cpu().detach().numpy().item()\n",
        line=7,
        column=20,
    ),
    # a per-step sum kept on `self`, and one kept in a stats dict
    Invalid(
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        y = self.body(x)\n        self.total += y.sum().item()\n        self.stats['n'] += y.numel()\n"
        "        return y\n",
        line=7,
        column=23,
    ),
    # a step function's returned number that its caller only sums and logs
    Invalid(
        "import torch\n\ndef train_step(model, opt, batch):\n    loss = model(batch).sum()\n    loss.backward()\n"
        "    opt.step()\n    return loss.item()\n\n"
        "def train(model, opt, loader):\n    total = 0.0\n    for step, batch in enumerate(loader):\n"
        "        value = train_step(model, opt, batch)\n        total += value\n"
        "        print(f'step {step}: {value:.3f}')\n",
        line=7,
        column=12,
    ),
    # an early exit taken now and then (on multiples of 100) leaves the rest on every other step
    Invalid(
        "import lightning as L\n\nclass SkipEvery(L.Callback):\n"
        "    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):\n"
        "        if trainer.global_step % 100 == 0:\n            return\n        print(outputs['loss'].item())\n",
        line=7,
        column=15,
    ),
    # a per-batch hook of a callback runs on every step
    Invalid(
        "import lightning as L\n\nclass LogAlways(L.Callback):\n"
        "    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):\n"
        "        print(outputs['loss'].item())\n",
        line=5,
        column=15,
    ),
    # a training loop: a per-step sum becomes a tensor, read once after the loop (float32: unsafe)
    Invalid(
        "def train(model, loader, opt):\n    running = 0.0\n    for x in loader:\n"
        "        loss = model(x)\n        loss.backward()\n        opt.step()\n"
        "        running += loss.item()\n    print(running / len(loader))\n",
        unsafe_fixed="def train(model, loader, opt):\n    running = 0.0\n    for x in loader:\n"
        "        loss = model(x)\n        loss.backward()\n        opt.step()\n"
        "        running += loss.detach()\n    running = float(running)\n    print(running / len(loader))\n",
        line=7,
        column=20,
    ),
    # a per-step sum started on the first step (`None` until then)
    Invalid(
        "def train_epoch(model, loader, opt):\n    total = None\n    for x in loader:\n"
        "        loss = model(x)\n        loss.backward()\n        opt.step()\n"
        "        total = loss.item() if total is None else total + loss.item()\n    return total\n",
        line=7,
        column=17,
    ),
    # numbers handed to the project's own logging routine, named for what it logs
    Invalid(
        "class Algo:\n    def train(self, loader):\n        for batch in loader:\n"
        "            loss = self.policy(batch)\n            loss.backward()\n            self.optimizer.step()\n"
        "            self._log_performance(batch, loss.item())\n",
        line=7,
        column=42,
    ),
    # OpenMMLab's runners call a model's `train_step` on every iteration, and what it calls on `self`
    Invalid(
        "from torch import nn\n\nclass Estimator(nn.Module):\n    def train_step(self, data, optimizer):\n"
        "        losses = self(**data)\n        return self._parse_losses(losses)\n\n"
        "    def _parse_losses(self, losses):\n        log_vars = {}\n"
        "        for name, value in losses.items():\n            log_vars[name] = value.mean().item()\n"
        "        return sum(losses.values()), log_vars\n",
        line=11,
        column=30,
    ),
    # what the loop of a hand-written trainer runs through a helper
    Invalid(
        "class Trainer:\n    def fit(self, loader):\n        for batch in loader:\n"
        "            loss = self.model(batch)\n            self.scaler.scale(loss).backward()\n"
        "            self._log(loss)\n\n    def _log(self, loss):\n        print(loss.item())\n",
        line=9,
        column=15,
    ),
    # hard-negative mining in a loss: a host value, reported by default; the unsafe fix sorts
    # once and masks by rank (the mean becomes the sum over the count)
    Invalid(
        "import torch\nfrom torch import nn\n\nclass BalanceLoss(nn.Module):\n    def forward(self, loss, positive):\n"
        "        k = int(positive.sum().item())\n        return torch.topk(loss.view(-1), 3 * k)[0].mean()\n",
        unsafe_fixed="import torch\nfrom torch import nn\n\nclass BalanceLoss(nn.Module):\n"
        "    def forward(self, loss, positive):\n        k = positive.sum().detach().long()\n"
        "        return loss.view(-1).sort(descending=True).values"
        ".where(torch.arange(loss.numel(), device=loss.device) < (3 * k), 0).sum() / (3 * k)\n",
        line=6,
        column=17,
    ),
    # the detection/OCR form: counts bounded by `min`, `topk` bound to a name, a divisor
    Invalid(
        "import torch\nfrom torch import nn\n\nclass BalanceBCELoss(nn.Module):\n"
        "    def forward(self, loss, positive, negative):\n"
        "        positive_count = int(positive.sum().item())\n"
        "        negative_count = min(int(negative.sum().item()), int(positive_count * 3.0))\n"
        "        negative_loss, _ = (loss * negative).view(-1).topk(negative_count)\n"
        "        return ((loss * positive).sum() + negative_loss.sum()) / (positive_count + negative_count + 1e-6)\n",
        unsafe_fixed="import torch\nfrom torch import nn\n\nclass BalanceBCELoss(nn.Module):\n"
        "    def forward(self, loss, positive, negative):\n"
        "        positive_count = positive.sum().detach().long()\n"
        "        negative_count = (\n"
        "            negative.sum().detach().long().clamp_max((positive_count * 3.0).long())\n        )\n"
        "        negative_loss = (loss * negative).view(-1).sort(descending=True).values\n"
        "        negative_loss = negative_loss.where(torch.arange(negative_loss.shape[-1], "
        "device=negative_loss.device) < negative_count, 0)\n"
        "        return ((loss * positive).sum() + negative_loss.sum()) / (positive_count + negative_count + 1e-6)\n",
        line=6,
        column=30,
    ),
    # sort once, then a slice of a count: masked by rank the same way
    Invalid(
        "import torch\nfrom torch import nn\n\nclass SortedLoss(nn.Module):\n    def forward(self, loss, negative):\n"
        "        k = int(negative.sum().item())\n        ranked = loss.flatten().sort(descending=True).values\n"
        "        return ranked[:k].sum()\n",
        unsafe_fixed="import torch\nfrom torch import nn\n\nclass SortedLoss(nn.Module):\n"
        "    def forward(self, loss, negative):\n        k = negative.sum().detach().long()\n"
        "        ranked = loss.flatten().sort(descending=True).values\n"
        "        return ranked.where(\n            torch.arange(ranked.numel(), device=ranked.device) < k, 0\n"
        "        ).sum()\n",
        line=6,
        column=17,
    ),
    # a comment inside the branch the fix would write on one line: no fix
    Invalid(
        "import torch\nfrom torch import nn\n\nclass FallbackLoss(nn.Module):\n    def forward(self, loss, positive):\n"
        "        k = int(positive.sum().item())\n        if k == 0:\n            # no positives: a fixed number\n"
        "            n = 5\n        else:\n            n = 3 * k\n        return torch.topk(loss.view(-1), n)[0].sum()\n",
        line=6,
        column=17,
    ),
    # the selected losses are read as a size: reported, no fix
    Invalid(
        "import torch\nfrom torch import nn\n\nclass HardestLoss(nn.Module):\n"
        "    def forward(self, loss, negative):\n        k = int(negative.sum().item())\n"
        "        hard = (loss * negative).topk(k).values\n        return hard.sum() / max(len(hard), 1)\n",
        line=6,
        column=17,
    ),
    # the class a training loop calls as its criterion: its `forward` is loss code too
    Invalid(
        "import torch\nfrom torch import nn\n\nclass Focal(nn.Module):\n    def forward(self, loss, positive):\n"
        "        k = int(positive.sum().item())\n        return torch.topk(loss.view(-1), 3 * k)[0].mean()\n\n"
        "def train(model, loader, opt):\n    criterion = Focal()\n    for x, y in loader:\n"
        "        loss = criterion(model(x), y)\n        loss.backward()\n        opt.step()\n",
        unsafe_fixed="import torch\nfrom torch import nn\n\nclass Focal(nn.Module):\n    def forward(self, loss, positive):\n"
        "        k = positive.sum().detach().long()\n"
        "        return loss.view(-1).sort(descending=True).values"
        ".where(torch.arange(loss.numel(), device=loss.device) < (3 * k), 0).sum() / (3 * k)\n\n"
        "def train(model, loader, opt):\n    criterion = Focal()\n    for x, y in loader:\n"
        "        loss = criterion(model(x), y)\n        loss.backward()\n        opt.step()\n",
        line=6,
        column=17,
    ),
    Invalid(
        "import pytorch_lightning as pl\n\n\nclass M(pl.LightningModule):\n"
        "    def validation_step(self, batch, batch_idx):\n        loss = self(batch).mean()\n"
        '        self.log("val/loss", loss.item(), prog_bar=True)\n'
        '        self.log_dict({"a": batch.sum().item(), "b": 1})\n        return loss\n',
        fixed="import pytorch_lightning as pl\n\n\nclass M(pl.LightningModule):\n"
        "    def validation_step(self, batch, batch_idx):\n        loss = self(batch).mean()\n"
        '        self.log("val/loss", loss.detach(), prog_bar=True)\n'
        '        self.log_dict({"a": batch.sum().detach(), "b": 1})\n        return loss\n',
        line=7,
        column=30,
    ),
    # logged per epoch only: the progress bar does not read it every training batch
    Invalid(
        "import lightning as L\n\n\nclass M(L.LightningModule):\n"
        "    def training_step(self, batch, batch_idx):\n        loss = self(batch).mean()\n"
        '        self.log("loss", loss.item(), prog_bar=True, on_step=False, on_epoch=True)\n        return loss\n',
        fixed="import lightning as L\n\n\nclass M(L.LightningModule):\n"
        "    def training_step(self, batch, batch_idx):\n        loss = self(batch).mean()\n"
        '        self.log("loss", loss.detach(), prog_bar=True, on_step=False, on_epoch=True)\n        return loss\n',
        line=7,
        column=26,
    ),
    # an optional input: callers pass it on every step; `self.training` is no setting
    Invalid(
        "from torch import nn\n\nclass M(nn.Module):\n    def forward(self, x, mask=None):\n"
        "        if mask is not None and self.training:\n            print(mask.sum().item())\n        return x\n",
        line=6,
        column=19,
    ),
    # rebound after the first read: the second read waits again
    Invalid(
        "from torch import nn\n\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        total = x.sum()\n        print(total.item())\n        total = total * 2\n"
        "        print(total.item())\n        return x\n",
        line=6,
        column=15,
    ),
    # a setting's block, with `check-periodic-branches`
    Invalid(
        "from torch import nn\n\nclass M(nn.Module):\n    def __init__(self, collect_stats=False):\n"
        "        super().__init__()\n        self.collect_stats = collect_stats\n\n    def forward(self, x):\n"
        "        if self.collect_stats:\n            self.avg = x.mean().item()\n        return x\n",
        line=10,
        column=24,
        options=(("check-periodic-branches", True),),
    ),
    # a count used only in arithmetic: an unsafe fix
    Invalid(
        "import torch\nfrom torch import nn\n\n\nclass L1(nn.Module):\n"
        "    def forward(self, pred, gt, mask):\n        count = int(mask.sum().item())\n"
        "        return (torch.abs(pred - gt) * mask).sum() / (count + 1e-6)\n",
        unsafe_fixed="import torch\nfrom torch import nn\n\n\nclass L1(nn.Module):\n"
        "    def forward(self, pred, gt, mask):\n        count = mask.sum().detach().long()\n"
        "        return (torch.abs(pred - gt) * mask).sum() / (count + 1e-6)\n",
        line=7,
        column=21,
    ),
    # arithmetic with numbers only may feed a size or a record: a host value, no fix
    Invalid(
        "import torch\nfrom torch import nn\n\n\nclass Span(nn.Module):\n"
        "    def forward(self, tokens, mask):\n        start = int(torch.nonzero(mask)[0].item())\n"
        "        return tokens, (tokens.shape[0] - start,)\n",
        line=7,
        column=21,
        options=(("check-host-values", True),),
    ),
    # a None-check of a value read from the data (through `enumerate`) holds on every step or on none
    Invalid(
        "class Trainer:\n    def accumulate(self, true_batches, stats):\n"
        "        for k, batch in enumerate(true_batches):\n            src_len = batch['srclen']\n"
        "            if src_len is not None:\n                stats.n_src_words += src_len.sum().item()\n"
        "            self.optim.backward(self.model(batch))\n        self.optim.step()\n",
        line=6,
        column=38,
    ),
    # a helper under `torch.no_grad()` that a module's forward calls still runs on every step
    Invalid(
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        out = self.layer(x)\n        self.track(out)\n        return out\n\n    @torch.no_grad()\n"
        "    def track(self, out):\n        self.history.append(out.mean().item())\n",
        line=12,
        column=29,
    ),
    # a per-batch hook under `torch.no_grad()` runs on every step all the same
    Invalid(
        "import lightning as L\nimport torch\n\nclass Spikes(L.Callback):\n    @torch.no_grad()\n"
        "    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):\n"
        "        self.history.append(outputs['loss'].item())\n",
        line=7,
        column=29,
    ),
    # a training step that returns the number, with no caller in the file: its callers are elsewhere
    Invalid(
        "import torch\n\nclass Agent:\n    def learn(self, batch):\n        loss = self.net(batch).mean()\n"
        "        loss.backward()\n        self.optimizer.step()\n        return -loss.item()\n",
        line=8,
        column=17,
    ),
    # a criterion's forward is loss code (fairseq's criteria derive from torch's `_Loss`): a host value too
    Invalid(
        "from torch import nn\n\nclass SpanCriterion(nn.Module):\n"
        "    def forward(self, emissions, lengths):\n        total = 0\n        for b in range(len(lengths)):\n"
        "            n = lengths[b].item()\n            total = total + emissions[:n, b].sum()\n        return total\n",
        line=7,
        column=17,
    ),
    # a size needs a host value: flagged only, and only with `check-host-values`
    Invalid(
        "from torch.nn.modules.loss import _Loss\n\nclass Balanced(_Loss):\n"
        "    def forward(self, loss, positive):\n        k = int(positive.sum().item())\n"
        "        return loss.topk(k)[0].mean()\n",
        line=5,
        column=17,
        options=(("check-host-values", True),),
    ),
    Invalid(
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        torch.cuda.synchronize()\n        return x.tolist(), x.cpu().numpy()\n",
        line=6,
        column=9,
    ),
    Invalid(
        "import lightning as L\n\nclass M(L.LightningModule):\n    def validation_step(self, batch, i):\n"
        "        scores = [s.item() for s in self(batch)]\n        return scores\n",
        line=5,
        column=19,
        options=(("check-host-values", True),),
    ),
    # `self.log` of a plain module may be its own method: flagged only
    Invalid(
        "from torch import nn\n\nclass M(nn.Module):\n    def forward(self, x):\n"
        '        self.log("x", x.sum().item())\n        return x\n',
        line=5,
        column=23,
    ),
    # a base from outside the tree: building layers in `__init__` makes it a module
    Invalid(
        "from torch import nn\nfrom external import Base\n\nclass Dice(Base):\n    def __init__(self):\n"
        "        super().__init__()\n        self.proj = nn.Linear(4, 4)\n\n    def forward(self, x):\n"
        "        return x / x.sum().item()\n",
        line=10,
        column=20,
    ),
    # reached from a step through a helper: reported at the sync, fixed there too
    Invalid(
        "import lightning as L\n\n\nclass M(L.LightningModule):\n"
        "    def training_step(self, batch, batch_idx):\n        return self._shared_step(batch, \"train\")\n\n"
        "    def _shared_step(self, batch, stage):\n        loss = self(batch).mean()\n"
        '        self.log_dict({f"{stage}/loss": loss.item()})\n        return loss\n',
        fixed="import lightning as L\n\n\nclass M(L.LightningModule):\n"
        "    def training_step(self, batch, batch_idx):\n        return self._shared_step(batch, \"train\")\n\n"
        "    def _shared_step(self, batch, stage):\n        loss = self(batch).mean()\n"
        '        self.log_dict({f"{stage}/loss": loss.detach()})\n        return loss\n',
        line=10,
        column=41,
    ),
    # an agent's step that records its loss and returns it to callers in other files (an RL training loop's)
    Invalid(
        "import torch\n\nclass Agent:\n    def learn(self, batch):\n        loss = self.net(batch).mean()\n"
        "        self.optimizer.zero_grad()\n        loss.backward()\n        self.optimizer.step()\n"
        "        loss = loss.item()\n        self.metrics.log(\"loss\", loss)\n        return loss\n",
        line=9,
        column=16,
    ),
    # `forward` of an autograd.Function runs on every step too
    Invalid(
        "import torch\n\nclass Clip(torch.autograd.Function):\n    @staticmethod\n"
        "    def forward(ctx, x):\n        torch.cuda.synchronize()\n        return x.clamp(0, 1)\n",
        line=6,
        column=9,
    ),
    # the condition of a check that raises, with `check-error-paths` (and `check-host-values`: a branch)
    Invalid(
        "from torch import nn\n\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        if x.isnan().any().item():\n            raise ValueError(\"nan\")\n        return x\n",
        line=5,
        column=12,
        options=(("check-error-paths", True), ("check-host-values", True)),
    ),
)
