"""TL003/TL005 through a call made only now and then: a training loop, a step function or a Lightning
step that calls a helper only under an interval or a logging switch (`if step % 100 == 0:
self._log_stuff(loss)`) does not run the helper on every step, so what the helper reads is not
reported, unless `check-periodic-branches` asks for such blocks. A body that steps the optimizer
(gradient accumulation's `if (i + 1) % k == 0:`) is the training step itself, and a helper called both
so and on every step is reached. Through the real CLI, in process; `periodic_call_ids` directly."""

from __future__ import annotations

import ast
import textwrap

import pytest

from cli_support import messages_by_code_and_row
from torchlint.analysis.periodic_calls import (
    RARE, ast_defaulting_to_one, ast_evaluation_side, ast_test_kind, periodic_call_ids,
)

TRAIN = """\
    import torch


    class Trainer:
        def __init__(self, model, optimizer):
            self.model = model
            self.optimizer = optimizer

        def _log_stuff(self, loss):
            print("loss", loss.item())

        def fit(self, loader):
            for step, (x, y) in enumerate(loader):
                loss = torch.nn.functional.mse_loss(self.model(x), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                if step % 100 == 0:
                    self._log_stuff(loss)


    def log_metrics(loss):
        return loss.item()


    def train(model, optimizer, loader, log_images=False):
        for step, (x, y) in enumerate(loader):
            loss = model(x, y)
            loss.backward()
            optimizer.step()
            if log_images:
                log_metrics(loss)


    class LitModel:
        def training_step(self, batch, batch_idx):
            loss = self.model(batch)
            if self.global_step % 10 == 0:
                self._report(loss)
            return loss

        def _report(self, loss):
            print(loss.item())
"""
# rows of the three reads, in `_log_stuff`, `log_metrics` and `_report`
READS = [("TL003", 10), ("TL003", 23), ("TL003", 43)]
LIGHTNING = "import pytorch_lightning as pl\n"


def _found(tmp_path, capsys, source: str, periodic: bool = False) -> dict:
    files = {"pkg/__init__.py": "", "pkg/train.py": source}
    if periodic:
        files["pyproject.toml"] = "[tool.torchlint.host-sync-in-hot-path]\ncheck-periodic-branches = true\n"
    return messages_by_code_and_row(tmp_path, capsys, files, "TL003,TL005")


def test_a_helper_called_only_now_and_then_is_not_run_on_every_step(tmp_path, capsys):
    assert _found(tmp_path, capsys, TRAIN) == {}


def test_check_periodic_branches_follows_such_calls(tmp_path, capsys):
    found = _found(tmp_path, capsys, TRAIN, periodic=True)
    assert sorted(found) == READS, found
    assert "reached from the training loop in `Trainer.fit` via `Trainer._log_stuff`" in found[("TL003", 10)]
    assert "reached from `LitModel.training_step` via `_report`" in found[("TL003", 43)]


def test_a_helper_also_called_on_every_step_is_reached(tmp_path, capsys):
    # each helper called once more, outside the periodic branch
    every_step = TRAIN
    for before, call in (
        ("                if step % 100 == 0:\n", "                self._log_stuff(loss)\n"),
        ("            if log_images:\n", "            log_metrics(loss)\n"),
        ("            return loss\n", "            self._report(loss)\n"),
    ):
        every_step = every_step.replace(before, call + before)
    found = _found(tmp_path, capsys, every_step)
    assert sorted(found) == [("TL003", 10), ("TL003", 24), ("TL003", 46)], found


def test_a_branch_that_steps_the_optimizer_runs_on_every_step(tmp_path, capsys):
    accumulation = """\
        class Trainer:
            def _log_stuff(self, loss):
                print("loss", loss.item())

            def fit(self, loader, accumulation=4):
                for i, (x, y) in enumerate(loader):
                    loss = self.model(x, y)
                    loss.backward()
                    if (i + 1) % accumulation == 0:
                        self.optimizer.step()
                        self._log_stuff(loss)
    """
    found = _found(tmp_path, capsys, accumulation)
    assert sorted(found) == [("TL003", 3)], found
    assert "via `Trainer._log_stuff`" in found[("TL003", 3)]


def _trains(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr in {"step", "backward"}


def _sites(source: str, **kwargs) -> list:
    """The source lines of the calls `periodic_call_ids` gives for the first def of `source`."""
    function = ast.parse(textwrap.dedent(source)).body[0]
    found = periodic_call_ids(function.body, _trains, ast_defaulting_to_one(function), **kwargs)
    return sorted(node.lineno for node in ast.walk(function) if isinstance(node, ast.Call) and id(node) in found)


def test_periodic_call_ids_nested_branches():
    source = """\
        def fit(self, loader, accumulate=1):
            for step, batch in enumerate(loader):
                if step % 100 == 0:
                    self.a()
                    if self.debug:
                        self.b()
                else:
                    self.c()
                if step % 4 == 0:
                    if self.verbose:
                        self.optimizer.step()
                    self.d()
                if step % accumulate == 0:
                    self.e()
                if batch_idx < 10 or self.should_log():
                    self.f()
                if self.training:
                    self.g()
                if not self.debug:
                    self.i()
                else:
                    self.j()
                if step % 10 != 0:
                    self.k()
                elif self.verbose:
                    self.l()

                def inner():
                    if step % 2 == 0:
                        self.h()
    """
    # `self.c()` is in the `else:`; the `% 4` branch steps (through its nested branch); `accumulate` defaults
    # to 1; `self.should_log()` is the test, not the branch; the `else:` of `not self.debug` and of `!= 0`
    # are the rare side
    assert _sites(source) == [4, 6, 16, 22, 26]


@pytest.mark.parametrize(
    "test, periodic",
    [
        ("step % 10 == 0", True), ("self.global_step < 5", True), ("self.log_images", True),
        ("cfg.plot_every and step", True), ("self.should_log()", True), ("i % n_log == 0", True),
        ("self.training", False), ("loss > 0", False), ("x == 0", False), ("self.every_step_flag is None", True),
        ("i % one == 0", False), ("not self.debug", False), ("not step % 10", True),
        ("not (step % 10 == 0)", False), ("loss > 0 and not self.verbose", False), ("-step % 4 == 0", True),
    ],
)
def test_ast_test_kind(test, periodic):
    assert (ast_test_kind(ast.parse(test, mode="eval").body, frozenset({"one"})) == RARE) is periodic


def test_the_usual_side_of_a_periodic_test_runs_on_every_step(tmp_path, capsys):
    """`if not self.debug:` and the `else:` of `if self.debug:` or of `if step % 100 == 0:` are the usual
    path (tmrl's SAC `train`, found by the seed-193 recall sample); the `else:` of `if not self.debug:` and
    the body of `if step % 100 == 0:` are not."""
    source = """\
        class SAC:
            def train(self, batch, step):
                loss = self.model(batch).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                if not self.debug:
                    stats = dict(loss=loss.item())
                else:
                    stats = dict(loss=loss.item(), q=self.q.mean().item())
                if self.verbose:
                    print(loss.item())
                else:
                    self.history.append(loss.item())
                if step % 100 == 0:
                    print(loss.sum().item())
                else:
                    self.history.append(loss.mean().item())
                if step % 10 != 0:
                    self.history.append(loss.max().item())
                return stats
    """
    assert sorted(_found(tmp_path, capsys, source)) == [("TL003", 8), ("TL003", 14), ("TL003", 18), ("TL003", 20)]


PHASES = """\
    def run_epoch(model, loader, optimizer, phase):
        total = 0.0
        for x, y in loader:
            loss = model(x, y)
            if phase == "train":
                loss.backward()
                optimizer.step()
                total += loss.item()
            else:
                total += loss.sum().item()
            if phase != "train":
                print(loss.mean().item())
            if phase == "val":
                log_val(loss)
            else:
                log_train(loss)
            if not model.training:
                log_val(loss)
        return total


    def log_val(loss):
        print(loss.item())


    def log_train(loss):
        print(loss.item())
"""


def test_the_evaluation_side_of_a_phase_test_is_not_a_training_step(tmp_path, capsys):
    """`if phase == "train": ... else:` in a loop shared by training and validation (the PyTorch tutorial's
    `for phase in ["train", "val"]`, trl's `mode == "train"`): the `else:`, the body of `phase != "train"` or
    `phase == "val"`, and what only they call, run in evaluation."""
    assert sorted(_found(tmp_path, capsys, PHASES)) == [("TL003", 8), ("TL003", 27)]


@pytest.mark.parametrize(
    "test, side",
    [
        ('mode == "train"', False), ('mode != "train"', True), ('"val" == phase', True), ("stage == 'Test'", True),
        ('phase != "valid"', False), ("not self.training", True), ("model.training", False),
        ('mode == "warmup"', None), ("mode in ('val', 'test')", None), ("self.training_step", None),
    ],
)
def test_ast_evaluation_side(test, side):
    assert ast_evaluation_side(ast.parse(test, mode="eval").body) is side
