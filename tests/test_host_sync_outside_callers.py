"""TL003 where the code that runs a step every iteration is outside the linted tree or hides
the step in a nested loop (issue 31 item 6, the seed-97 recall scan): a module's loss methods
that a framework's runner calls (mmengine's `model(data, mode='loss')`), a module-level loss
function a training script elsewhere calls, a loop over data whose items get repeated
updates in a counting loop (TRPO's critic iterations), a synced number both summed and
logged. Each with the twin the rule must leave alone. Through the real CLI, in process."""

from __future__ import annotations

import json
import textwrap

from cli_support import write_tree
from torchlint import cli


def _rows(tmp_path, capsys, files, select="TL003"):
    root = write_tree(tmp_path, {name: textwrap.dedent(text) for name, text in files.items()})
    capsys.readouterr()
    cli.main(["check", "--no-cache", "--select", select, "--output-format", "json", str(root)])
    found = json.loads(capsys.readouterr().out)
    return {(item["filename"].rsplit("/", 1)[-1], item["location"]["row"]): item["message"] for item in found}


HEAD = """\
    from mmengine.model import BaseModule
    from torch import nn


    class Head(BaseModule):
        def __init__(self):
            super().__init__()
            self._init_layers()

        def _init_layers(self):
            self.conv = nn.Conv2d(8, 4, 1)

        def loss(self, x, targets):
            return self.loss_by_feat(self.conv(x), targets)

        def loss_by_feat(self, scores, targets):
            avg_factor = targets.sum().clamp_(min=1).item()
            return scores.sum() / avg_factor

        def val_loss(self, scores, targets):
            return scores.sum().item()

        def _log_loss(self, loss):
            print(loss.item())
"""


def test_a_modules_loss_methods_that_a_runner_outside_the_tree_calls_are_hot(tmp_path, capsys):
    found = _rows(tmp_path, capsys, {"head.py": HEAD})
    assert list(found) == [("head.py", 17)]
    assert "reached from `Head.loss` via `loss_by_feat`" in found[("head.py", 17)]


def test_a_loss_method_the_tree_calls_only_from_an_epoch_hook_stays_quiet(tmp_path, capsys):
    epoch_only = HEAD.replace("    def loss(self, x, targets):", "    def on_epoch_end(self, x, targets):")
    assert _rows(tmp_path, capsys, {"head.py": epoch_only}) == {}


def test_a_class_that_is_no_module_has_no_hot_loss_method(tmp_path, capsys):
    plain = HEAD.replace("from mmengine.model import BaseModule", "class BaseModule:\n        pass")
    plain = plain.replace("self.conv = nn.Conv2d(8, 4, 1)", "self.scale = 2")
    assert _rows(tmp_path, capsys, {"head.py": plain}) == {}


LOSSES = """\
    import torch


    def dice_loss(pred, target):
        n = target.sum().item()
        return (pred - target).abs().sum() / n


    def report_loss(pred, target):
        return (pred - target).abs().sum().item()


    def evaluate(model, loader):
        return [eval_loss(model(x), y) for x, y in loader]


    def eval_loss(pred, target):
        return (pred - target).abs().mean().item()
"""


def test_a_loss_function_no_code_of_the_tree_calls_is_hot(tmp_path, capsys):
    found = _rows(tmp_path, capsys, {"losses.py": LOSSES})
    assert list(found) == [("losses.py", 5)]
    assert found[("losses.py", 5)].endswith("(a loss function runs on every training step)")


def test_a_loss_function_the_tree_calls_follows_its_callers(tmp_path, capsys):
    called = LOSSES.replace("return [eval_loss(", "return [dice_loss(")
    assert _rows(tmp_path, capsys, {"losses.py": called}) == {}


TRPO = """\
    import torch


    class Algo:
        def update(self, batch, repeat):
            actor_losses, vf_losses = [], []
            for _ in range(repeat):
                for minibatch in batch.split(64):
                    actor_loss = -(self.policy(minibatch) * minibatch.adv).mean()
                    for _ in range(self.critic_iters):
                        vf_loss = ((minibatch.returns - self.critic(minibatch.obs)) ** 2).mean()
                        self.optim.step(vf_loss)
                    actor_losses.append(actor_loss.item())
                    vf_losses.append(vf_loss.item())
            return actor_losses, vf_losses
"""


def test_a_loop_over_data_with_repeated_updates_per_item_is_hot(tmp_path, capsys):
    assert list(_rows(tmp_path, capsys, {"algo.py": TRPO})) == [("algo.py", 13), ("algo.py", 14)]


def test_an_epoch_loop_around_a_counting_loop_of_steps_stays_quiet(tmp_path, capsys):
    epochs = TRPO.replace("for minibatch in batch.split(64):", "for epoch in range(self.epochs):")
    assert _rows(tmp_path, capsys, {"algo.py": epochs}) == {}
    by_index = TRPO.replace("for _ in range(self.critic_iters):", "for i in range(len(minibatch)):")
    assert _rows(tmp_path, capsys, {"algo.py": by_index}) == {}


def test_a_number_summed_and_put_in_the_logged_stats_is_reported(tmp_path, capsys):
    fit = """\
        def fit(model, loader, optimizer, strategy, bar):
            acc_sum = 0
            for x, y in loader:
                out = model(x)
                loss = (out - y).pow(2).mean()
                loss.backward()
                optimizer.step()
                acc = (out > y).float().mean().item()
                acc_sum += acc
                bar.set_postfix({"acc": acc})
            return acc_sum
    """
    assert list(_rows(tmp_path, capsys, {"fit.py": fit})) == [("fit.py", 8)]
    needed = fit.replace('bar.set_postfix({"acc": acc})', "optimizer.lr = acc")
    assert _rows(tmp_path, capsys, {"fit.py": needed}) == {}
