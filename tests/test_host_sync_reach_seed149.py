"""TL003 where the seed-149 recall scan (bench/tl003_recall_judged_seed149.jsonl) found
training code the rule did not reach: a step function that calls a loss method on an
object its class's `__init__` builds (ml-agents' GAIL discriminator), a batch loop whose
optimizers are stepped in a loop of their own (`for optimizer in optimizers:`), and a
subclass of one of trl's preference trainers, whose `compute_loss` calls
`get_batch_loss_metrics` on every step; a number formatted with `str.format` for a log, and
a NumPy copy summed into a running total. Each with the twin the rule must leave alone.
Through the real CLI, in process."""

from __future__ import annotations

import json
import textwrap

from cli_support import write_tree
from torchlint import cli


def _rows(tmp_path, capsys, files):
    root = write_tree(tmp_path, {name: textwrap.dedent(text) for name, text in files.items()})
    capsys.readouterr()
    cli.main(["check", "--no-cache", "--select", "TL003", "--output-format", "json", str(root)])
    found = json.loads(capsys.readouterr().out)
    return {(item["filename"].rsplit("/", 1)[-1], item["location"]["row"]): item["message"] for item in found}


PROVIDER = """\
    import torch


    class Discriminator:
        def __init__(self):
            self.net = torch.nn.Linear(4, 1)

        def score(self, policy, expert):
            estimate = self.net(policy)
            stats = {{"estimate": estimate.mean().item()}}
            return -estimate.mean(), stats


    class Provider:
        def __init__(self{parameter}):
            self.discriminator = {built}
            self.optimizer = torch.optim.Adam(self.discriminator.net.parameters())

        def update(self, batch, expert):
            loss, stats = self.discriminator.score(batch, expert)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            return stats
"""


def test_a_step_function_reaches_the_method_of_what_its_class_builds(tmp_path, capsys):
    found = _rows(tmp_path, capsys, {"gail.py": PROVIDER.format(parameter="", built="Discriminator()")})
    assert list(found) == [("gail.py", 10)]
    assert "(reached from the step function `Provider.update` via `Discriminator.score`)" in found[("gail.py", 10)]


def test_an_attribute_handed_in_is_not_followed(tmp_path, capsys):
    """`self.discriminator` handed in: which class it holds is not known here."""
    text = PROVIDER.format(parameter=", discriminator", built="discriminator")
    assert _rows(tmp_path, capsys, {"gail.py": text}) == {}


OPTIMIZERS = """\
    import torch


    def train_step(model, loader, optimizers, scaler):
        losses = []
        for batch in loader:
            loss = model(batch)
            for optimizer in optimizers:
                optimizer.zero_grad()
            if scaler is not None:
                scaler.scale(loss).backward()
            else:
                loss.backward()
            for {target} in optimizers:
                if scaler is not None:
                    scaler.step({target})
                else:
                    {target}.step()
            losses.append(loss.item())
        return losses
"""


def test_a_loop_over_the_optimizers_is_no_loop_over_batches(tmp_path, capsys):
    """Its steps make the batch loop around it train, not an epoch loop around a training loop."""
    found = _rows(tmp_path, capsys, {"train.py": OPTIMIZERS.format(target="optimizer")})
    assert list(found) == [("train.py", 19)]
    assert "the training loop in `train_step`" in found[("train.py", 19)]


def test_a_loop_that_steps_in_its_own_loop_over_batches_is_still_an_epoch_loop(tmp_path, capsys):
    """The twin: the batches are walked in the inner loop, which steps; the outer loop's read runs once per epoch."""
    text = """\
        import torch


        def train(model, epochs, loader, optimizer, scaler):
            for epoch in epochs:
                if scaler is not None:
                    model.reset()
                for batch in loader:
                    loss = model(batch)
                    loss.backward()
                    optimizer.step()
                print(loss.item())
    """
    assert _rows(tmp_path, capsys, {"train.py": text}) == {}


DPO = """\
    import torch
    from trl import {base}


    class CustomTrainer({base}):
        def get_batch_loss_metrics(self, model, batch, train_eval="train"):
            losses, chosen, rejected = self.compute_preference_loss(model, batch)
            metrics = {{"rewards/margins": (chosen - rejected).mean().item()}}
            return losses.mean(), metrics
"""


def test_a_trl_preference_trainer_runs_its_batch_metrics_on_every_step(tmp_path, capsys):
    found = _rows(tmp_path, capsys, {"trainer.py": DPO.format(base="DPOTrainer")})
    assert list(found) == [("trainer.py", 8)]
    assert "trl's preference trainers call it from `compute_loss` on every training step" in found[("trainer.py", 8)]


def test_the_method_of_another_trainer_is_not_a_step(tmp_path, capsys):
    """trl's SFTTrainer calls no `get_batch_loss_metrics`: a method so named there is the subclass's own."""
    assert _rows(tmp_path, capsys, {"trainer.py": DPO.format(base="SFTTrainer")}) == {}


LOOP = """\
    import torch


    def fit(model, loader, opt, logger):
        total = 0.0
        for x, y in loader:
            loss = model(x, y)
            loss.backward()
            opt.step()
            {line}
        return total
"""


def test_a_number_formatted_for_a_log_is_recorded(tmp_path, capsys):
    """`"...".format(x.item())` handed to `print` or a logger, as an f-string or `%` would be."""
    for line in ("print('loss {:.3f}'.format(loss.item()))", "logger.info('loss {:.3f}'.format(loss.item()))"):
        found = _rows(tmp_path, capsys, {"train.py": LOOP.format(line=line)})
        assert list(found) == [("train.py", 10)], line


def test_a_number_formatted_into_a_key_is_needed_on_the_host(tmp_path, capsys):
    line = "key = '{}'.format(loss.item()); logger.counts[key] = 1"
    assert _rows(tmp_path, capsys, {"train.py": LOOP.format(line=line)}) == {}


def test_a_numpy_copy_summed_into_a_running_total(tmp_path, capsys):
    """cornac's GRU4Rec: `total += L.cpu().detach().numpy() * len(batch)` on every step."""
    found = _rows(tmp_path, capsys, {"train.py": LOOP.format(line="total += loss.cpu().detach().numpy() * len(x)")})
    assert list(found) == [("train.py", 10)]
    assert found[("train.py", 10)].endswith("accumulate the tensor and read it once after the loop")


def test_a_list_copy_added_to_a_list_is_no_running_total(tmp_path, capsys):
    assert _rows(tmp_path, capsys, {"train.py": LOOP.format(line="total += loss.tolist()")}) == {}


def test_every_class_init_may_build_there_is_reached(tmp_path, capsys):
    """`self.discriminator` is one of two classes, as `__init__` decides: the step runs either's method."""
    text = """\
        import torch


        class Small:
            def score(self, batch):
                return {"small": self.net(batch).mean().item()}


        class Large:
            def score(self, batch):
                return {"large": self.net(batch).mean().item()}


        class Provider:
            def __init__(self, large):
                if large:
                    self.discriminator = Large()
                else:
                    self.discriminator = Small()

            def update(self, batch):
                stats = self.discriminator.score(batch)
                self.loss(batch).backward()
                self.optimizer.step()
                return stats
    """
    assert sorted(_rows(tmp_path, capsys, {"gail.py": text})) == [("gail.py", 6), ("gail.py", 11)]


METRICS = """\
    import torch


    def train_step(model, batch, optimizer, metrics, sink):
        loss, out = model(batch)
        loss.backward()
        optimizer.step()
        step_metrics = {name: metric(out, batch).item() for name, metric in metrics.items()}
        {use}
"""


def test_a_comprehension_of_metrics_kept_and_returned_is_a_stats_dict(tmp_path, capsys):
    """torchkeras' `StepRunner`: a dict comprehension of each metric's `.item()`, returned, as a literal would be."""
    found = _rows(tmp_path, capsys, {"step.py": METRICS.replace("{use}", "return step_metrics")})
    assert list(found) == [("step.py", 8)]


def test_a_comprehension_handed_to_another_function_is_its_input(tmp_path, capsys):
    assert _rows(tmp_path, capsys, {"step.py": METRICS.replace("step_metrics = {", "sink.route({").replace(
        "metrics.items()}", "metrics.items()})").replace("{use}", "return loss")}) == {}
