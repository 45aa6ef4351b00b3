"""TL003 where the seed-173 recall scan (bench/tl003_recall_judged_seed173.jsonl) found a number read
on every step only to be recorded, in places the rule did not count as a record: a running total
kept in an array's item through a name (cellpose's `train_losses[iepoch] += train_loss`), a method
named `print` (a trainer's `self.print(...)`, Accelerate's `accelerator.print`), a list of numbers
handed to a recorder (habitat's `metrics.update([loss.item(), accuracy])`), the arm of a conditional
stored in a stats dict (robomimic's `info[k] = x.item() if tuning else x`) and a logging function
named `logger` (pygod's `logger(epoch=epoch, loss=loss.item())`). Each beside its twin that needs
the number on the host, which stays with `check-host-values`. Through the real CLI, in process."""

from __future__ import annotations

import textwrap

import pytest

from cli_support import messages_by_code_and_row

LOOP = """\
    import torch


    def train(model, loader, optimizer, metrics, logger, best, info, tuning, epoch):
        totals = [0.0] * 10
        for x, y in loader:
            loss = model(x).sub(y).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
{line}
        return totals
"""
READ_ROW = 11  # the first row of `line`


def _found(tmp_path, capsys, line: str) -> dict:
    text = LOOP.format(line=textwrap.indent(textwrap.dedent(line), " " * 12))
    return messages_by_code_and_row(tmp_path, capsys, {"train.py": text}, "TL003,TL005")


@pytest.mark.parametrize(
    "recorded",
    [
        "step_loss = loss.item()\nstep_loss *= len(x)\ntotals[epoch] += step_loss",
        'metrics.update([loss.item(), 1.0])',
        'info["loss"] = loss.item() if tuning else loss',
        "logger(epoch=epoch, loss=loss.item())",
    ],
)
def test_a_number_only_recorded_is_reported(tmp_path, capsys, recorded):
    found = _found(tmp_path, capsys, recorded)
    assert list(found) == [("TL003", READ_ROW)], found
    assert "`.item()` in the training loop in `train`" in found[("TL003", READ_ROW)]


@pytest.mark.parametrize(
    "host_value",
    [
        "step_loss = loss.item()\nstep_loss *= len(x)\nif step_loss < best:\n    break",
        "optimizer.configure([loss.item(), 1.0])",
        "value = loss.item() if tuning else 0.0\nif value < best:\n    break",
        "schedule(epoch=epoch, loss=loss.item())",
    ],
)
def test_its_twin_that_the_host_needs_stays_with_check_host_values(tmp_path, capsys, host_value):
    assert _found(tmp_path, capsys, host_value) == {}


TRAINER = """\
    import torch
    from torch import nn


    class Trainer(nn.Module):
        def __init__(self, model, optimizer, accelerator):
            super().__init__()
            self.model, self.optimizer, self.accelerator = model, optimizer, accelerator

        def print(self, message):
            return self.accelerator.print(message)

        def train_step(self, batch):
            loss = self.model(batch).mean()
            self.accelerator.backward(loss)
            self.optimizer.step()
            {call}
"""


@pytest.mark.parametrize(
    "call, reported",
    [
        ('self.print(f"loss {loss.item():.3f}")', True),
        ('self.accelerator.print("loss", loss.item())', True),
        ("self.warm_up(loss.item())", False),
    ],
)
def test_a_method_named_print_records_what_it_is_given(tmp_path, capsys, call, reported):
    found = messages_by_code_and_row(tmp_path, capsys, {"trainer.py": TRAINER.replace("{call}", call)}, "TL003,TL005")
    assert list(found) == ([("TL003", 17)] if reported else [])
