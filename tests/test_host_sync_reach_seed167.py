"""TL005 where the seed-167 recall scan (bench/tl003_recall_judged_seed167.jsonl) found training code
the rule left out by default: `int()` of a count summed into a running total on every step
(torch_geometric's GLEM: `total_correct += int(out.argmax(dim=-1).eq(labels).sum())`). `int()` of a
tensor is otherwise a size (an allocation's length, a loop's count: option `check-sizes`), and a
total is no size. The twins: an `int()` used as a size, a size filled in under its None-check, and a
running count that builds a sequence.
Through the real CLI, in process."""

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
