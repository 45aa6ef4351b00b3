"""TL003 where the seed-191 recall scan (bench/tl003_recall_judged_seed191.jsonl) found numbers read on every
update only to be stored in a logger: OmniSafe's `self._logger.store({'Loss/Loss_pi': loss.item(), ...})` and
`self._logger.store(**{...})`, the form of Spinning Up's `logger.store(LossPi=...)`. Its twin, a replay
buffer's `store`, keeps data the host reads: that stays with `check-host-values`. Through the real CLI, in
process."""

from __future__ import annotations

import pytest

from cli_support import messages_by_code_and_row

UPDATE = """\
    import torch


    class Agent:
        def update(self, batch):
            loss = self.critic(batch.to("cuda")).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            {store}
"""


@pytest.mark.parametrize(
    "store, reported",
    [
        ("self._logger.store({'Loss/Loss_critic': loss.item()})", True),
        ("self._logger.store(**{'Loss/Loss_critic': loss.item()})", True),
        ("logger.store(LossQ=loss.item())", True),
        ("self.buffer.store(batch, loss.item())", False),
        ("self.store(loss.item())", False),
    ],
)
def test_a_number_stored_in_a_logger_is_recorded(tmp_path, capsys, store, reported):
    found = messages_by_code_and_row(tmp_path, capsys, {"agent.py": UPDATE.replace("{store}", store)}, "TL003,TL005")
    assert list(found) == ([("TL003", 10)] if reported else []), found
