"""TL003 and TL005 where the seed-151 recall scan (bench/tl003_recall_judged_seed151.jsonl) found
training code the rules did not reach: the `update` of a project's own metric classes (baal's
`Metrics` and its subclasses), a loss helper named in the plural (`_compute_losses`), and
`float()` of a name bound to a device reduction, scaled in place (`float(correct_k.mul_(s))`);
and where the seed-157 scan found more: a second read of a loss after the backward pass and the
optimizer step queued more work (sbi), and a number formatted into a progress bar's dict. Each
with the twin the rules must leave alone. Through the real CLI, in process."""

from __future__ import annotations

import textwrap

from cli_support import messages_by_code_and_row


def _rows(tmp_path, capsys, files, select="TL003,TL005"):
    return messages_by_code_and_row(tmp_path, capsys, files, select)


METRICS = """\
    import torch


    class {base}:
        def __init__(self):
            self.reset()

{reset}
        def update(self, output=None, target=None):
            raise NotImplementedError


    class CalibrationError({base}):
        def reset(self):
            self.scores = []

        def update(self, output=None, target=None):
            self.scores.append(output.detach().cpu().numpy())
"""
RESET = """\
        def reset(self):
            raise NotImplementedError
"""


def _metrics(base: str, reset: str = RESET) -> str:
    return METRICS.format(base=base, reset=textwrap.indent(textwrap.dedent(reset), "    "))


def test_the_update_of_a_project_metric_class_runs_on_every_batch(tmp_path, capsys):
    found = _rows(tmp_path, capsys, {"metrics.py": _metrics("Metrics")})
    assert list(found) == [("TL003", 20)]
    assert "`CalibrationError.update`" in found[("TL003", 20)]
    assert "a metric's `update` runs on every batch it measures" in found[("TL003", 20)]


def test_a_class_named_as_a_metric_itself_is_one(tmp_path, capsys):
    text = """\
        class RunningMetric:
            def reset(self):
                self.total = 0.0

            def update(self, value):
                self.total += value.sum().item()
    """
    assert list(_rows(tmp_path, capsys, {"running.py": text})) == [("TL003", 6)]


def test_an_update_and_reset_in_a_class_not_named_as_a_metric_is_no_metric(tmp_path, capsys):
    """A replay buffer or a target network has `update` and `reset` too; nothing says a batch runs them."""
    assert _rows(tmp_path, capsys, {"buffers.py": _metrics("Buffer")}) == {}


def test_a_metric_named_class_without_reset_is_no_metric(tmp_path, capsys):
    text = """\
        class ScoreMetric:
            def __init__(self):
                self.scores = []

            def update(self, output):
                self.scores.append(output.detach().cpu().numpy())
    """
    assert _rows(tmp_path, capsys, {"metrics.py": text}) == {}


LOSSES = """\
    import torch.nn.functional as F


    def {name}(scores, labels):
        positive = labels > 0
        count = int(positive.sum().item())
        if count > 0:
            return F.cross_entropy(scores, labels) / count
        return scores.sum() * 0


    def train(model, loader, optimizer):
        for images, labels in loader:
            loss = {name}(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""


def test_a_function_named_for_losses_is_loss_code(tmp_path, capsys):
    """A count a loss needs on the host is reported in loss code, with the rewrite that fits."""
    found = _rows(tmp_path, capsys, {"losses.py": LOSSES.format(name="_compute_losses")})
    assert list(found) == [("TL003", 6)]
    assert "use `torch.where` instead of a Python branch" in found[("TL003", 6)]


def test_a_function_named_otherwise_keeps_its_host_value(tmp_path, capsys):
    """The same count in a helper not named as a loss is a value the host needs: left to `check-host-values`."""
    assert _rows(tmp_path, capsys, {"losses.py": LOSSES.format(name="_compute_scores")}) == {}


ACCURACY = """\
    import torch


    def train(model, loader, optimizer, history):
        for images, labels in loader:
            scores = model(images)
            loss = torch.nn.functional.cross_entropy(scores, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            correct = {correct}
            history.append(float(correct.mul_(100.0 / len(labels))))
"""


def test_float_of_a_name_bound_to_a_device_reduction_scaled_in_place(tmp_path, capsys):
    text = ACCURACY.format(correct="scores.argmax(1).eq(labels).float().sum()")
    found = _rows(tmp_path, capsys, {"train.py": text}, select="TL005")
    assert list(found) == [("TL005", 12)]
    assert found[("TL005", 12)].startswith("`float()` of a tensor")


def test_float_of_a_name_bound_to_a_host_value_is_quiet(tmp_path, capsys):
    text = ACCURACY.format(correct="torch.tensor(float(len(labels)))")
    assert _rows(tmp_path, capsys, {"train.py": text}, select="TL005") == {}


SECOND_READ = """\
    import torch


    def train(model, data, optimizer, steps, history):
        for step in range(steps):
            loss = model(data).mean()
            if not torch.isfinite(loss):
                raise RuntimeError("the loss is not finite")
{between}
            history.append(loss.item())
"""


def _second_read(between: str) -> str:
    """The loop with `between` (statements of its body, unindented) between the test and the read."""
    return SECOND_READ.format(between=textwrap.indent(between, " " * 12))


def test_a_read_after_the_backward_pass_and_the_step_waits_for_them(tmp_path, capsys):
    """The test of the loss drained the queue, but the backward pass and the optimizer step queued since:
    the copy to the host waits for them (sbi's amortized VI loop)."""
    text = _second_read("loss.backward()\noptimizer.step()")
    assert list(_rows(tmp_path, capsys, {"train.py": text}, select="TL003")) == [("TL003", 11)]


def test_a_read_right_after_the_test_waits_for_nothing_new(tmp_path, capsys):
    text = _second_read("steps_done = step + 1")
    assert _rows(tmp_path, capsys, {"train.py": text}, select="TL003") == {}


def test_a_backward_pass_in_a_branch_counts_after_the_branch(tmp_path, capsys):
    """Whether the branch ran or not, the read after it may wait for the backward pass."""
    text = _second_read("if step % 2 == 0:\n    loss.backward()")
    assert list(_rows(tmp_path, capsys, {"train.py": text}, select="TL003")) == [("TL003", 11)]


POSTFIX = """\
    def train(model, data, optimizer, steps, bar):
        for step in range(steps):
            loss = model(data).mean()
            loss.backward()
            optimizer.step()
            {call}
"""


def test_a_number_formatted_into_a_progress_bar_dict_is_recorded(tmp_path, capsys):
    text = POSTFIX.format(call='bar.set_postfix({"loss": f"{loss.item():.3f}"})')
    assert list(_rows(tmp_path, capsys, {"train.py": text}, select="TL003")) == [("TL003", 6)]


def test_a_number_formatted_into_a_dict_for_another_function_is_its_input(tmp_path, capsys):
    """A dict handed to a function that is no logger (here a request) is that function's input."""
    text = POSTFIX.format(call='model.configure({"loss": f"{loss.item():.3f}"})')
    assert _rows(tmp_path, capsys, {"train.py": text}, select="TL003") == {}
