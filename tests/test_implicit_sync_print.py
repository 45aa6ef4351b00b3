"""TL005 on `print` of a tensor in a hot path (found by the seed-197 recall sample,
bench/tl003_recall_judged_seed197.jsonl: flood_forecast's `RMSELoss.forward` prints its standard deviation
on every step): formatting a tensor reads its values on the host. Only the builtin `print`, and only an
evident tensor (a reduction, also through a name bound once to one, or inside an f-string); its twins
print sizes, strings and a plain variable. Through the real CLI, in process."""

from __future__ import annotations

from cli_support import messages_by_code_and_row

LOSS = """\
    import torch
    from torch import nn


    class RMSELoss(nn.Module):
        def forward(self, output, target):
            diff = target - output
            std_dev = torch.std(diff)
            print("std_dev", std_dev)
            print(f"mean {diff.mean():.3f}, var {diff.var()}")
            print("sizes", diff.shape, output.size(0), f"{len(diff)} rows")
            print(diff)
            return torch.sqrt((diff ** 2).mean()) + std_dev
"""


def test_print_of_an_evident_tensor_reads_it_on_the_host(tmp_path, capsys):
    found = messages_by_code_and_row(tmp_path, capsys, {"loss.py": LOSS}, "TL005")
    assert sorted(found) == [("TL005", 9), ("TL005", 10)], found
    assert found[("TL005", 9)].startswith("`print()` of a tensor in `RMSELoss.forward` reads a tensor on the host")


def test_a_print_imported_from_elsewhere_is_not_the_builtin(tmp_path, capsys):
    source = LOSS.replace("    import torch\n", "    import torch\n    from mylogging import print\n", 1)
    assert messages_by_code_and_row(tmp_path, capsys, {"loss.py": source}, "TL005") == {}
