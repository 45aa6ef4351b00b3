"""What a training step runs every step (issue 31): the override a base's step function calls on
`self` (across files, and what stays quiet), and a conditional `.item()` in a logged dict."""

from __future__ import annotations

import json
import textwrap

from cli_support import write_tree
from torchlint import cli

BASE = """\
import torch


class BaseImpl:
    def __init__(self, optim, compiled):
        self.optim = optim
        self._compute_grad = torch.compile(self.compute_grad) if compiled else self.compute_grad

    def compute_grad(self, batch):
        self.optim.zero_grad()
        loss = self.compute_loss(batch)
        loss.backward()
        return loss

    def update(self, batch):
        loss = self._compute_grad(batch)
        self.optim.step()
        return loss

    @torch.no_grad()
    def evaluate(self, batch):
        return self.score(batch)

    def compute_loss(self, batch):
        raise NotImplementedError

    def score(self, batch):
        raise NotImplementedError
"""

IMPL = """\
import torch

from .base import BaseImpl


class Middle(BaseImpl):
    pass


class Impl(Middle):
    def compute_loss(self, batch):
        key = batch.detach().cpu().numpy()
        return torch.as_tensor(key).sum()

    def score(self, batch):
        return batch.mean().item()


class Unrelated:
    def compute_loss(self, batch):
        return batch.sum().item()
"""


def _check(tmp_path, capsys, files):
    write_tree(tmp_path, {name: textwrap.dedent(text) for name, text in files.items()})
    capsys.readouterr()
    code = cli.main(["check", "--no-cache", "--select", "TL003", "--output-format", "json", str(tmp_path)])
    found = json.loads(capsys.readouterr().out)
    return code, [(item["filename"].rsplit("/", 1)[-1], item["location"]["row"], item["message"]) for item in found]


def test_an_override_of_a_method_a_base_step_calls_on_self_runs_every_step(tmp_path, capsys):
    code, found = _check(tmp_path, capsys, {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/impl.py": IMPL})
    assert code == 1
    assert [(name, row) for name, row, _ in found] == [("impl.py", 12)]
    assert "reached from the step function `BaseImpl.compute_grad`" in found[0][2]
    assert "`Impl.compute_loss`" in found[0][2]


def test_an_override_only_evaluation_calls_and_a_same_named_method_of_another_class_stay_quiet(tmp_path, capsys):
    quiet = IMPL.replace("key = batch.detach().cpu().numpy()", "key = batch.detach()")
    assert _check(tmp_path, capsys, {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/impl.py": quiet}) == (0, [])


TERNARY = """\
import torch


def main(model, optim, loader, logger, stale):
    for data in loader:
        loss = model(data).sum()
        loss.backward()
        optim.step()
        logger.log_metrics({"stale": stale.max().item() if stale is not None else 0})
        width = stale.max().item() if stale is not None else 0
        model.resize(width)
"""


def test_a_conditional_item_in_a_logged_dict_is_recorded_and_one_used_as_a_size_is_not(tmp_path, capsys):
    code, found = _check(tmp_path, capsys, {"train.py": TERNARY})
    assert code == 1
    assert [(name, row) for name, row, _ in found] == [("train.py", 9)]
