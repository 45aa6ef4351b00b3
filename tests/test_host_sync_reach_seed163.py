"""TL003 and TL005 where the seed-163 recall scan (bench/tl003_recall_judged_seed163.jsonl) found
training code the rules did not reach: a parameter rebound under its own None-check (`if num_boxes
is None: num_boxes = ...`, `if bbox_pred is not None: bbox_pred = decode(...)`: the caller passes it
or not alike on every step), a head derived from an OpenMMLab codebase's model class
(`mmdet.models.dense_heads.AnchorHead`) and its `forward_train`, which mmcv-era detectors run on
every step, and a name rebound to the synced number and only recorded after (`loss = loss.item()`).
Each with the twin the rules must leave alone. Through the real CLI, in process."""

from __future__ import annotations

import textwrap

from cli_support import messages_by_code_and_row


def _rows(tmp_path, capsys, files, select="TL003,TL005"):
    return messages_by_code_and_row(tmp_path, capsys, files, select)


CRITERION = """\
    import torch
    import torch.nn as nn


    class SetCriterion(nn.Module):
        def forward(self, outputs, targets, {parameter}):
            {check}
                {name} = torch.as_tensor([len(targets)], dtype=torch.float, device=outputs.device)
                {name} = torch.clamp({name}, min=1).item()
            return outputs.sum() / {name}
"""


def test_a_parameter_filled_in_under_its_none_check_runs_on_every_step(tmp_path, capsys):
    """`if num_boxes is None:` holds on every call of a caller that leaves it out (Mask2Former's)."""
    text = CRITERION.format(parameter="num_boxes=None", check="if num_boxes is None:", name="num_boxes")
    found = _rows(tmp_path, capsys, {"criterion.py": text})
    assert list(found) == [("TL003", 9)]
    assert "`SetCriterion.forward`" in found[("TL003", 9)]


def test_a_local_made_by_the_step_under_its_none_check_is_still_rare(tmp_path, capsys):
    """A value the step computes may be None this step and not the next (`evicted = cache.push(x)`)."""
    text = CRITERION.format(
        parameter="cache", check="count = cache.get('count')\n            if count is None:", name="count"
    )
    assert _rows(tmp_path, capsys, {"criterion.py": text}) == {}


HEAD = """\
    import torch
    from {module} import {base}


    class FaceHead({base}):
        def forward_train(self, feats, gt_bboxes):
            scores = self(feats)
            return self.loss(scores, gt_bboxes)

        def loss(self, scores, gt_bboxes):
            losses = []
            for score, boxes in zip(scores, gt_bboxes):
                count = boxes.new_tensor([len(boxes)])
                losses.append(score.sum() / max(count.item(), 1.0))
            return sum(losses)
"""


def test_forward_train_of_a_head_derived_from_an_openmmlab_model_class_is_hot(tmp_path, capsys):
    text = HEAD.format(module="mmdet.models.dense_heads.anchor_head", base="AnchorHead")
    found = _rows(tmp_path, capsys, {"head.py": text}, select="TL003")
    assert list(found) == [("TL003", 14)]
    assert "(reached from `FaceHead.forward_train` via `loss`)" in found[("TL003", 14)]


def test_a_class_from_an_openmmlab_task_module_is_no_model(tmp_path, capsys):
    """Assigners and samplers are no modules: nothing says a step runs their methods."""
    text = HEAD.format(module="mmdet.models.task_modules.assigners", base="MaxIoUAssigner")
    assert _rows(tmp_path, capsys, {"head.py": text}, select="TL003") == {}


def test_forward_train_of_any_module_is_hot(tmp_path, capsys):
    text = HEAD.format(module="torch.nn", base="Module")
    assert list(_rows(tmp_path, capsys, {"head.py": text}, select="TL003")) == [("TL003", 14)]


def test_forward_of_a_model_class_of_an_openmmlab_codebase_is_hot(tmp_path, capsys):
    text = """\
        from mmseg.models.decode_heads.decode_head import BaseDecodeHead


        class EdgeHead(BaseDecodeHead):
            def forward(self, inputs):
                edges = inputs.sum(1)
                self.stats.append(edges.max().item())
                return edges
    """
    assert list(_rows(tmp_path, capsys, {"edge_head.py": text}, select="TL003")) == [("TL003", 7)]


REBOUND = """\
    def train(model, loader, optimizer, history):
        for x, y in loader:
{before}
            loss = model(x).mean()
            loss.backward()
            optimizer.step()
            loss = loss.item()
{after}
"""


def _rebound(before: str = "", after: str = "") -> str:
    """The loop with `before` at its top and `after` at its end (statements of its body, unindented)."""
    return REBOUND.format(before=textwrap.indent(before, " " * 12), after=textwrap.indent(after, " " * 12))


def test_a_name_rebound_to_the_number_and_only_recorded_after_is_reported(tmp_path, capsys):
    """`loss = loss.item(); history.append(loss)`: the reads of the tensor before (the backward pass) are
    another value's (lightautoml's trainer: `loss = loss.data.cpu().numpy()`)."""
    text = _rebound(after="history.append(loss)")
    assert list(_rows(tmp_path, capsys, {"train.py": text}, select="TL003")) == [("TL003", 7)]


def test_a_name_rebound_to_the_number_and_branched_on_after_is_a_host_value(tmp_path, capsys):
    text = _rebound(after="history.append(loss)\nif loss > 10:\n    break")
    assert _rows(tmp_path, capsys, {"train.py": text}, select="TL003") == {}


def test_the_last_value_of_a_rebound_name_is_read_on_the_next_turn(tmp_path, capsys):
    """Read at the top of the loop before the name is bound again, the number decides a branch."""
    text = _rebound(before="if history and loss > 10:\n    break", after="history.append(loss)")
    assert _rows(tmp_path, capsys, {"train.py": text}, select="TL003") == {}
