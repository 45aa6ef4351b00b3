"""TL005 where the seed-167 recall scan (bench/tl003_recall_judged_seed167.jsonl) found training code
the rule left out by default: `int()` of a count summed into a running total on every step
(torch_geometric's GLEM: `total_correct += int(out.argmax(dim=-1).eq(labels).sum())`). `int()` of a
tensor is otherwise a size (an allocation's length, a loop's count: option `check-sizes`), and a
total is no size. The twins: an `int()` used as a size, a size filled in under its None-check, and a
running count that builds a sequence.
A modulo branch whose divisor is a parameter that defaults to 1 (pykan's `fit(..., log=1)` and
`if _ % log == 0:`, from the seed-163 sample) runs on every step unless the caller says otherwise;
the twins: a default above 1, and a divisor the caller must give. Through the real CLI, in process."""

from __future__ import annotations

import textwrap

from cli_support import messages_by_code_and_row

LOOP = """\
    import torch


    def train(model, loader, optimizer):
        total_loss = total_correct = 0
        for x, labels in loader:
            out = model(x)
            loss = out.logsumexp(-1).mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            total_loss += float(loss.detach())
{line}
        return total_loss / len(loader), total_correct
"""


def _rows(tmp_path, capsys, line: str) -> dict:
    text = LOOP.format(line=textwrap.indent(line, " " * 12))
    return messages_by_code_and_row(tmp_path, capsys, {"train.py": textwrap.dedent(text)}, "TL003,TL005")


def test_int_of_a_count_summed_into_a_running_total_is_a_read_on_every_step(tmp_path, capsys):
    found = _rows(tmp_path, capsys, "total_correct += int(out.argmax(dim=-1).eq(labels).sum())")
    assert list(found) == [("TL005", 12), ("TL005", 13)]
    assert "`int()` of a tensor" in found[("TL005", 13)]


def test_int_of_a_tensor_used_as_a_size_stays_with_check_sizes(tmp_path, capsys):
    found = _rows(tmp_path, capsys, "width = int(out.argmax(dim=-1).max()) + 1\ntotal_correct += width * [0]")
    assert list(found) == [("TL005", 12)]


def test_a_size_filled_in_under_its_none_check_is_no_running_total(tmp_path, capsys):
    """torch_geometric's `dim_size = int(index.max()) + 1 if dim_size is None else dim_size`."""
    found = _rows(tmp_path, capsys, "width = int(labels.max()) + 1 if width is None else width\ntotal_correct += width")
    assert list(found) == [("TL005", 12)]


def test_a_running_count_that_builds_a_sequence_is_a_size(tmp_path, capsys):
    found = _rows(tmp_path, capsys, "total_correct += int(labels.sum()) * [1]")
    assert list(found) == [("TL005", 12)]


FIT = """\
    import torch
    from torch import nn


    class KAN(nn.Module):
        def fit(self, data, {log}, steps=100):
            optimizer = torch.optim.LBFGS(self.parameters())
            for step in range(steps):
                loss = self(data).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                if step % log == 0:
                    print("loss %.2e" % loss.item())
"""


def test_a_modulo_branch_on_a_parameter_that_defaults_to_one_runs_on_every_step(tmp_path, capsys):
    found = messages_by_code_and_row(tmp_path, capsys, {"kan.py": textwrap.dedent(FIT.format(log="log=1"))}, "TL003")
    assert list(found) == [("TL003", 14)]


def test_a_modulo_branch_on_a_larger_default_or_a_required_divisor_is_periodic(tmp_path, capsys):
    for log in ("log=50", "log"):
        found = messages_by_code_and_row(tmp_path, capsys, {"kan.py": textwrap.dedent(FIT.format(log=log))}, "TL003")
        assert list(found) == [], log
