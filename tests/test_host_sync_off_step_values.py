"""TL003 through the real CLI: blocks that do not run on every step (settings, run-once
initialisation, None-checks of what the step made), dicts handed to plain functions, a
second read of a tensor already read, Lightning's progress bar reading `prog_bar=True`
values every training batch, and a linear pass over a method with thousands of `.item()`
calls."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest

from test_host_sync_across_files import check, configure
from cli_support import write_tree
from flake8_support import run_flake8


def rows(root: Path) -> list:
    return [d["location"]["row"] for d in check(root, "--select", "TL003")]


RARE_BLOCKS = (
    "from torch import nn\n\n\nclass Miner(nn.Module):\n"
    "    def __init__(self, collect_stats=None, cfg=None, use_l1=True):\n        super().__init__()\n"
    "        self.collect_stats = False if collect_stats is None else collect_stats\n"
    "        self.log_stats = getattr(cfg, 'log_stats', False)\n"
    "        self.proj = nn.Linear(2, 2)\n        self.warm = False\n        self._iter = -1\n"
    "        self.use_l1 = use_l1\n\n"
    "    def forward(self, x, mask=None):\n"
    "        if self.collect_stats:\n            self.avg = x.mean().item()\n"  # 16: a setting
    "        if self.log_stats and x.dim() > 1:\n            self.norm = x.norm().item()\n"  # 18: a setting, and ...
    "        if self._iter == -1:\n            self._iter = int(x.sum().item())\n"  # 20: runs once
    "        for table, ids in self.evict(x).items():\n"
    "            if ids is not None:\n                print(ids.max().item())\n"  # 23: a loop value's None-check
    "        if mask is not None:\n            print(mask.sum().item())\n"  # 25: a parameter: every step
    "        if self.training:\n            print(x.max().item())\n"  # 27: nn.Module's flag: every step
    "        if self.warm:\n            print(x.min().item())\n"  # 29: changed by the step: every step
    "        self.warm = True\n"
    "        if self.proj:\n            print(x.std().item())\n"  # 32: a layer, no setting
    "        if self.collect_stats:\n            pass\n        else:\n            print(x.var().item())\n"  # 36: a setting's usual path
    "        if self.use_l1:\n            print(x.abs().mean().item())\n"  # 38: on by default: every step
    "        return x\n"
)


def test_settings_run_once_blocks_and_none_checks_of_step_values_are_off_step_by_default(tmp_path):
    root = write_tree(tmp_path, {"miner.py": RARE_BLOCKS})
    assert rows(root) == [25, 27, 29, 32, 36, 38]
    configure(root, check_periodic_branches=True)
    assert rows(root) == [16, 18, 20, 23, 25, 27, 29, 32, 36, 38]


def test_a_setting_inherited_from_a_base_in_another_file_is_a_setting(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/records.py": (
            "from torch import nn\n\n\nclass WithRecords(nn.Module):\n"
            "    def __init__(self, collect_stats=None):\n        super().__init__()\n"
            "        self.collect_stats = COLLECT_STATS if collect_stats is None else collect_stats\n"
        ),
        "pkg/distance.py": (
            "import torch\nfrom .records import WithRecords\n\n\nclass Distance(WithRecords):\n"
            "    def forward(self, q, r):\n        self.set_default_stats(q, r)\n        return q @ r.T\n\n"
            "    def set_default_stats(self, q, r):\n        if self.collect_stats:\n"
            "            with torch.no_grad():\n                self.q_norm = torch.mean(q.norm(dim=1)).item()\n"
        ),
    }
    root = write_tree(tmp_path, files)
    assert rows(root) == []
    configure(root, check_periodic_branches=True)
    assert rows(root) == [13]


def test_a_dict_handed_to_a_plain_function_is_its_input_not_a_record(tmp_path):
    text = (
        "import wandb\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def forward(self, x, writer):\n"
        "        to_record({'input': x.cpu().numpy()})\n"  # 7: a plain function's input
        "        wandb.log({'loss': x.sum().item()})\n"  # 8: logged
        "        writer.add_scalars('m', dict(mean=x.mean().item()))\n"  # 9: logged
        "        record(dict(mx=x.max().item()))\n"  # 10: a plain function's input
        "        stats = dict(mn=x.min().item())\n"  # 11: a stats dict, kept
        "        return x, {'std': x.std().item()}, stats\n"  # 12: a stats dict, returned
    )
    root = write_tree(tmp_path, {"m.py": text})
    assert rows(root) == [8, 9, 11, 12]
    configure(root, check_host_values=True)
    assert rows(root) == [7, 8, 9, 10, 11, 12]


def test_a_tensor_already_read_in_the_step_is_not_reported_again(tmp_path):
    text = (
        "import torch\nimport lightning as L\n\n\nclass Forecast(L.LightningModule):\n"
        "    def validation_step(self, batch, batch_idx):\n        loss = self(batch)\n"
        "        if torch.isnan(loss):\n            raise ValueError('NaN loss')\n"
        "        self.log('val_loss', loss.item())\n"  # 10: read by the NaN check already
        "        out = self(batch).mean()\n        self.log('a', out.item())\n"  # 12: first read
        "        self.log('b', out.item())\n"  # 13: second read
        "        out.mul_(2)\n        self.log('c', out.item())\n"  # 15: changed in place: read again
        "        if batch_idx:\n            self.log('d', batch.sum().item())\n"  # 17: first read, in a branch
        "        total = batch.sum()\n        if batch_idx > 1:\n            print(total.item())\n"  # 20: in a branch
        "        print(total.item())\n"  # 21: the branch may not have run
        "        total = total * 2\n        print(total.item())\n"  # 23: rebound: read again
        "        return loss\n"
    )
    assert rows(write_tree(tmp_path, {"m.py": text})) == [12, 15, 17, 20, 21, 23]


def test_a_cast_around_a_sync_is_no_earlier_read_of_its_tensor(tmp_path):
    """`float(loss.item() / n)`: the cast reads what the sync inside it returns, not the tensor before it
    (lightweight-gan's trainer stores `float(total_disc_loss.item() / n)` on every step)."""
    text = (
        "class Trainer:\n    def train(self, model, batch, optimizer, n):\n"
        "        loss = model(batch)\n        loss.backward()\n        optimizer.step()\n"
        "        self.d_loss = float(loss.item() / n)\n"  # 6: the first read
        "        self.g_loss = float(loss.item())\n"  # 7: a second read
    )
    assert rows(write_tree(tmp_path, {"m.py": text})) == [6]



def test_a_detached_copy_of_a_tensor_already_read_is_no_new_read(tmp_path):
    """A gradient penalty tested for NaN, then logged as `gp.clone().detach().item()`: the test has waited for `gp`;
    a copy of it holds the same values. A computed value (`gp.mean()`) is read afresh."""
    text = (
        "import torch\n\n\nclass Trainer:\n    def train(self, model, batch, optimizer):\n"
        "        gp = model(batch)\n"
        "        if torch.isnan(gp):\n            raise ValueError('NaN penalty')\n"  # 7: the first read (a check)
        "        self.gp = gp.clone().detach().item()\n"  # 9: the same values again
        "        self.mean = gp.mean().item()\n"  # 10: a new value
        "        gp.backward()\n        optimizer.step()\n"
    )
    assert rows(write_tree(tmp_path, {"m.py": text})) == [10]

LIGHTNING = (
    "import lightning as L\n\n\nclass M(L.LightningModule):\n"
    "    def training_step(self, batch, batch_idx):\n        loss = self(batch)\n"
    "        self.log('train_loss', loss.item(), prog_bar=True)\n"  # 7: the bar reads it every batch
    "        self.log('train_epoch', batch.sum().item(), prog_bar=True, on_step=False, on_epoch=True)\n"  # 8
    "        self.log_dict({'g': batch.mean().item()}, prog_bar=True)\n"  # 9: the bar reads it
    "        self._shared(batch)\n        self._train_only(batch)\n        return loss\n\n"
    "    def validation_step(self, batch, batch_idx):\n        loss = self(batch)\n"
    "        self.log('val_loss', loss.item(), prog_bar=True)\n"  # 16: read at the epoch's end only
    "        self._shared(batch)\n        return loss\n\n"
    "    def _shared(self, batch):\n        self.log('s', batch.max().item(), prog_bar=True)\n\n"  # 21: validation too
    "    def _train_only(self, batch):\n        self.log('t', batch.min().item(), prog_bar=True)\n"  # 24
)


def test_progress_bar_values_are_reported_only_where_the_bar_does_not_read_them_every_batch(tmp_path):
    found = check(write_tree(tmp_path, {"m.py": LIGHTNING}), "--select", "TL003")
    assert [d["location"]["row"] for d in found] == [8, 16, 21]
    assert all("detach" in d["fix"]["edits"][0]["content"] for d in found)


@pytest.mark.slow
def test_flake8_reports_the_same_progress_bar_values(tmp_path):
    write_tree(tmp_path, {"m.py": LIGHTNING})
    result = run_flake8("--select", "TL003", "m.py", cwd=tmp_path)
    assert [int(line.split(":")[1]) for line in result.stdout.splitlines()] == [8, 16, 21], result.stderr


def test_progress_bar_values_of_a_helper_in_another_file_follow_its_callers(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/base.py": (
            "import lightning as L\n\n\nclass Base(L.LightningModule):\n"
            "    def _log_loss(self, loss):\n        self.log('loss', loss.item(), prog_bar=True)\n"
        ),
        "pkg/train_only.py": (
            "from .base import Base\n\n\nclass TrainOnly(Base):\n"
            "    def training_step(self, batch, batch_idx):\n        loss = self(batch)\n"
            "        self._log_loss(loss)\n        return loss\n"
        ),
    }
    root = write_tree(tmp_path, files)
    assert rows(root) == []
    (root / "pkg/validates.py").write_text(
        "from .base import Base\n\n\nclass Validates(Base):\n"
        "    def validation_step(self, batch, batch_idx):\n        loss = self(batch)\n"
        "        self._log_loss(loss)\n        return loss\n",
        encoding="utf-8",
    )
    assert rows(root) == [6]


def test_a_method_with_thousands_of_item_calls_is_checked_in_linear_time(tmp_path):
    lines = ["from torch import nn", "", "", "class Big(nn.Module):", "    def forward(self, x):"]
    for index in range(3000):
        lines += [f"        n{index} = x[{index}].item()", f"        print(n{index})"]
    lines.append("        return x")
    root = write_tree(tmp_path, {"big.py": "\n".join(lines) + "\n"})
    before = _cpu_seconds()
    found = check(root, "--select", "TL003")
    cpu = _cpu_seconds() - before
    assert len(found) == 3000
    # linear: ~10 s of CPU on a loaded CI machine; the quadratic pass took minutes
    assert cpu < 45, cpu


def _cpu_seconds() -> float:
    """CPU time of this process (the CLI may run in it) and of its children."""
    usages = (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    return sum(usage.ru_utime + usage.ru_stime for usage in usages)


def test_a_none_check_of_a_value_from_the_batch_is_no_rare_block(tmp_path):
    # issue 31 item 6: `labels` comes with every batch (or never): its None-check runs every step
    text = (
        "from torch import nn\n\n\nclass Head(nn.Module):\n    def forward(self, batch, loader):\n"
        "        labels = batch.get('labels')\n        if labels is not None:\n            print(labels.sum().item())\n"
        "        for x, target in loader:\n            if target is not None:\n                print(target.max().item())\n"
        "        found = self.search(batch)\n        if found is not None:\n            print(found.min().item())\n"
        "        return batch\n"
    )
    root = write_tree(tmp_path, {"head.py": text})
    assert rows(root) == [8, 11]


def test_values_handed_to_a_recorder_or_kept_in_a_stats_list_are_reported_by_default(tmp_path):
    text = (
        "import torch\n\n\nclass Agent:\n    def update(self, batch, optimizer):\n"
        "        for _ in range(4):\n            loss, kl, entropy, indices = self.losses(batch)\n"
        "            optimizer.zero_grad()\n            loss.backward()\n            optimizer.step()\n"
        "            self.track_data('Loss / Policy loss', loss.item())\n"  # 11: skrl's recorder
        "            self.logger.record('train/kl', kl.item())\n"  # 12: Stable-Baselines3's
        "            self.entropy_record.extend(entropy.detach().cpu().numpy())\n"  # 13: a stats deque
        "            self.buffer.update_priorities(indices.cpu().numpy())\n"  # 14: the buffer's input
    )
    root = write_tree(tmp_path, {"agent.py": text})
    assert rows(root) == [11, 12, 13]
    configure(root, check_host_values=True)
    assert rows(root) == [11, 12, 13, 14]


@pytest.mark.parametrize("framework", ["import jax\nimport jax.numpy as jnp\n", "import warp as wp\n"])
def test_another_frameworks_code_is_not_torchs(tmp_path, framework):
    update = (
        "\n\nclass Agent:\n    def update(self, batch, optimizer):\n        for _ in range(4):\n"
        "            loss = self.step(batch, optimizer)\n            optimizer.step()\n"
        "            self.track_data('Loss', loss.item())\n"
    )
    converting = framework + "\n\ndef to_torch(x):\n    import torch\n\n    return torch.as_tensor(x)\n" + update
    files = {"jax_agent.py": framework + update, "torch_agent.py": framework + "import torch\n" + update,
             "converting_agent.py": converting}
    root = write_tree(tmp_path, files)
    found = sorted(Path(d["filename"]).name for d in check(root, "--select", "TL003,TL005"))
    assert found == ["converting_agent.py", "torch_agent.py"]


def test_the_branch_that_steps_the_optimizer_runs_on_every_optimizer_step(tmp_path):
    text = (
        "def train(model, loader, optimizer, accumulation, log_every, pbar):\n"
        "    running = 0\n    for i, batch in enumerate(loader):\n"
        "        loss = model(batch)\n        running += loss.detach()\n        loss.backward()\n"
        "        if (i + 1) % accumulation == 0:\n            optimizer.step()\n            optimizer.zero_grad()\n"
        "            pbar.set_description(f'{running.item()}')\n"  # 10: every optimizer step
        "        if i % log_every == 0:\n            print(loss.item())\n"  # 12: now and then
    )
    skipping = (
        "def train(model, loader, optimizer, accumulation):\n    for i, batch in enumerate(loader):\n"
        "        loss = model(batch)\n        loss.backward()\n"
        "        if (i + 1) % accumulation != 0:\n            continue\n"
        "        optimizer.step()\n        print(loss.item())\n"  # 8: every optimizer step
    )
    root = write_tree(tmp_path, {"train.py": text, "skipping.py": skipping})
    found = [(Path(d["filename"]).name, d["location"]["row"]) for d in check(root, "--select", "TL003")]
    assert sorted(found) == [("skipping.py", 8), ("train.py", 10)]
    configure(root, check_periodic_branches=True)
    found = [(Path(d["filename"]).name, d["location"]["row"]) for d in check(root, "--select", "TL003")]
    assert sorted(found) == [("skipping.py", 8), ("train.py", 10), ("train.py", 12)]


def test_a_name_bound_once_to_a_periodic_test_is_periodic_too(tmp_path):
    """`apply_penalty = self.steps % 4 == 0`, then `if apply_penalty:` (lightweight-gan's trainer)."""
    text = (
        "def train(model, loader, optimizer, stats):\n    for step, batch in enumerate(loader):\n"
        "        penalize = step % 4 == 0\n        flagged = batch.numel() > 0\n"
        "        loss = model(batch)\n        loss.backward()\n        optimizer.step()\n"
        "        if penalize:\n            stats.append(loss.item())\n"  # 9: every fourth step
        "        if flagged:\n            stats.append(loss.mean().item())\n"  # 11: a value of the step: every step
    )
    # bound twice, the name is no plain periodic test (rows shift by one)
    rebound = text.replace("step % 4 == 0\n", "step % 4 == 0\n        penalize = penalize or step == 1\n")
    # a value computed with a modulo is no periodic test (deepmd's `ti = embedding_idx % self.ntypes`)
    indexed = text.replace("penalize = step % 4 == 0", "kind = batch.dim() % 2").replace("if penalize:", "if kind:")
    root = write_tree(tmp_path, {"train.py": text, "rebound.py": rebound, "indexed.py": indexed})
    found = [(Path(d["filename"]).name, d["location"]["row"]) for d in check(root, "--select", "TL003")]
    assert sorted(found) == [("indexed.py", 9), ("indexed.py", 11), ("rebound.py", 10), ("rebound.py", 12), ("train.py", 11)]
    configure(root, check_periodic_branches=True)
    found = [(Path(d["filename"]).name, d["location"]["row"]) for d in check(root, "--select", "TL003")]
    assert sorted(found) == [
        ("indexed.py", 9), ("indexed.py", 11), ("rebound.py", 10), ("rebound.py", 12), ("train.py", 9), ("train.py", 11)
    ]
