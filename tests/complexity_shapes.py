"""Generated inputs of size n for the complexity suite (tests/test_complexity.py) and its
time-bounded twin (bench/complexity.py): the shapes of training code that made an analysis
super-linear, and the ones that could. Each shape is a function of n that returns the
project, `{relative path: source}`; every source is code a rule's sites accept, so that
the analyses behind the rules run on it."""

from __future__ import annotations

from typing import Callable, Dict

Project = Dict[str, str]

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def _loop(body: str, indent: str = "    ") -> str:
    lines = [f"{indent}    {line}" if line else "" for line in body.splitlines()]
    return (
        f"{indent}for batch, target in loader:\n"
        f"{indent}    optimizer.zero_grad()\n"
        + "\n".join(lines)
        + f"\n{indent}    loss.backward()\n{indent}    optimizer.step()\n"
        f"{indent}    print(loss.item())\n"
    )


def rebinding_chain(n: int) -> Project:
    """`loss = loss + aux_i(batch)`, n times, in a training loop."""
    body = "loss = model(batch)\n" + "".join(f"loss = loss + aux_{i}(batch)\n" for i in range(n))
    return {"train.py": HEADER + "\n\ndef train(model, loader, optimizer):\n" + _loop(body)}


def elif_chain(n: int) -> Project:
    """A `training_step` whose n-branch `elif` chain rebinds `loss` in each branch."""
    branches = "".join(
        f"        {'if' if i == 0 else 'elif'} batch_idx == {i}:\n            loss = loss * {i + 2} + loss.mean()\n"
        for i in range(n)
    )
    return {
        "module.py": HEADER
        + "import pytorch_lightning as pl\n\n\nclass Model(pl.LightningModule):\n"
        "    def training_step(self, batch, batch_idx):\n"
        "        loss = self.net(batch).mean()\n" + branches
        + "        self.log('loss', loss.item())\n        return loss\n"
    }


def loops_in_loops(n: int) -> Project:
    """n inner loops, each reading a host value, inside one training loop."""
    body = "loss = model(batch)\n" + "".join(
        f"for part_{i} in batch:\n    loss = loss + part_{i}.sum()\n    total += part_{i}.item()\n" for i in range(n)
    )
    return {"train.py": HEADER + "\n\ndef train(model, loader, optimizer):\n    total = 0\n" + _loop(body)}


def self_call_chain(n: int) -> Project:
    """A trainer whose `train` calls `self.step_0`, which calls `self.step_1`, ... n deep."""
    methods = "".join(
        f"    def step_{i}(self, batch):\n"
        f"        value = self.model(batch) * {i}\n"
        f"        print(value.item())\n"
        + (f"        return self.step_{i + 1}(batch) + value\n\n" if i + 1 < n else "        return value\n\n")
        for i in range(n)
    )
    return {
        "trainer.py": HEADER + "\n\nclass Trainer:\n"
        "    def train(self, loader, optimizer):\n"
        "        for batch in loader:\n"
        "            loss = self.step_0(batch)\n"
        "            loss.backward()\n"
        "            optimizer.step()\n\n" + methods
    }


def module_call_chain(n: int) -> Project:
    """`steps_i.step` calls `steps_{i+1}.step`, across n modules; the loop calls the first."""
    project = {"pkg/__init__.py": ""}
    for i in range(n):
        call = f"    return steps_{i + 1}.step(model, batch) + value\n" if i + 1 < n else "    return value\n"
        imports = f"from pkg import steps_{i + 1}\n" if i + 1 < n else ""
        project[f"pkg/steps_{i}.py"] = (
            f"import torch\n{imports}\n\ndef step(model, batch):\n"
            f"    value = model(batch) * {i}\n    print(value.item())\n{call}"
        )
    project["pkg/train.py"] = (
        HEADER + "from pkg import steps_0\n\n\ndef train(model, loader, optimizer):\n"
        + _loop("loss = steps_0.step(model, batch)")
    )
    return project


def deep_hierarchy(n: int) -> Project:
    """A chain of n `nn.Module` subclasses, each building a conv and calling it in `forward`."""
    classes = "".join(
        f"class Block{i}({'nn.Module' if i == 0 else f'Block{i - 1}'}):\n"
        f"    def __init__(self):\n        super().__init__()\n        self.conv{i} = nn.Conv2d({i + 1}, {i + 2}, 3)\n\n"
        f"    def forward(self, x):\n        y = self.conv{i}(x)\n        print(y.sum().item())\n        return y\n\n\n"
        for i in range(n)
    )
    return {"model.py": HEADER + "\n\n" + classes}


def wide_hierarchy(n: int) -> Project:
    """n subclasses of one base module, each with its own forward."""
    base = "class Base(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3)\n\n\n"
    classes = "".join(
        f"class Head{i}(Base):\n    def forward(self, x):\n        y = self.conv(x) * {i}\n        print(y.max().item())\n        return y\n\n\n" for i in range(n)
    )
    return {"heads.py": HEADER + "\n\n" + base + classes}


def wide_literal(n: int) -> Project:
    """A module-level dict of n entries beside a training loop."""
    entries = "".join(f"    'layer_{i}': ({i}, {i + 1}, 'relu'),\n" for i in range(n))
    return {"config_train.py": HEADER + "\nSPEC = {\n" + entries + "}\n\n\ndef train(model, loader, optimizer):\n"
            + _loop("loss = model(batch)")}


def long_boolean(n: int) -> Project:
    """A `forward` testing a condition of n tensor reductions joined by `and`."""
    condition = " and ".join(f"x[{i}].sum() > {i}" for i in range(n))
    return {"gated.py": HEADER + "\n\nclass Gated(nn.Module):\n    def forward(self, x):\n"
            f"        if {condition}:\n            x = x * 2\n        return x\n"}


def fpn_fusions(n: int) -> Project:
    """n fusion modules, each convolving the channel-wise concatenation of its inputs."""
    modules = "".join(
        f"class Fusion{i}(nn.Module):\n    def __init__(self, width):\n        super().__init__()\n"
        f"        self.fuse = nn.Conv2d(width * {i + 2}, width, 1)\n\n"
        f"    def forward(self, features):\n        if features[0].isnan().any():\n            return features[0]\n"
        f"        return self.fuse(torch.cat(features, dim=1))\n\n\n"
        for i in range(n)
    )
    return {"fusion.py": HEADER + "\n\n" + modules}


def many_criteria(n: int) -> Project:
    """n loss criteria built in `__init__` and applied in `training_step`."""
    built = "".join(f"        self.criterion_{i} = nn.CrossEntropyLoss()\n" for i in range(n))
    used = "".join(f"        loss = loss + self.criterion_{i}(logits, target)\n" for i in range(n))
    return {
        "module.py": HEADER + "import pytorch_lightning as pl\n\n\nclass Model(pl.LightningModule):\n"
        "    def __init__(self):\n        super().__init__()\n        self.net = nn.Linear(4, 4)\n" + built
        + "\n    def training_step(self, batch, batch_idx):\n        logits, target = self.net(batch[0]), batch[1]\n"
        "        loss = 0\n" + used + "        self.log('loss', loss.item())\n        return loss\n"
    }


def summed_losses(n: int) -> Project:
    """n losses computed, then summed in one expression."""
    computed = "".join(f"loss_{i} = F.mse_loss(model(batch), target) * {i}\n" for i in range(n))
    total = "loss = " + " + ".join(f"loss_{i}" for i in range(n)) + "\n"
    return {"train.py": HEADER + "\n\ndef train(model, loader, optimizer):\n" + _loop(computed + total)}


def many_host_syncs(n: int) -> Project:
    """n `.item()` reads of logged values in one training step."""
    reads = "".join(f"metrics['m{i}'] = (loss * {i}).item()\n" for i in range(n))
    return {"train.py": HEADER + "\n\ndef train(model, loader, optimizer, metrics):\n"
            + _loop("loss = model(batch).mean()\n" + reads)}


def early_exits(n: int) -> Project:
    """A per-batch callback whose body is n blocks, each a read, an early exit on a modulo and reads
    after it (each read asks whether a periodic exit precedes it in its block)."""
    blocks = "".join(
        f"        if batch_idx > {i}:\n            print(outputs['pre_{i}'].item())\n"
        f"            if trainer.global_step % {i + 2} != 0:\n                return\n"
        f"            print(outputs['loss_{i}'].item())\n            print(outputs['aux_{i}'].item())\n"
        for i in range(n)
    )
    return {"callbacks.py": HEADER + "import lightning as L\n\n\nclass Logger(L.Callback):\n"
            "    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):\n" + blocks}


def returned_syncs(n: int) -> Project:
    """n step functions each returning `loss.item()`, each called twice from the training loop, one
    result summed and one bound to a name that is logged (each function asks for its callers' uses)."""
    steps = "".join(
        f"def step_{i}(model, batch, optimizer):\n    loss = model(batch).mean() * {i}\n    loss.backward()\n"
        f"    optimizer.step()\n    value = loss.item()\n    return value\n\n\n"
        for i in range(n)
    )
    calls = "".join(f"total += step_{i}(model, batch, optimizer)\nlast_{i} = step_{i}(model, batch, optimizer)\n"
                    f"print(last_{i})\n" for i in range(n))
    return {"train.py": HEADER + "\n\n" + steps + "def train(model, loader, optimizer):\n    total = 0.0\n"
            + _loop(calls)}


def attribute_sums(n: int) -> Project:
    """A forward summing n values into attributes of `self`, half of them then branched on (each sum asks
    whether the method reads its attribute as a host number)."""
    sums = "".join(f"        self.total_{i} += x.sum().item() * {i}\n" for i in range(n))
    branches = "".join(f"        if self.total_{i} > {i}:\n            x = x * 0.5\n" for i in range(0, n, 2))
    return {"model.py": HEADER + "\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n"
            + sums + branches + "        return x\n"}


def many_heavy_imports(n: int) -> Project:
    """n functions reading a module-level `wandb`, beside the loop that logs with it."""
    readers = "".join(f"def log_{i}(value):\n    wandb.log({{'v{i}': value}})\n\n\n" for i in range(n))
    return {"logs.py": "import wandb\n" + HEADER + "\n\n" + readers + "def train(model, loader, optimizer):\n"
            + _loop("loss = model(batch)\nlog_0(loss.detach())")}


def heavy_import_methods(n: int) -> Project:
    """A trainer whose n methods each log with a module-level `wandb` and n more that do not:
    TL001's sites are the methods that name it (torchlint/core/partial_parse.py)."""
    methods = "".join(
        f"    def log_{i}(self, value):\n        wandb.log({{'v{i}': value}})\n\n"
        f"    def scale_{i}(self, value):\n        return value * {i}\n\n"
        for i in range(n)
    )
    return {"trainer.py": "import wandb\n" + HEADER + "\n\nclass Trainer:\n" + methods
            + "    def training_step(self, batch):\n        loss = self.model(batch)\n        self.log_0(loss.detach())\n"
            + "        return loss\n"}


def rnn_double_backward(n: int) -> Project:
    """n projected LSTMs whose outputs feed a gradient penalty (a double backward)."""
    built = "".join(f"        self.rnn_{i} = nn.LSTM(8, 16, proj_size=4)\n" for i in range(n))
    used = "".join(f"        out = out + self.rnn_{i}(x)[0].sum()\n" for i in range(n))
    return {
        "gp.py": HEADER + "\n\nclass Critic(nn.Module):\n    def __init__(self):\n        super().__init__()\n" + built
        + "\n    def forward(self, x):\n        out = 0\n" + used + "        return out\n\n\n"
        "def penalty(critic, x):\n    x.requires_grad_(True)\n    out = critic(x)\n"
        "    (grad,) = torch.autograd.grad(out, x, create_graph=True)\n    return grad.norm()\n"
    }


def long_trainer(n: int) -> Project:
    """n ordinary trainer methods (a loop, a metric, a checkpoint) in one class."""
    methods = "".join(
        f"    def epoch_{i}(self, loader, epoch):\n"
        f"        for batch in loader:\n"
        f"            loss = self.model(batch).mean() * {i}\n"
        f"            loss.backward()\n"
        f"            self.optimizer.step()\n"
        f"            print(loss.item())\n"
        f"            if epoch % {i + 1} == 0:\n"
        f"                torch.save(self.model.state_dict(), 'ckpt_{i}.pt')\n\n"
        for i in range(n)
    )
    return {"trainer.py": HEADER + "\n\nclass Trainer:\n" + methods}


def site_free_methods(n: int) -> Project:
    """A trainer whose one training step reads `.item()` under settings, beside n methods
    holding no site that set those settings and the class's state (left out of the LibCST
    parse; the class's settings and CPU state are read from the stdlib ast of them all)."""
    methods = "".join(
        f"    def configure_{i}(self, options):\n"
        f"        self.flag_{i} = options.get('flag_{i}', False)\n"
        f"        self.count_{i} = torch.zeros({i + 1})\n\n"
        for i in range(n)
    )
    step = "".join(
        f"        if self.flag_{i}:\n            self.total += self.count_{i}.sum().item()\n" for i in range(n)
    )
    return {
        "trainer.py": HEADER + "\n\nclass Trainer:\n"
        "    def __init__(self, model):\n        self.model = model\n        self.total = 0.0\n\n"
        + methods
        + "    def training_step(self, batch):\n        loss = self.model(batch).mean()\n        loss.backward()\n"
        + step
        + "        return loss.item()\n"
    }


def nested_loops_forward(n: int) -> Project:
    """A `forward` with n // 8 nested `for` loops around a submodule call (each loop's body
    is walked twice: nested, 2^depth walks), beside a training loop."""
    depth = max(1, n // 8)
    loops = "".join(f"{'    ' * (i + 2)}for i{i} in range(2):\n" for i in range(depth))
    inner = "    " * (depth + 2)
    return {
        "net.py": HEADER + "\n\nclass Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv = nn.Conv2d(8, 8, 3)\n\n    def forward(self, x, skip):\n"
        "        return self.conv(torch.cat([x, skip], dim=1))\n\n\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.block = Block()\n"
        "        self.stem = nn.Conv2d(3, 8, 3)\n\n    def forward(self, x, skip):\n        x = self.stem(x)\n"
        + loops + f"{inner}x = self.block(x, x)\n{inner}x = self.stem(torch.cat([x, skip], dim=1))\n"
        "        return x\n\n\ndef train(model, loader, optimizer):\n" + _loop("loss = model(batch, batch)")
    }


def transform_aliases(n: int) -> Project:
    """n // 4 names each bound twice to the next one, the first nested in two function
    transforms (TL004's `transform_of` followed every binding of every name)."""
    chain = max(1, n // 4)
    aliases = "".join(f"    g_{i} = g_{i + 1}\n    g_{i} = g_{i + 1}\n" for i in range(chain))
    return {
        "transforms.py": HEADER + "\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.rnn = nn.LSTM(4, 4)\n\n\ndef build(fn, x):\n" + aliases
        + f"    g_{chain} = fn\n    h = torch.func.grad(torch.func.grad(g_0))\n    return h(x)\n\n\n"
        "def train(model, loader, optimizer):\n" + _loop("loss = model(batch)")
    }


def many_loads(n: int) -> Project:
    """One function with n // 2 branches of an `elif` chain, each loading a checkpoint
    and reading its `args` (each load walked the scope and every `if` of it)."""
    branches = "".join(
        f"    {'if' if i == 0 else 'elif'} kind == {i}:\n        ckpt_{i} = torch.load(args.path_{i})\n"
        f"        opts = ckpt_{i}['args']\n"
        for i in range(max(1, n // 2))
    )
    return {"restore.py": "import torch\n\n\ndef restore(args, kind):\n" + branches + "    return opts\n"}


def override_chain(n: int) -> Project:
    """A base whose step function calls `self.compute_loss`, and a chain of n subclasses,
    each overriding it with a host read (walking the bases per override would be quadratic)."""
    base = ("class Base:\n    def update(self, batch):\n        loss = self.compute_loss(batch)\n"
            "        loss.backward()\n        self.optim.step()\n\n    def compute_loss(self, batch):\n"
            "        raise NotImplementedError\n")
    subclasses = "".join(
        f"\n\nclass Impl{i}({'Impl' + str(i - 1) if i else 'Base'}):\n    def compute_loss(self, batch):\n"
        f"        return batch.sum() + batch.max().item()\n"
        for i in range(n)
    )
    return {"impls.py": "import torch\n\n\n" + base + subclasses}


def inherited_hooks(n: int) -> Project:
    """A plugin base whose per-iteration hook calls `self.update`, a chain of n subclasses
    each overriding `update` with a host read (every subclass is an origin of the hook it
    inherits), and n metrics, each a torchmetrics subclass whose `update` reads a number."""
    base = ("class Plugin:\n    def after_training_iteration(self, strategy):\n        self.update(strategy)\n\n"
            "    def update(self, strategy):\n        pass\n")
    plugins = "".join(
        f"\n\nclass Plugin{i}({'Plugin' + str(i - 1) if i else 'Plugin'}):\n    def update(self, strategy):\n"
        f"        self.losses.append(strategy.loss.item() * {i})\n"
        for i in range(n)
    )
    metrics = "".join(
        f"\n\nclass Metric{i}(Metric):\n    def update(self, preds, target):\n"
        f"        self.largest = max(self.largest, (preds - target).max().item() * {i})\n"
        for i in range(n)
    )
    return {"plugins.py": "import torch\nfrom torchmetrics import Metric\n\n\n" + base + plugins + metrics}


def class_loads(n: int) -> Project:
    """A class with n methods each loading a file, and one that saves the instance whole
    (`torch.save(self, ...)`: walking the class per load would be quadratic)."""
    methods = "".join(f"    def load_{i}(self, path):\n        return torch.load(path + '{i}')\n\n" for i in range(n))
    return {"store.py": "import torch\n\n\nclass Store:\n" + methods
            + "    def save(self, path):\n        torch.save(self, path)\n"}


def round_trips(n: int) -> Project:
    """One function annotated to return a module that saves n objects through buffers and
    loads n files, each load returned in its own branch, each kept behind a subscript of a
    call (what TL201 reads of a function must be read once per function, not per load;
    the fix's layout splits each trailing subscript once)."""
    body = "".join(
        f"    if kind == {i}:\n        buffer_{i} = io.BytesIO()\n        torch.save(obj_{i}, buffer_{i})\n"
        f"        return torch.load(buffer_{i}, map_location=the_device_we_use_for_these)[\"state_dict\"]\n"
        for i in range(n)
    )
    params = ", ".join(f"obj_{i}" for i in range(n))
    return {"trips.py": "import io\n\nimport torch\nfrom torch import nn\n\n\n"
            f"def restore(kind, the_device_we_use_for_these, {params}) -> nn.Module:\n" + body + "    return None\n"}


def local_criteria(n: int) -> Project:
    """n criteria built and applied in a training loop, the losses summed (each criterion
    call collected the whole function again to resolve its instance)."""
    body = "out = model(batch)\n" + "".join(
        f"crit_{i} = nn.CrossEntropyLoss()\nloss_{i} = crit_{i}(out, target)\n" for i in range(n)
    ) + "loss = " + " + ".join(f"loss_{i}" for i in range(n)) + "\n"
    return {"train.py": HEADER + "\n\ndef train(model, loader, optimizer):\n" + _loop(body)}


def rnn_penalty_chain(n: int) -> Project:
    """An LSTM model passed through f_0 .. f_{n-1}, each taking a gradient penalty
    (TL004 scanned every call of the file for each function's parameter it followed)."""
    functions = "".join(
        f"def f_{i}(model, x):\n    out = model(x).sum()\n"
        f"    g = torch.autograd.grad(out, x, create_graph=True)[0]\n"
        + (f"    return f_{i + 1}(model, x) + g.sum()\n\n\n" if i + 1 < n else "    return g.sum()\n\n\n")
        for i in range(n)
    )
    return {
        "penalty.py": HEADER + "\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.rnn = nn.LSTM(4, 4)\n\n    def forward(self, x):\n        return self.rnn(x)[0]\n\n\n"
        + functions + "net = Net()\npenalty = f_0(net, torch.randn(3, 4, requires_grad=True))\n"
    }


def function_call_chain(n: int) -> Project:
    """A training loop calling f_0, f_i calling f_{i+1}, the last one stepping (the step
    owners were found one caller per pass over every owner)."""
    functions = "".join(
        f"def f_{i}(model, batch, optimizer):\n    value = model(batch) * {i}\n    print(value.item())\n"
        + (f"    return f_{i + 1}(model, batch, optimizer)\n\n\n" if i + 1 < n
           else "    value.sum().backward()\n    optimizer.step()\n    return value\n\n\n")
        for i in range(n)
    )
    return {
        "chain.py": HEADER + "\n\n" + functions + "def train(model, loader, optimizer):\n"
        "    for batch in loader:\n        f_0(model, batch, optimizer)\n"
    }


def sibling_loops(n: int) -> Project:
    """n loops in an epoch loop, each stepping in a branch (whether a loop was hot was
    asked again of every later loop, for every call)."""
    loops = "".join(
        f"        for b in loaders[{i}]:\n            loss = model(b)\n            if loss is not None:\n"
        f"                loss.backward()\n                optimizer.step()\n            print(loss.item())\n"
        for i in range(n)
    )
    return {"epochs.py": HEADER + "\n\ndef train(model, loaders, optimizer):\n    for epoch in range(10):\n" + loops}


def local_builders(n: int) -> Project:
    """n functions, each importing torchvision's models in its own body and building one with
    `pretrained=True`, nested two deep every other time (TL204: which imports each call sees)."""
    functions = "".join(
        f"def build_{i}():\n    import torchvision.models as models\n\n    return models.resnet18(pretrained=True)\n\n\n"
        if i % 2 else
        f"def outer_{i}():\n    import torchvision\n\n    def build():\n        from torchvision import models\n\n"
        f"        return models.resnet18(pretrained=True)\n\n    return build\n\n\n"
        for i in range(n)
    )
    return {"builders.py": HEADER + "\n\n" + functions}


def many_accumulators(n: int) -> Project:
    """n `running_i += out[i].item()` in a training loop, each set to 0.0 before it and all
    printed after it (TL003's accumulation fix: where each name is read)."""
    init = "".join(f"    running_{i} = 0.0\n" for i in range(n))
    body = "out = model(batch)\nloss = out.sum()\n" + "".join(f"running_{i} += out[{i}].item()\n" for i in range(n))
    total = "    print(" + " + ".join(f"running_{i}" for i in range(n)) + ")\n"
    return {"train.py": HEADER + "\n\ndef train(model, loader, optimizer):\n" + init + _loop(body) + total}


def long_boolean_or(n: int) -> Project:
    """A `forward` testing n tensor reductions joined by `or` (each operand a finding of
    TL005 that names the test), beside an `and` chain of n shape tests."""
    ors = " or ".join("x.any()" if i % 2 else f"x.sum() > {i}" for i in range(n))
    ands = " and ".join(f"x.shape[{i % 4}] > 0" for i in range(n))
    return {"gated_or.py": HEADER + "\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.conv = nn.Conv2d(3, 8, 3)\n\n    def forward(self, x):\n"
            f"        if {ors}:\n            x = x * 2\n"
            f"        if self.training and {ands}:\n            x = x + 1\n        return self.conv(x)\n"}


def rebound_host_values(n: int) -> Project:
    """One name bound n times to a synced value (`value = out[i].item()`, then an operand
    of arithmetic that is recorded), and a loss whose n host values `k = int(...item())`
    size a `topk` (TL003: where each bound value goes)."""
    body = "out = model(batch)\nloss = out.sum()\n" + "".join(
        f"value = out[{i}].item()\nstats.append(value * 2)\n" for i in range(n)
    )
    ranks = "".join(
        f"        k = int(scores[{i}].sum().item())\n        parts.append(scores.topk(k)[0].sum())\n" for i in range(n)
    )
    return {"values.py": HEADER + "\n\ndef train(model, loader, optimizer, stats):\n" + _loop(body)
            + "\n\nclass RankLoss(nn.Module):\n    def forward(self, scores, target):\n        parts = []\n"
            + ranks + "        return sum(parts)\n"}


def many_nonzero(n: int) -> Project:
    """A `forward` with n `idx_i = torch.nonzero(mask > i)`, each iterated by a `for`
    (TL005: a data-dependent result feeding control flow)."""
    body = "".join(
        f"        idx_{i} = torch.nonzero(mask > {i})\n        for j in idx_{i}:\n            x = x + j\n" for i in range(n)
    )
    return {"nonzero.py": HEADER + "\n\nclass Net(nn.Module):\n    def forward(self, x, mask):\n" + body
            + "        return x\n"}


def forward_many_inputs(n: int) -> Project:
    """`forward(self, x_0, ..., x_{n-1})`: every other input shape-checked by an `assert`,
    each convolved; with `check-parameters` (TL002: which inputs a check covers)."""
    params = ", ".join(f"x_{i}" for i in range(n))
    body = "".join(
        (f"        assert x_{i}.shape[1] == 3\n" if i % 2 == 0 else "")
        + f"        y_{i} = self.conv(x_{i})\n"
        for i in range(n)
    )
    total = "        return " + " + ".join(f"y_{i}" for i in range(n)) + "\n"
    return {"pyproject.toml": "[tool.torchlint.unvalidated-conv-input]\ncheck-parameters = true\n",
            "inputs.py": HEADER + "\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.conv = nn.Conv2d(3, 8, 3)\n\n" f"    def forward(self, {params}):\n" + body + total}


def deprecated_head_uses(n: int) -> Project:
    """n uses of `amp.autocast()` after `from torch.cuda import amp`, at target torch 2.4:
    every rewrite leaves `amp` unread, so each use's fix rewrites every use and drops the
    import (TL102)."""
    uses = "".join(f"    with amp.autocast():\n        out_{i} = model(x[{i}])\n" for i in range(n))
    return {
        "pyproject.toml": "[tool.torchlint]\ntarget-torch = \"2.4\"\n",
        "amp_step.py": "import torch\nfrom torch.cuda import amp\n\n\ndef step(model, x):\n" + uses + "    return x\n",
    }


def nested_guards(n: int) -> Project:
    """n compatibility guards nested in one another, by turns a version test that overrides
    a default and a `try` that imports from torch with an `except ImportError` fallback
    (their guarded code comes first, what shows them guards last), beside a non-public API
    (compatibility guards of TL101-TL103; TL201/TL209's `weights_only` fallbacks)."""

    def level(i: int) -> list:
        pad = "    " * (i + 1)
        if i == n:
            return [f"{pad}state = load(path)"]
        if i % 2 == 0:
            return [f"{pad}load_{i} = torch.load", f"{pad}if torch.__version__ >= '2.{i}':", *level(i + 1),
                    f"{pad}    load_{i} = torch.load"]
        return [f"{pad}try:", *level(i + 1), f"{pad}    import torch.nn as nn_{i}",
                f"{pad}    ckpt_{i} = torch.load(path, weights_only=False)",
                f"{pad}except ImportError:", f"{pad}    ckpt_{i} = torch.load(path)"]

    lines = ["import torch", "", "", "def restore(path):", "    load = torch.load", *level(0), "    return load"]
    outer = "\n\n\ndef convert(batch):\n    return torch.utils.data._utils.collate.default_convert(batch)\n"
    return {"guards.py": "\n".join(lines) + outer}

def critics_across_files(n: int) -> Project:
    """n LSTM critics, each built in one module and passed to its own gradient penalty in
    another (the project pass looked for the function each critic class names by a scan
    of every function of the tree)."""
    critics = "".join(
        f"class Critic{i}(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        f"        self.rnn = nn.LSTM(4, 4)\n\n    def forward(self, x):\n        return self.rnn(x)[0]\n\n\n"
        for i in range(n)
    )
    calls = "".join(f"    total = total + penalty_{i}(Critic{i}(), x)\n" for i in range(n))
    penalties = "".join(
        f"def penalty_{i}(model, x):\n    out = model(x).sum()\n"
        f"    (grad,) = torch.autograd.grad(out, x, create_graph=True)\n    return grad.norm()\n\n\n"
        for i in range(n)
    )
    return {
        "gan/__init__.py": "",
        "gan/penalties.py": HEADER + "\n\n" + penalties,
        "gan/critics.py": HEADER + "from gan.penalties import " + ", ".join(f"penalty_{i}" for i in range(n))
        + "\n\n\n" + critics + "def run(x):\n    total = 0\n" + calls + "    return total\n",
    }


def hard_negative_mining(n: int) -> Project:
    """A loss with n rounds of hard-negative mining: chained counts, one name selected n times
    (TL003's mining fix rewrites them all)."""
    rounds = "".join(
        f"        k_{i} = min(int(masks[{i}].sum().item()), int(k_{i - 1} * 3)) + 0 * k_{i - 1}\n"
        f"        hard, _ = loss.view(-1).topk(k_{i})\n"
        f"        total = total + hard.mean() / max(k_{i}, 1)\n"
        for i in range(1, n)
    )
    return {"losses.py": HEADER + "\n\nclass MiningLoss(nn.Module):\n    def forward(self, loss, masks):\n"
            "        total = loss.sum() * 0\n        k_0 = int(masks[0].sum().item())\n" + rounds + "        return total\n"}


def submodule_losses(n: int) -> Project:
    """A policy calling `loss_fn` on n heads built in `__init__`, each with a host count."""
    heads = "".join(
        f"class Head{i}(nn.Module):\n    def forward(self, x):\n        return x\n\n"
        f"    def loss_fn(self, x, y):\n        valid = int((y >= {i}).sum().item())\n"
        f"        return (x - y).abs().sum() / max(valid, 1)\n\n\n"
        for i in range(n)
    )
    built = "".join(f"        self.head_{i} = Head{i}()\n" for i in range(n))
    used = "".join(f"        loss = loss + self.head_{i}.loss_fn(x, batch)\n" for i in range(n))
    return {"policy.py": HEADER + "import lightning as L\n\n\n" + heads
            + "class Policy(L.LightningModule):\n    def __init__(self):\n        super().__init__()\n" + built
            + "\n    def training_step(self, batch, batch_idx):\n        x = self.head_0(batch)\n        loss = 0\n"
            + used + "        return loss\n"}


def accumulation_branches(n: int) -> Project:
    """n modulo branches nested in one another in a training loop, each reading a host value, the
    innermost stepping the optimizer (each read asks whether its branches step the optimizer)."""
    body = "".join(
        f"{'    ' * (i + 2)}if (i + 1) % {i + 2} == 0:\n{'    ' * (i + 3)}print(out[{i}].item())\n" for i in range(n)
    )
    return {"train.py": HEADER + "\n\ndef train(model, loader, optimizer):\n    for i, batch in enumerate(loader):\n"
            "        out = model(batch)\n        out.sum().backward()\n" + body + "    " * (n + 2) + "optimizer.step()\n"}


def overridden_steps(n: int) -> Project:
    """A base whose training loop calls `self.train_step` and reads its result, and a chain of n
    subclasses in another file, each overriding it with a backward pass and an optimizer step
    (climbing the bases from each override would be quadratic)."""
    base = ("class Agent:\n    def train_epoch(self, loader):\n        for batch in loader:\n"
            "            self.losses.append(self.train_step(batch).item())\n")
    subclasses = "".join(
        f"\n\nclass Impl{i}({'Impl' + str(i - 1) if i else 'Agent'}):\n    def train_step(self, batch):\n"
        f"        loss = self.model(batch).sum() * {i}\n        loss.backward()\n        self.optim.step()\n"
        "        return loss\n"
        for i in range(n)
    )
    return {"agent.py": "import torch\n\n\n" + base, "impls.py": "import torch\n\nfrom agent import Agent\n" + subclasses}


def override_helpers(n: int) -> Project:
    """A base stepping in its step function through `self.calculate_loss`, imported through its package's
    `__init__`, and a chain of n subclasses each overriding it with a call to a helper of its own that reads
    a number (each helper is reached up its callers to the override)."""
    base = ("class Trainer:\n    def train_step(self, batch):\n        loss = self.calculate_loss(batch)\n"
            "        loss.backward()\n        self.optim.step()\n\n    def calculate_loss(self, batch):\n"
            "        return batch.sum()\n")
    subclasses = "".join(
        f"\n\nclass Impl{i}({'Impl' + str(i - 1) if i else 'Trainer'}):\n    def calculate_loss(self, batch):\n"
        f"        self._track_{i}(batch)\n        return batch.sum() * {i}\n\n    def _track_{i}(self, batch):\n"
        f"        self.seen.append(batch.max().item())\n"
        for i in range(n)
    )
    return {"pkg/__init__.py": "from pkg.trainer import Trainer\n", "pkg/trainer.py": "import torch\n\n\n" + base,
            "impls.py": "import torch\n\nfrom pkg import Trainer\n" + subclasses}


def conditional_accumulators(n: int) -> Project:
    """n sums each started on the first step, `total_i = x.item() if total_i is None else total_i + x.item()`,
    in a training loop (TL003's accumulation read through a conditional expression)."""
    init = "".join(f"    total_{i} = None\n" for i in range(n))
    body = "out = model(batch)\nloss = out.sum()\n" + "".join(
        f"total_{i} = out[{i}].item() if total_{i} is None else total_{i} + out[{i}].item()\n" for i in range(n)
    )
    total = "    return " + " + ".join(f"total_{i}" for i in range(n)) + "\n"
    return {"train.py": HEADER + "\n\ndef train(model, loader, optimizer):\n" + init + _loop(body) + total}


def logging_routines(n: int) -> Project:
    """A trainer whose step hands n synced values to its own logging routines, `self._log_head_i_metrics(...)`
    (each a sink of TL003 by its name), every routine defined on the class."""
    calls = "".join(f"        self._log_head_{i}_metrics(step, out[{i}].item())\n" for i in range(n))
    routines = "".join(
        f"    def _log_head_{i}_metrics(self, step, value):\n        self.writer.add_scalar('m{i}', value, step)\n\n"
        for i in range(n)
    )
    return {"trainer.py": HEADER + "\n\nclass Trainer:\n    def train(self, loader):\n"
            "        for step, batch in enumerate(loader):\n            self.train_step(step, batch)\n\n"
            "    def train_step(self, step, batch):\n        out = self.model(batch)\n        loss = out.sum()\n"
            "        loss.backward()\n        self.optimizer.step()\n" + calls + "\n" + routines}


def recorded_returns(n: int) -> Project:
    """An agent whose `learn`, called nowhere in its file, rebinds `loss` to its number n times, logging it each
    time, and returns the last (TL003: each read classified once, up to the next binding)."""
    steps = "".join(
        f"        loss = self.nets[{i}](batch).mean()\n        loss.backward()\n        self.optimizer.step()\n"
        f"        loss = loss.item()\n        self.metrics.log('loss_{i}', loss)\n"
        for i in range(n)
    )
    return {"agent.py": HEADER + "\n\nclass Agent:\n    def learn(self, batch):\n" + steps + "        return loss\n"}


def handed_back_numbers(n: int) -> Project:
    """An agent's `update`, called nowhere in its file, that reads n parts of its batch through `enumerate`,
    None-checks each, and returns n synced numbers (TL003: the training-step test once per method, each
    number climbed once; the data reads each followed once)."""
    reads = "".join(
        f"        for k_{i}, part_{i} in enumerate(batch[{i}]):\n            if part_{i} is not None:\n"
        f"                self.seen_{i} += part_{i}.sum()\n"
        for i in range(n)
    )
    returned = ", ".join(f"-self.nets[{i}](batch).mean().item()" for i in range(n))
    return {
        "agent.py": HEADER + "\n\nclass Agent:\n    def update(self, batch):\n" + reads
        + "        loss = self.net(batch).mean()\n        loss.backward()\n        self.optimizer.step()\n"
        + f"        return {returned}\n"
    }


def builders_by_name(n: int) -> Project:
    """n torchvision builders called through `getattr` on torchvision's models, every other one by a literal
    name (TL204: each call's builder resolved from its `getattr`)."""
    calls = "".join(
        f"    m_{i} = getattr(models, {repr('resnet18') if i % 2 else f'arch_{i}'})(pretrained=True)\n" for i in range(n)
    )
    arguments = ", ".join(f"arch_{i}" for i in range(0, n, 2))
    return {"builders.py": "import torchvision.models as models\n\n\n" f"def build({arguments}):\n" + calls
            + "    return locals()\n"}

def built_parts(n: int) -> Project:
    """A trainer whose `__init__` builds n parts of n classes and whose batch loop calls each part's
    method (`self.part_i.score(batch)`) and steps its optimizers in a loop of their own: each call
    resolved through what `__init__` builds, each part's `.item()` reached from the loop."""
    parts = "".join(
        f"class Part{i}:\n    def score(self, batch):\n        value = self.net(batch).mean()\n"
        f"        self.stats.append(value.item())\n        return value\n\n\n"
        for i in range(n)
    )
    built = "".join(f"        self.part_{i} = Part{i}()\n" for i in range(n))
    called = "".join(f"            loss = loss + self.part_{i}.score(batch)\n" for i in range(n))
    return {
        "trainer.py": HEADER + "\n\n" + parts + "class Trainer:\n    def __init__(self):\n" + built
        + "\n    def fit(self, loader, optimizers):\n        for batch in loader:\n            loss = 0\n"
        + called + "            loss.backward()\n            for optimizer in optimizers:\n"
        "                optimizer.step()\n"
    }


def queued_rereads(n: int) -> Project:
    """n tensors tested on the host, then n backward passes each in a branch, each followed by a read of one
    of them again (a backward pass starts a new epoch of what was read: the read after it waits for it)."""
    tests = "".join(
        f"part_{i} = out[{i}].sum()\nif torch.isnan(part_{i}):\n    raise ValueError('nan')\n" for i in range(n)
    )
    rereads = "".join(
        f"if batch.sum() > {i}:\n    part_{i}.backward(retain_graph=True)\nstats.append(part_{i}.item())\n"
        for i in range(n)
    )
    body = "out = model(batch)\nloss = out.sum()\n" + tests + rereads
    return {"rereads.py": HEADER + "\n\ndef train(model, loader, optimizer, stats):\n" + _loop(body)}


def named_by_left_out_methods(n: int) -> Project:
    """A trainer whose training step reads `.item()` beside n methods without a site, each naming a
    helper class of its own; each helper names the next, and a module-level map names them all (the
    partial parse asks which definitions the parsed code names, transitively)."""
    helpers = "".join(
        f"class Helper{i}(nn.Module):\n    def forward(self, x):\n        return {f'Helper{i + 1}()(x)' if i + 1 < n else 'x'}\n\n\n"
        for i in range(n)
    )
    methods = "".join(f"    def build_{i}(self):\n        return Helper{i}()\n\n" for i in range(n))
    registry = "HELPERS = {" + ", ".join(f"'h{i}': Helper{i}" for i in range(n)) + "}\n\n\n"
    trainer = (
        "class Trainer:\n" + methods + "    def training_step(self, batch, optimizer):\n"
        "        loss = self.model(batch).mean()\n        loss.backward()\n        optimizer.step()\n"
        "        self.history.append(loss.item())\n"
    )
    return {"trainer.py": HEADER + "\n\n" + helpers + registry + trainer}


def nested_recorded_choices(n: int) -> Project:
    """A stats dict entry chosen by n nested conditional expressions, each arm a `.item()`, and a list of
    n reads given to a recorder (each read climbs through the conditionals above it)."""
    choice = "stats['loss'] = " + "".join(f"part_{i}.item() if flag_{i} else (" for i in range(n)) + "0.0" + ")" * n
    listed = "metrics.update([" + ", ".join(f"part_{i}.item()" for i in range(n)) + "])"
    parts = "".join(f"part_{i} = loss * {i}\n" for i in range(n))
    return {"choices.py": HEADER + "\n\ndef train(model, loader, optimizer, metrics, stats, "
            + ", ".join(f"flag_{i}" for i in range(n)) + "):\n"
            + _loop("loss = model(batch).mean()\n" + parts + choice + "\n" + listed)}


def instance_steps(n: int) -> Project:
    """A learner with n steps each returning a tuple of `.item()` numbers, called on an instance a setup
    method builds (`self.learner = Learner(...)`), the tuple unpacked and summed, and n routines of the
    file that only print and log, each given one part (each step asks for its calls on the instance,
    each read for the file's routines)."""
    steps = "".join(
        f"    def update_{i}(self, batch):\n        loss = self.model(batch.to('cuda')).mean() * {i}\n"
        f"        loss.backward()\n        self.optimizer.step()\n        return loss.item(), loss.sum().item()\n\n"
        for i in range(n)
    )
    routines = "".join(
        f"    def _printlog_{i}(self, message):\n        if self.verbose:\n            print(message)\n"
        f"        self.logger.info(message)\n\n"
        for i in range(n)
    )
    calls = "".join(
        f"loss_{i}, sum_{i} = self.learner.update_{i}(batch)\ntotal += loss_{i}\n"
        f"self._printlog_{i}(fmt.format(sum_{i}))\n"
        for i in range(n)
    )
    learner = "class Learner:\n    def __init__(self, model, optimizer):\n        self.model = model\n" \
        "        self.optimizer = optimizer\n\n" + steps
    pipeline = "class Pipeline:\n" + routines + "    def setup(self, model, optimizer):\n" \
        "        self.learner = Learner(model, optimizer)\n\n    def train(self, loader, fmt):\n        total = 0.0\n" \
        + _loop(calls, "        ")
    return {"pipeline.py": HEADER + "\n\n" + learner + "\n" + pipeline}


def hook_dispatch(n: int) -> Project:
    """A loop that calls its hooks by name (`self.call_hook("after_step")`, and n events `event_i`), n hook
    classes each with an `after_step` reading `.item()` and its own `event_i`, the first one stepping (each
    name called so stands for every method of that name)."""
    hooks = "".join(
        f"class Hook{i}:\n    def after_step(self, algorithm):\n        print(algorithm.loss.item() * {i})\n"
        + ("        algorithm.loss.backward()\n        algorithm.optimizer.step()\n" if i == 0 else "")
        + f"\n    def event_{i}(self, algorithm):\n        print(algorithm.loss.sum().item())\n\n\n"
        for i in range(n)
    )
    events = "".join(f"self.call_hook('event_{i}')\n" for i in range(n))
    loop = "class Algorithm:\n    def train(self, loader):\n        for batch in loader:\n" + "".join(
        f"            {line}\n" for line in ("self.loss = self.model(batch).mean()", "self.call_hook('after_step')",
                                            *events.splitlines())
    )
    return {"hooks.py": HEADER + "\n\n" + hooks, "algorithm.py": HEADER + "\n\n" + loop}


def periodic_helpers(n: int) -> Project:
    """A training loop with n interval branches, each calling its own logging helper and nesting a
    logging-switch branch, the innermost n-deep chain of them stepping the optimizer (each branch is
    tested once, each training call marks the branches around it once), a test of n negated switches, and a
    Lightning step calling n
    helpers on `self` the same way; each helper reads `.item()`."""
    nested = "".join(f"{'    ' * i}if step % {i + 2} == 0:\n{'    ' * i}    self._log_{i}(loss)\n" for i in range(n))
    branches = nested + "    " * n + "optimizer.step()\n"
    branches += "".join(f"if self.verbose_{i}:\n    self._plot_{i}(loss)\n" for i in range(n))
    # one test of n parts, each negating a switch (each part's kind is found once)
    branches += "if " + " and ".join(f"not self.debug_{i}" for i in range(n)) + ":\n    self._log_0(loss)\n"
    body = "loss = model(batch)\nloss.backward()\n" + branches
    loop = "    def fit(self, model, loader, optimizer):\n        for step, batch in enumerate(loader):\n" + "".join(
        f"            {line}\n" for line in body.splitlines()
    )
    helpers = "".join(
        f"    def _{kind}_{i}(self, loss):\n        print(loss.item() * {i})\n\n"
        for i in range(n)
        for kind in ("log", "plot")
    )
    step = "    def training_step(self, batch, batch_idx):\n        loss = self.model(batch)\n" + "".join(
        f"        if self.global_step % {i + 2} == 0:\n            self._log_{i}(loss)\n" for i in range(n)
    ) + "        return loss\n\n"
    trainer = "class Trainer:\n" + loop + "\n" + helpers
    lightning = "import pytorch_lightning as pl\n\n\nclass Lit(pl.LightningModule):\n" + step + helpers
    return {"trainer.py": HEADER + "\n\n" + trainer, "lit.py": HEADER + lightning}


SHAPES: Dict[str, Callable[[int], Project]] = {
    shape.__name__: shape
    for shape in (
        rebinding_chain, elif_chain, loops_in_loops, self_call_chain, module_call_chain, deep_hierarchy,
        wide_hierarchy, wide_literal, long_boolean, fpn_fusions, many_criteria, summed_losses, many_host_syncs,
        many_heavy_imports, rnn_double_backward, long_trainer, nested_loops_forward, transform_aliases, many_loads,
        local_criteria, rnn_penalty_chain, function_call_chain, sibling_loops, many_accumulators, long_boolean_or,
        rebound_host_values, many_nonzero, forward_many_inputs, deprecated_head_uses, nested_guards,
        critics_across_files, hard_negative_mining, submodule_losses, class_loads, override_chain, early_exits,
        returned_syncs, attribute_sums, inherited_hooks, accumulation_branches, overridden_steps,
        override_helpers, round_trips, local_builders, conditional_accumulators, logging_routines,
        builders_by_name, recorded_returns, handed_back_numbers, site_free_methods, heavy_import_methods,
        built_parts, queued_rereads, named_by_left_out_methods, nested_recorded_choices, instance_steps,
        hook_dispatch, periodic_helpers,
    )
}
