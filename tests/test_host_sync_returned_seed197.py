"""TL003 on a number a training step returns to callers that store it for a record (found by the seed-197
recall sample, bench/tl003_recall_judged_seed197.jsonl: flood_forecast's DA-RNN `train_iteration` returns
`loss.item()` and its loop stores it in an array, `iter_losses[i] = loss`). Stored in an item or an
attribute of a name, the number is recorded, as the same store of the number in the step itself is;
its twin, a caller that branches on the number, needs it on the host. Through the real CLI, in process."""

from __future__ import annotations

import pytest

from cli_support import messages_by_code_and_row

TRAIN = """\
    import numpy as np


    def train(net, loader, n_epochs, history):
        iter_losses = np.zeros(100)
        for e_i in range(n_epochs):
            for t_i, batch in enumerate(loader):
                loss = train_iteration(net, batch)
                {use}


    def train_iteration(t_net, batch):
        t_net.opt.zero_grad()
        loss = t_net(batch)
        loss.backward()
        t_net.opt.step()
        return loss.item()
"""


@pytest.mark.parametrize(
    "use", ["iter_losses[t_i] = loss", "history.last_loss = loss", "iter_losses[t_i] = history[t_i] = loss"]
)
def test_a_returned_number_the_caller_stores_is_recorded(tmp_path, capsys, use):
    found = messages_by_code_and_row(tmp_path, capsys, {"train.py": TRAIN.replace("{use}", use)}, "TL003")
    assert sorted(found) == [("TL003", 17)], found
    assert "its callers here only sum, log or drop the number it returns" in found[("TL003", 17)]


def test_a_caller_that_branches_on_it_needs_it_on_the_host(tmp_path, capsys):
    use = "iter_losses[t_i] = loss\n                if loss > 10:\n                    break"
    assert messages_by_code_and_row(tmp_path, capsys, {"train.py": TRAIN.replace("{use}", use)}, "TL003") == {}
