"""TL003 on a number an optimizer's closure keeps for the code around it (found by the seed-193 recall
sample, bench/tl003_recall_judged_seed193.jsonl: neurodiffeq's `_run_epoch` builds a closure that runs
the backward pass and stores `batch_loss = loss.item()` in a `nonlocal` name the epoch loop sums). A
`nonlocal` or `global` name is kept for the code around the function, as an attribute of `self` is;
a plain local that nothing reads is not. Through the real CLI, in process."""

from __future__ import annotations

import pytest

from cli_support import messages_by_code_and_row

CLOSURE = """\
    import torch


    class Solver:
        def _run_epoch(self, loader):
            epoch_loss = 0.0
            batch_loss = 0.0
            for batch in loader:

                def closure():
                    {declaration}
                    self.optimizer.zero_grad()
                    loss = self.loss_fn(batch)
                    loss.backward()
                    batch_loss = loss.item()
                    return loss

                self.optimizer.step(closure=closure)
                epoch_loss += batch_loss
            return epoch_loss
"""


@pytest.mark.parametrize("declaration", ["nonlocal batch_loss", "global batch_loss"])
def test_a_number_kept_in_an_outer_name_is_recorded(tmp_path, capsys, declaration):
    source = CLOSURE.replace("{declaration}", declaration)
    found = messages_by_code_and_row(tmp_path, capsys, {"solver.py": source}, "TL003")
    assert sorted(found) == [("TL003", 15)], found
    assert "in `closure`" in found[("TL003", 15)]


def test_the_same_store_in_a_plain_local_keeps_the_answer_for_unread_names(tmp_path, capsys):
    source = CLOSURE.replace("{declaration}", "pass")
    assert messages_by_code_and_row(tmp_path, capsys, {"solver.py": source}, "TL003") == {}
