"""TL003 where the seed-179 recall scan (bench/tl003_recall_judged_seed179.jsonl) found a training step's
number returned to callers that only sum or log it, in calls the rule did not read: a method called on an
instance of its class that the file builds (trankit's `self.trainer = Trainer(...)` in a setup method,
then `loss = self.trainer.update(batch)` and `train_loss += loss` on every batch), the number logged
through a format string kept in a variable (`logger.info(format_str.format(step, loss))`), and a step
returning a tuple its caller unpacks and sums (ART's `_train_loss, _train_acc, _train_n =
self._batch_process(x, y)`). Each beside its twin whose caller needs the number on the host, which stays
with `check-host-values`. Through the real CLI, in process."""

from __future__ import annotations

import pytest

from cli_support import messages_by_code_and_row

STEP = """\
    import torch


    class Learner:
        def __init__(self, model, optimizer):
            self.model, self.optimizer = model, optimizer

        def update(self, batch):
            self.optimizer.zero_grad()
            loss = self.model(batch.to("cuda")).mean()
            loss.backward()
            self.optimizer.step()
            return loss.item()


    class Pipeline:
        def setup(self, model, optimizer):
            self.learner = Learner(model, optimizer)

        def train(self, batches, logger, best):
            total = 0.0
            format_str = "step {} loss {:.3f}"
            for step, batch in enumerate(batches):
                {use}
            return total


    def run_alone(model, optimizer, batches):
        learner = Learner(model, optimizer)
        for batch in batches:
            learner.update(batch)
"""
STEP_READ_ROW = 13  # `return loss.item()`


def _step_found(tmp_path, capsys, use: str) -> dict:
    text = STEP.replace("{use}", use.replace("\n", "\n" + " " * 16))
    return messages_by_code_and_row(tmp_path, capsys, {"pipeline.py": text}, "TL003,TL005")


@pytest.mark.parametrize(
    "use",
    [
        "loss = self.learner.update(batch)\ntotal += loss",
        "loss = self.learner.update(batch)\ntotal += loss\nlogger.info(format_str.format(step, loss))",
        "self.learner.update(batch)",
    ],
)
def test_a_number_its_instances_callers_only_record_is_reported(tmp_path, capsys, use):
    found = _step_found(tmp_path, capsys, use)
    assert list(found) == [("TL003", STEP_READ_ROW)], found
    assert "its callers here only sum, log or drop the number it returns" in found[("TL003", STEP_READ_ROW)]


@pytest.mark.parametrize(
    "use",
    [
        "loss = self.learner.update(batch)\nif loss < best:\n    break",
        "loss = self.learner.update(batch)\ntotal += loss\nlogger.warn_if(format_str.format(step, loss))",
    ],
)
def test_its_twin_whose_caller_needs_the_number_stays_with_check_host_values(tmp_path, capsys, use):
    assert _step_found(tmp_path, capsys, use) == {}


def test_a_method_of_the_same_name_on_an_object_the_file_does_not_build_is_not_its_call(tmp_path, capsys):
    """`progress.update(1)` is tqdm's; the learner's callers are not in this file, so its number may be needed."""
    text = STEP.replace("{use}", "progress.update(1)").replace(
        "    def run_alone(model, optimizer, batches):\n        learner = Learner(model, optimizer)\n"
        "        for batch in batches:\n            learner.update(batch)\n",
        "",
    ).replace("            self.learner = Learner(model, optimizer)\n", "            self.learner = model\n")
    assert messages_by_code_and_row(tmp_path, capsys, {"pipeline.py": text}, "TL003,TL005") == {}


BATCHES = """\
    import torch


    class AdversarialTrainer:
        def __init__(self, model, optimizer, criterion):
            self.model, self.optimizer, self.criterion = model, optimizer, criterion

        def _batch_process(self, x, y):
            x, y = x.to("cuda"), y.to("cuda")
            self.optimizer.zero_grad()
            outputs = self.model(x)
            loss = self.criterion(outputs, y)
            loss.backward()
            self.optimizer.step()
            batch_loss = loss.item() * y.size(0)
            batch_acc = (outputs.max(1)[1] == y).sum().item()
            return batch_loss, batch_acc, y.size(0)

        def fit(self, batches, best):
            train_loss = train_acc = train_n = 0.0
            for x, y in batches:
                {use}
            return train_loss / train_n, train_acc / train_n
"""
BATCH_READS = [("TL003", 15), ("TL003", 16)]  # `loss.item()` and the count's `.item()`


@pytest.mark.parametrize(
    "use, reported",
    [
        ("_loss, _acc, _n = self._batch_process(x, y)\ntrain_loss += _loss\ntrain_acc += _acc\ntrain_n += _n", True),
        ("_loss, _acc, _ = self._batch_process(x, y)\ntrain_loss += _loss\ntrain_acc += _acc", True),
        ("_loss, _acc, _n = self._batch_process(x, y)\ntrain_loss += _loss\nif _acc > best:\n    break", False),
    ],
)
def test_a_tuple_its_caller_unpacks_and_sums_is_recorded(tmp_path, capsys, use, reported):
    text = BATCHES.replace("{use}", use.replace("\n", "\n" + " " * 16))
    found = messages_by_code_and_row(tmp_path, capsys, {"trainer.py": text}, "TL003,TL005")
    assert sorted(found) == (BATCH_READS if reported else []), found


PRINTLOG = """\
    import torch


    class Pipeline:
        def _printlog(self, message, printout=True):
            \"\"\"Print and log a line.\"\"\"
            if printout:
                print(message)
            {more}

        def train(self, loader, model, optimizer):
            for step, batch in enumerate(loader):
                loss = model(batch.to("cuda")).mean()
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                self._printlog("step: {}, loss: {}".format(step, loss.item()), printout=False)
"""


@pytest.mark.parametrize(
    "more, reported",
    [
        ("self.logger.info(message)", True),
        ("pass", True),
        ("self.history.append(message)", True),  # a list of lines is a record too
        ("self.last_line = message", False),  # it keeps the text: what reads it may need the number
        ("return message", False),
        ("self.send(message)", False),  # hands it to code that is not a logging call
    ],
)
def test_a_routine_of_the_file_that_only_reports_records_what_it_is_given(tmp_path, capsys, more, reported):
    """trankit's `self._printlog(...)`: its body prints and logs the line, and does nothing else with it."""
    found = messages_by_code_and_row(tmp_path, capsys, {"pipeline.py": PRINTLOG.replace("{more}", more)}, "TL003,TL005")
    assert list(found) == ([("TL003", 17)] if reported else []), found


def test_a_name_two_classes_define_reports_only_if_both_do(tmp_path, capsys):
    other = '''

    class Other:
        def _printlog(self, message):
            self.lines = message
'''
    text = PRINTLOG.replace("{more}", "self.logger.info(message)") + other
    assert messages_by_code_and_row(tmp_path, capsys, {"pipeline.py": text}, "TL003,TL005") == {}


FORMATTED = """\
    import logging

    import torch


    def train(model, loader, optimizer, fmt, channel):
        for step, batch in enumerate(loader):
            loss = model(batch.to("cuda")).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            {use}
"""


@pytest.mark.parametrize(
    "use, reported",
    [("logging.info(fmt.format(step, loss.item()))", True), ("channel.send(fmt.format(step, loss.item()))", False)],
)
def test_a_number_read_into_a_format_string_kept_in_a_name_is_recorded(tmp_path, capsys, use, reported):
    """The same `fmt.format(...)` the callers of a step may log its number with, read in the loop itself."""
    found = messages_by_code_and_row(tmp_path, capsys, {"train.py": FORMATTED.replace("{use}", use)}, "TL003,TL005")
    assert list(found) == ([("TL003", 12)] if reported else []), found
