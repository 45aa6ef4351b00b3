"""TL003 and TL005 in metrics and in per-batch hooks a class inherits, through the real CLI: a
metric's `update` runs on every batch it measures, its `compute` once; a plugin whose base
defines the per-iteration hook runs its own `update` from it."""

from __future__ import annotations

import json

from cli_support import run_torchlint, write_tree


def findings(root, *files: str) -> list:
    completed = run_torchlint(
        "check", "--no-cache", "--select", "TL003,TL005", "--output-format", "json-lines", *files, cwd=root
    )
    assert completed.returncode in (0, 1), completed.stderr
    rows = [json.loads(line) for line in completed.stdout.decode("utf-8").splitlines() if line.strip()]
    return sorted((row["filename"].rsplit("/", 1)[-1], row["location"]["row"], row["code"]) for row in rows)


TORCHMETRICS_METRIC = '''\
import torch
from torchmetrics import Metric


class MeanError(Metric):
    def __init__(self):
        super().__init__()
        self.add_state("total", default=torch.tensor(0.0), dist_reduce_fx="sum")
        self.count = 0

    def update(self, preds, target):
        errors = (preds - target).abs()
        self.total += errors.sum()
        self.count += int(errors.numel())
        largest = errors.max().item()
        self.largest = max(self.largest, largest)

    def compute(self):
        return self.total.item() / self.count
'''


def test_a_host_read_in_a_metrics_update_is_reported_and_its_compute_is_not(tmp_path):
    root = write_tree(tmp_path, {"metric.py": TORCHMETRICS_METRIC})
    # line 15: a number the metric keeps (a host value, reported because `update` runs per batch);
    # `int(errors.numel())` is a size, no sync; `compute` runs once per epoch
    assert findings(root, "metric.py") == [("metric.py", 15, "TL003")]
    completed = run_torchlint("check", "--no-cache", "--select", "TL003", "--output-format", "concise", ".", cwd=root)
    assert "in `MeanError.update` waits" in completed.stdout.decode()
    assert "(a metric's `update` runs on every batch it measures)" in completed.stdout.decode()


def test_a_class_that_is_no_metric_keeps_its_update_off_the_hot_path(tmp_path):
    source = TORCHMETRICS_METRIC.replace("from torchmetrics import Metric", "from collections import UserDict as Metric")
    root = write_tree(tmp_path, {"metric.py": source})
    assert findings(root, "metric.py") == []


IGNITE_METRIC = '''\
import torch
from ignite.metrics import Metric


class SumOfErrors(Metric):
    def reset(self):
        self._sum = torch.tensor(0.0)

    def update(self, output):
        self._accumulate(output)

    def _accumulate(self, output):
        y_pred, y = output
        self._sum += torch.sum(y - y_pred).item()
        if not torch.isfinite(y_pred).all():
            self._bad += 1

    def compute(self):
        return self._sum
'''


def test_what_an_ignite_metrics_update_calls_is_reported_with_its_route(tmp_path):
    root = write_tree(tmp_path, {"metric.py": IGNITE_METRIC})
    assert findings(root, "metric.py") == [("metric.py", 14, "TL003"), ("metric.py", 15, "TL005")]
    completed = run_torchlint("check", "--no-cache", "--select", "TL003", "--output-format", "concise", ".", cwd=root)
    assert "(reached from `SumOfErrors.update` via `_accumulate`)" in completed.stdout.decode()


PLUGIN_BASE = '''\
class PluginMetric:
    def __init__(self, mode="train"):
        self._mode = mode

    def after_training_iteration(self, strategy):
        if self._mode == "train":
            self.update(strategy)

    def update(self, strategy):
        pass
'''
LOSSES_PLUGIN = '''\
from .base import PluginMetric


class LossesSeen(PluginMetric):
    def update(self, strategy):
        self.losses.append(strategy.loss.item())
'''
EPOCH_PLUGIN = '''\
from .base import PluginMetric


class EpochLosses(PluginMetric):
    def after_training_epoch(self, strategy):
        self.losses.append(strategy.loss.item())
'''


def test_a_per_batch_hook_a_base_defines_runs_the_subclass_methods(tmp_path):
    root = write_tree(
        tmp_path,
        {"plugins/__init__.py": "", "plugins/base.py": PLUGIN_BASE, "plugins/losses.py": LOSSES_PLUGIN,
         "plugins/epoch.py": EPOCH_PLUGIN},
    )
    # the base's hook calls `self.update`: the instance's own `update`; an epoch hook is no hot path
    assert findings(root, ".") == [("losses.py", 6, "TL003")]
    completed = run_torchlint("check", "--no-cache", "--select", "TL003", "--output-format", "concise", ".", cwd=root)
    assert "(reached from `LossesSeen.after_training_iteration` via `update`)" in completed.stdout.decode()
