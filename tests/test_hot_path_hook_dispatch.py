"""TL003/TL005 in a training loop whose backward pass and optimizer step run in a hook it calls by name
(`self.call_hook("after_train_step")`, mmcv's dispatch, as semilearn's `AlgorithmBase.train` does; found by
the seed-179 recall scan, bench/tl003_recall_judged_seed179.jsonl): the loop is a training loop, and what it
runs on every step (the other hooks it calls so, an algorithm's `train_step` override) is hot. Its twins:
a loop dispatching only to hooks that train nothing, or by a name that is no literal. Through the real CLI,
in process."""

from __future__ import annotations

import pytest

from cli_support import messages_by_code_and_row

HOOKS = """\
    import torch


    class Hook:
        pass


    class ParamUpdateHook(Hook):
        def after_train_step(self, algorithm):
            algorithm.out_dict["loss"].backward()
            algorithm.optimizer.step()
            algorithm.model.zero_grad()


    class LoggingHook(Hook):
        def after_train_step(self, algorithm):
            print("loss", algorithm.out_dict["loss"].item())

        def after_train_epoch(self, algorithm):
            print("epoch", algorithm.epoch)
"""
BASE = """\
    import torch

    from pkg.hooks import LoggingHook, ParamUpdateHook


    class AlgorithmBase:
        def __init__(self, model, optimizer, loader):
            self.model, self.optimizer, self.loader = model, optimizer, loader
            self.hooks = [ParamUpdateHook(), LoggingHook()]

        def call_hook(self, fn_name, *args):
            for hook in self.hooks:
                if hasattr(hook, fn_name):
                    getattr(hook, fn_name)(self, *args)

        def train(self):
            for epoch in range(10):
                self.epoch = epoch
                for batch in self.loader:
                    self.out_dict, self.log_dict = self.train_step(batch)
                    self.call_hook({name})
                self.call_hook("after_train_epoch")

        def train_step(self, batch):
            raise NotImplementedError
"""
ALGORITHM = """\
    import torch

    from pkg.base import AlgorithmBase


    class FixMatch(AlgorithmBase):
        def train_step(self, batch):
            loss = self.model(batch.to("cuda")).mean()
            log_dict = {"train/loss": loss.item()}
            return {"loss": loss}, log_dict
"""


def _found(tmp_path, capsys, name: str) -> dict:
    files = {
        "pkg/__init__.py": "",
        "pkg/hooks.py": HOOKS,
        "pkg/base.py": BASE.replace("{name}", name),
        "pkg/fixmatch.py": ALGORITHM,
    }
    found = messages_by_code_and_row(tmp_path, capsys, files, "TL003,TL005")
    return {(code, row): message for (code, row), message in found.items()}


def test_a_loop_that_trains_through_a_hook_called_by_name_is_a_training_loop(tmp_path, capsys):
    found = _found(tmp_path, capsys, '"after_train_step"')
    assert sorted(found) == [("TL003", 9), ("TL003", 17)], found
    assert "in `LoggingHook.after_train_step`" in found[("TL003", 17)]
    assert "reached from the training loop in `AlgorithmBase.train`" in found[("TL003", 17)]
    assert "in `FixMatch.train_step`" in found[("TL003", 9)]
    assert "via `FixMatch.train_step`" in found[("TL003", 9)]


@pytest.mark.parametrize("name", ['"after_train_epoch"', "step_hook_name"])
def test_a_loop_dispatching_to_no_hook_that_trains_is_none(tmp_path, capsys, name):
    assert _found(tmp_path, capsys, name) == {}
