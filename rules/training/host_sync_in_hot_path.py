from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

from torchlint.core.diagnostics import Applicability, Fix
from torchlint.core.lazy import cst
from torchlint.analysis.modules import self_attribute, self_name
from torchlint.analysis.names import ast_dotted_name, resolve
from torchlint.analysis.hot_paths import HotPathRule, ast_fresh_cpu_tensor, fresh_cpu_tensor, own_nodes, parents_of, plainly_host
from torchlint.core.rule import Invalid, Positions, Report, SourceView
from torchlint.analysis.sync_history import repeated_syncs
from torchlint.analysis.accumulation import AccumulationPlan, accumulation_plan, accumulator, climb
from torchlint.analysis.loss_paths import host_value_rewrite, is_loss_code, may_be_criterion
from torchlint.analysis.value_kinds import Kind, cst_bindings, cst_kind

SYNC_METHODS = ("item", "tolist", "numpy")
SYNCHRONIZE = "torch.cuda.synchronize"
_HOST_BUILTINS = frozenset(
    {"int", "float", "bool", "range", "min", "max", "round", "len", "str", "print", "format", "divmod", "abs"}
)
_ARITHMETIC = ("Add", "Subtract", "Multiply", "Divide", "FloorDivide", "Power", "Modulo")


class HostSyncInHotPath(HotPathRule):
    """
    ## What it does
    Flags `.item()`, `.tolist()`, `.numpy()` and `torch.cuda.synchronize()` on every step:
    in a hot path, or in what it calls on `self` (up to three calls deep, through the class
    and its bases in any file). The message names the route ("reached from
    `Model.training_step` via `_shared_step`").

    Hot paths: `forward` of a module; `training_step`, `validation_step`, `test_step`,
    `predict_step` of a `LightningModule`; `forward` / `backward` of an `autograd.Function`;
    `training_step` / `compute_loss` of a Hugging Face `Trainer` subclass. A class is a module if a base resolves, across the linted files, to
    `nn.Module` or `LightningModule`, or, for a base from outside the tree, if its body says
    so (layers set on `self` in `__init__`, `register_buffer`, `self.log(...)`). Training
    loops are hot too: a loop that runs a backward pass or an optimizer step (not a
    scheduler's alone), directly or through a step function, and what they call on every
    iteration, in any linted file. Not hot: a loop that only calls a function holding its own
    training loop, and loops under `torch.no_grad()` / `torch.inference_mode()`.

    Reported by default: values only recorded or reported (given to `self.log`, a logger,
    `print`, a progress bar, a stats dict kept, returned or handed to one of them, a list
    of losses, an attribute of `self`), summed or averaged (`running += loss.item()`), or
    used in arithmetic that works as well on the tensor (`x / x.sum().item()`); and
    `torch.cuda.synchronize()`, except around a timer. A value the code needs on the host (a
    size, an index, a split, a loop, a branch, a returned number, a dict handed to another
    function) only with `check-host-values`, except in loss code (a `forward` of a class
    named `...Loss`, a function named `...loss`, a criterion a training loop
    differentiates), where the message gives the sync-free rewrite that fits (sort once
    and mask by rank instead of `topk` of a count; `clamp_min`/`clamp_max` for Python
    `min`/`max`; `torch.where` for a branch).

    Not reported: values plainly not tensors (numpy arrays, Python numbers and lists:
    torchlint/analysis/value_kinds.py); `.item()` of a fresh CPU tensor
    (`torch.rand(1).item()`); look-alikes (`dict.items()`, `arr.item(0)`); a second read of
    a tensor the step already read on the host on every path to it (until it is rebound or
    changed in place), or a second sync on one value (`x.numpy().tolist()`); epoch-level
    hooks and helpers no hot path calls; blocks that do not run on every step
    (`check-periodic-branches`); error paths (a `raise`, a block ending in one, an
    `assert`'s message, and, unless `check-error-paths`, their conditions). Implicit syncs
    (`if t.any():`, `float(t)`, `t.cpu()`) are TL005's.

    ## Why is this bad?
    CUDA runs asynchronously. Reading a value on the host waits for every queued kernel, so
    the GPU idles while Python prepares the next step: typically 5-30 % of throughput once
    per step, and CUDA errors surface at the sync, far from the kernel at fault.

    ## Example
    ```python
    class Detector(pl.LightningModule):
        def training_step(self, batch, batch_idx):
            loss = self.criterion(self(batch["image"]), batch["gt"])
            self.log("train/loss", loss.item())
            return loss
    ```

    ## Use instead
    ```python
            self.log("train/loss", loss.detach())
    ```

    ## Fix safety
    Safe: in what a `*_step` hook of a `LightningModule` reaches, `self.log(name, x.item())`
    and `self.log_dict({...: x.item()})` become `x.detach()`: Lightning reduces tensors and
    reads them only when it must. A value logged with `prog_bar=True` on step from
    `training_step` is not reported: the progress bar reads it at each batch's end anyway.
    Elsewhere (`self.log` of a plain `nn.Module` may need a number), or on a value plainly
    not a tensor, no fix.

    Unsafe: `n = x.item()` or `n = int(x.item())`, `n` bound once and only an operand of
    arithmetic whose result needs no Python number (not `int()`, `range()`, `min()`, a
    comparison, a branch, an index or another variable), becomes `n = x.detach()` (or
    `.long()`): `n` is then a 0-dim tensor, so the result's dtype can change and later
    formatting or branching on it syncs there. Other syncs need a host value: no fix.

    ## Options
    - `check-host-values` (default `false`): also values needed on the host
      (`k = int(positive.sum().item())` for `topk(k)`, `for i in idx.tolist():`).
    - `check-error-paths` (default `false`): also the condition of an `if` whose block
      raises and an `assert`'s test (their message and block never).
    - `check-periodic-branches` (default `false`): also blocks that do not run on every
      step: under a modulo (`if step % 100 == 0:`) or a first-steps test (`if batch_idx <
      10:`); under a logging switch (`if self.log_images:`, `if self.debug:`) or a setting
      of the object not plainly on by default (set only in `__init__`, to an argument, a
      config value or a literal other than `True`; not `self.training`); a block that
      assigns what its condition tests (runs once: `if x is None: x = ...`); either block
      of a None-check of a value the step made itself (not of a parameter).
    - `check-evaluation-loops` (default `false`): also loops under `torch.no_grad()` or
      `torch.inference_mode()`.
    """

    code = "TL003"
    options = {**HotPathRule.options, "check-host-values": False, "check-evaluation-loops": False}
    training_loops = True
    name = "host-sync-in-hot-path"
    summary = "Host-device sync (.item(), .tolist(), .numpy(), synchronize) on every step"
    fixable = True
    triggers = (".item(", ".tolist(", ".numpy(", "synchronize")

    VALID = (
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
        # a training loop: a per-step sum becomes a tensor, read once after the loop
        Invalid(
            "def train(model, loader, opt):\n    running = 0.0\n    for x in loader:\n"
            "        loss = model(x)\n        loss.backward()\n        opt.step()\n"
            "        running += loss.item()\n    print(running / len(loader))\n",
            fixed="def train(model, loader, opt):\n    running = 0.0\n    for x in loader:\n"
            "        loss = model(x)\n        loss.backward()\n        opt.step()\n"
            "        running += loss.detach()\n    running = float(running)\n    print(running / len(loader))\n",
            line=7,
            column=20,
        ),
        # what the loop of a hand-written trainer runs through a helper
        Invalid(
            "class Trainer:\n    def fit(self, loader):\n        for batch in loader:\n"
            "            loss = self.model(batch)\n            self.scaler.scale(loss).backward()\n"
            "            self._log(loss)\n\n    def _log(self, loss):\n        print(loss.item())\n",
            line=9,
            column=15,
        ),
        # hard-negative mining in a loss: a host value, reported by default with the rewrite
        Invalid(
            "import torch\nfrom torch import nn\n\nclass BalanceLoss(nn.Module):\n    def forward(self, loss, positive):\n"
            "        k = int(positive.sum().item())\n        return torch.topk(loss.view(-1), 3 * k)[0].mean()\n",
            line=6,
            column=17,
        ),
        # the class a training loop calls as its criterion: its `forward` is loss code too
        Invalid(
            "import torch\nfrom torch import nn\n\nclass Focal(nn.Module):\n    def forward(self, loss, positive):\n"
            "        k = int(positive.sum().item())\n        return torch.topk(loss.view(-1), 3 * k)[0].mean()\n\n"
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

    def __init__(self, context) -> None:
        super().__init__(context)
        self._progress_bar: Set[int] = set()

    @classmethod
    def ast_candidate(cls, node: ast.AST, view: SourceView) -> bool:
        if not _ast_is_sync(node, view.imports):
            return False
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
        return receiver is None or not ast_fresh_cpu_tensor(receiver, view.imports)

    def method_reports(self, class_name: str, function) -> Iterator[Tuple[Report, bool]]:
        return self.owner_reports(function, self._class_node, f"`{class_name}.{function.name.value}`")

    def owner_reports(self, function, class_node, where: str) -> Iterator[Tuple[Report, bool]]:
        self._progress_bar.clear()  # ids of this method's reports, alive until placed
        module_code = isinstance(function, cst.Module)
        body = function if module_code else function.body
        instance = self_name(function) if class_node is not None and not module_code else None
        imports = self.context.imports
        nodes = list(own_nodes(body))  # walked once, read by each helper
        if not any(type(node) is cst.Call and (_sync_method(node) is not None
                                               or imports.qualified_name(node.func) == SYNCHRONIZE) for node in nodes):
            return  # nothing here to report: spare the analyses below (most owners a loop pass asks about)
        parents = parents_of(body)
        logged = _logged_values(nodes, instance, imports)
        timed = _times(nodes, imports)
        loss_path = not module_code and is_loss_code(function, class_node, imports)
        host_values = bool(self.settings["check-host-values"]) or loss_path
        # loss code too if a hot loop calls an instance as its criterion (decided by `_place`)
        criterion = not loss_path and not module_code and may_be_criterion(function, class_node)
        repeated = repeated_syncs(body, imports, _sync_receiver)
        uses = _name_uses(nodes, parents)
        bindings = cst_bindings(nodes)
        for node in nodes:
            if type(node) is not cst.Call:
                continue
            if imports.qualified_name(node.func) == SYNCHRONIZE:
                # around a timer it is what makes the measurement right
                if not self.off_step(node, parents) and not timed:
                    message = f"`torch.cuda.synchronize()` in {where} makes the host wait for all queued GPU work on every step"
                    yield Report(self, node, message), False
                continue
            method_name = _sync_method(node)
            receiver = node.func.value if method_name is not None else None
            if method_name is None or node in repeated or _after_sync(receiver) or fresh_cpu_tensor(receiver, imports):
                continue
            if cst_kind(receiver, imports, bindings) is Kind.HOST or self.cpu_state(receiver):
                continue
            if self.off_step(node, parents):
                continue
            message = (
                f"`.{method_name}()` in {where} waits for the GPU to finish and copies to the host "
                "on every step"
            )
            if method_name == "item" and node in logged:
                # only when a Lightning step reaches it is `self.log` Lightning's, which takes tensors
                report = Report(self, node, message, lambda positions, call=node: self._log_fix(call, positions))
                if logged[node]:
                    self._progress_bar.add(id(report))
                yield report, True
                continue
            unsafe = _arithmetic_only(node, parents, uses) if method_name == "item" else None
            if unsafe is not None:
                fix = lambda positions, call=node, whole=unsafe: self._unsafe_fix(call, whole, positions)  # noqa: E731
                yield Report(self, node, message, fix), False
                continue
            statement = accumulator(node, parents) if method_name == "item" else None
            if statement is not None:
                plan = accumulation_plan(node, statement, parents, body)
                message += "; accumulate the tensor and read it once after the loop"
                fix = None
                if plan is not None:
                    fix = lambda positions, call=node, plan=plan: self._accumulation_fix(call, plan, positions)  # noqa: E731
                yield Report(self, node, message, fix), False
                continue
            if _recorded(node, parents, uses):
                yield Report(self, node, message), False
            elif host_values or criterion:
                hint = host_value_rewrite(node, parents, uses) if loss_path or not host_values else None
                if hint is not None:
                    message += f"; {hint} (no automatic fix)"
                report = Report(self, node, message)
                if not host_values:
                    self.criterion_only.add(id(report))
                yield report, False

    def quiet_hooks(self, report: Report) -> FrozenSet[str]:
        # Lightning's progress bar reads every `prog_bar=True` value logged on step with
        # `.item()` at the end of each training batch: there `.detach()` saves no wait
        return _TRAINING_ONLY if id(report) in self._progress_bar else frozenset()

    def _log_fix(self, call, positions: Positions) -> Fix:
        return Fix(
            "Log the tensor: `.detach()` instead of `.item()`",
            (positions.replace(call.func.attr, "detach"),),
            Applicability.SAFE,
        )

    def _accumulation_fix(self, call, plan: AccumulationPlan, positions: Positions) -> Fix:
        receiver = self.context.module.code_for_node(call.func.value)
        content = f"{receiver}.detach()" if plan.detach else receiver
        after = positions.insert_lines_after(
            plan.loop, [f"{plan.name} = {plan.convert}({plan.name})"], self.context.newline, positions.indent_of(plan.loop)
        )
        applicability = Applicability.SAFE if plan.safe else Applicability.UNSAFE
        return Fix(
            f"Accumulate the tensor and read `{plan.name}` once after the loop",
            (positions.replace(call, content), after),
            applicability,
        )

    def _unsafe_fix(self, call, whole, positions: Positions) -> Fix:
        if whole is call:
            edit = positions.replace(call.func.attr, "detach")
        else:
            receiver = self.context.module.code_for_node(call.func.value)
            edit = positions.replace(whole, f"{receiver}.detach().long()")
        return Fix("Keep the value on the GPU as a 0-dim tensor", (edit,), Applicability.UNSAFE)



# tensor methods and torch functions whose arguments are sizes, counts or indices
_SIZE_ARGUMENTS = frozenset(
    {
        "topk", "kthvalue", "view", "reshape", "expand", "repeat", "narrow", "split", "chunk", "zeros", "ones",
        "empty", "full", "rand", "randn", "randint", "arange", "randperm", "multinomial", "new_zeros", "new_ones",
        "new_full", "new_empty", "unflatten", "tensor_split", "roll",
    }
)
_TIMERS = frozenset({"time.time", "time.perf_counter", "time.monotonic", "time.perf_counter_ns", "time.time_ns"})
# calls that record or report a value (logging, progress bars, stats dicts, lists of losses)
_SINK_METHODS = frozenset(
    {
        "log", "log_dict", "log_metrics", "info", "debug", "warning", "add_scalar", "add_scalars", "set_postfix",
        "update", "append", "set_description", "set_postfix_str",
    }
)
_SINK_FUNCTIONS = frozenset({"print"})
_TRAINING_ONLY = frozenset({"training_step"})


def _times(nodes: Sequence, imports) -> bool:
    return any(type(node) is cst.Call and imports.qualified_name(node.func) in _TIMERS for node in nodes)


def _recorded(call, parents: Dict, uses: Dict[str, List]) -> bool:
    """Whether a synced value only goes where values are recorded or reported: a logging
    call, `print`, a stats dict given to one (`self.log_dict({"loss": v.item()})`) or
    filled in place (`stats["loss"] = ...`, `stats.update(loss=...)`), a list of losses,
    an attribute of `self`, itself or through a name bound once whose every use is such.
    Other values (a size, an index, a loop, a branch, a dict handed to any other
    function) are needed on the host: reported only with `check-host-values`."""
    node, parent = _climb(call, parents)
    if isinstance(node, cst.BinaryOperation) and call.func.attr.value == "item" and not _needs_host_value(node, parents):
        return True  # arithmetic with a number (`x / x.sum().item()`) works as well on the tensor
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        target = parent.targets[0].target
        if isinstance(target, cst.Subscript) or (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)):
            return True
        if isinstance(target, cst.Name):
            reads = [name for name in uses.get(target.value, ()) if name is not target and not _binds(name, parents)]
            return bool(reads) and all(_recorded_use(name, parents) for name in reads)
    return _recorded_use(node, parents)


def _recorded_use(node, parents: Dict) -> bool:
    node, parent = _climb(node, parents)
    if isinstance(parent, cst.Arg):
        call = parents.get(parent)
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "dict":
            return _stats_dict(call, parents)
        return _is_sink(call)
    if isinstance(parent, cst.DictElement):
        return _stats_dict(parents.get(parent), parents)
    return isinstance(parent, cst.FormattedStringExpression) and _is_sink_string(parent, parents)


def _stats_dict(mapping, parents: Dict) -> bool:
    """Whether a dict literal or `dict(...)` holds stats: kept (`stats = {...}`),
    returned or handed to a logging call; a dict handed to any other function
    (`to_record({...})`, `session.run(None, {...})`) is that function's input."""
    holder = parents.get(mapping)
    return not isinstance(holder, cst.Arg) or _is_sink(parents.get(holder))


def _name_uses(nodes: Sequence, parents: Dict) -> Dict[str, List]:
    """Every `Name` node of a method (`nodes`: its own, nested functions excluded) by its
    name, reads and bindings alike, but not attribute names (`x.n`) or keywords (`f(n=1)`)."""
    uses: Dict[str, List] = {}
    for node in nodes:
        if type(node) is cst.Name:
            holder = parents.get(node)
            if isinstance(holder, cst.Attribute) and holder.attr is node:
                continue
            if isinstance(holder, cst.Arg) and holder.keyword is node:
                continue
            uses.setdefault(node.value, []).append(node)
    return uses


def _binds(name, parents: Dict) -> bool:
    holder = parents.get(name)
    if isinstance(holder, (cst.AssignTarget, cst.AsName, cst.NamedExpr)):
        return True
    return isinstance(holder, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)) and holder.target is name


def _arithmetic_only(call, parents: Dict, uses: Dict[str, List]) -> Optional[object]:
    """For `n = x.item()` / `n = int(x.item())` with `n` bound once and read only as an
    operand of arithmetic: the expression to replace (the call, or the `int(...)`)."""
    whole = call
    parent = parents.get(call)
    if isinstance(parent, cst.Arg):
        outer = parents.get(parent)
        if not (
            isinstance(outer, cst.Call)
            and isinstance(outer.func, cst.Name)
            and outer.func.value == "int"
            and len(outer.args) == 1
            and outer.args[0].keyword is None
            and not outer.args[0].star
        ):
            return None
        whole, parent = outer, parents.get(outer)
    if not isinstance(parent, cst.Assign) or len(parent.targets) != 1 or not isinstance(parent.targets[0].target, cst.Name):
        return None
    bindings = reads = 0
    for node in uses.get(parent.targets[0].target.value, ()):
        if _binds(node, parents):
            bindings += 1
            continue
        holder = parents.get(node)
        if not (
            isinstance(holder, cst.BinaryOperation)
            and type(holder.operator).__name__ in _ARITHMETIC
            and not _needs_host_value(holder, parents)
        ):
            return None
        reads += 1
    return whole if bindings == 1 and reads else None


_climb = climb


def _is_sink(call) -> bool:
    if not isinstance(call, cst.Call):
        return False
    func = call.func
    if isinstance(func, cst.Name):
        return func.value in _SINK_FUNCTIONS
    return isinstance(func, cst.Attribute) and func.attr.value in _SINK_METHODS


def _is_sink_string(part, parents: Dict) -> bool:
    """Whether an f-string part ends up in a logging call, also through implicit
    concatenation (`f"a {x}" f"b {y}"`) and `%` or `+` formatting."""
    holder = parents.get(parents.get(part))
    while isinstance(holder, cst.ConcatenatedString) or (
        isinstance(holder, cst.BinaryOperation) and isinstance(holder.operator, (cst.Modulo, cst.Add))
    ):
        holder = parents.get(holder)
    return isinstance(holder, cst.Arg) and _is_sink(parents.get(holder))


def _needs_host_value(expression, parents: Dict) -> bool:
    """Whether the value of an arithmetic expression ends up where only a Python number
    will do: `int(...)`, `range(...)`, `min(...)`, a comparison, a branch, an index."""
    node, parent = expression, parents.get(expression)
    while isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)):
        node, parent = parent, parents.get(parent)
    if isinstance(parent, cst.Arg):
        call = parents.get(parent)
        if not isinstance(call, cst.Call):
            return False
        if isinstance(call.func, cst.Attribute):
            return call.func.attr.value in _SIZE_ARGUMENTS
        return isinstance(call.func, cst.Name) and call.func.value in _HOST_BUILTINS
    if isinstance(parent, (cst.If, cst.While, cst.IfExp)):
        return parent.test is node
    # a result bound to another name is not followed: it may become a size or an index
    return isinstance(
        parent,
        (
            cst.Comparison, cst.ComparisonTarget, cst.Index, cst.Slice, cst.FormattedStringExpression,
            cst.Assert, cst.Assign, cst.AugAssign, cst.AnnAssign, cst.NamedExpr,
        ),
    )


def _sync_method(call) -> Optional[str]:
    """`item` for `t.item()`, `tolist`, `numpy` (`numpy(force=True)` too); None otherwise."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in SYNC_METHODS:
        return None
    if any(arg.keyword is None or arg.keyword.value != "force" for arg in call.args):
        return None
    if func.attr.value != "numpy" and call.args:
        return None
    return func.attr.value


def _after_sync(receiver) -> bool:
    """Whether a receiver already went through a sync (`x.numpy()` in `x.numpy().tolist()`):
    one value, one finding."""
    while isinstance(receiver, (cst.Call, cst.Attribute, cst.Subscript)):
        if isinstance(receiver, cst.Call):
            if _sync_method(receiver) is not None:
                return True
            receiver = receiver.func
        else:
            receiver = receiver.value
    return False


def _logged_values(nodes: Sequence, instance: Optional[str], imports) -> Dict[object, bool]:
    """Of a method's own `nodes`, the `.item()` calls given as the value to `self.log(...)` / `self.log_dict({...})`,
    except on a value that is plainly not a tensor (see `torchlint.analysis.hot_paths.plainly_host`),
    which has no `.detach()`; each with whether Lightning's progress bar reads it every
    training batch (`prog_bar=True`, not `on_step=False`)."""
    found: Dict[object, bool] = {}
    if instance is None:
        return found
    for node in nodes:
        if type(node) is not cst.Call:
            continue
        method_name = self_attribute(node.func, instance)
        if method_name not in _LOG_SIGNATURES:
            continue
        signature = _LOG_SIGNATURES[method_name]
        bar = _argument(node, signature, "prog_bar")
        step = _argument(node, signature, "on_step")
        every_batch = _is_constant(bar, "True") and not _is_constant(step, "False")
        if method_name == "log":
            values = [_argument(node, signature, "value")]
        else:
            first = _argument(node, signature, "dictionary")
            elements = first.elements if isinstance(first, cst.Dict) else ()
            values = [element.value for element in elements if isinstance(element, cst.DictElement)]
        for value in values:
            if isinstance(value, cst.Call) and _sync_method(value) == "item" and not plainly_host(value.func.value, imports):
                found[value] = every_batch
    return found


# Lightning's parameters, in order, up to those read here
_LOG_SIGNATURES = {
    "log": ("name", "value", "prog_bar", "logger", "on_step"),
    "log_dict": ("dictionary", "prog_bar", "logger", "on_step"),
}


def _argument(call, signature: Tuple[str, ...], name: str):
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    index = signature.index(name)
    return positional[index] if index < len(positional) else None


def _is_constant(node, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _sync_receiver(call):
    """The tensor an explicit sync reads (`x` in `x.item()`), or None."""
    return call.func.value if _sync_method(call) is not None else None


def _ast_is_sync(node, imports) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):  # `from torch.cuda import synchronize`
        return resolve(func.id, imports) == SYNCHRONIZE
    if not isinstance(func, ast.Attribute):
        return False
    attr = func.attr
    if attr in ("item", "tolist"):
        return not node.args and not node.keywords
    if attr == "numpy":
        return not node.args
    if attr == "synchronize":
        return resolve(ast_dotted_name(func), imports) == SYNCHRONIZE
    return False
