"""Training loops as hot paths (issue 22): what TL003 reports in hand-written training
code, the shared analyses it reads (training loops, value kinds) and their two forms."""

from __future__ import annotations

import ast
import json
import textwrap

import pytest

from cli_support import write_tree
from torchlint import cli
from torchlint.analysis.loop_facts import Criterion, LoopFacts
from torchlint.analysis.loop_graph import LoopGraph
from torchlint.analysis.training_loops import ast_training_call, cst_owners, loop_facts
from torchlint.analysis.value_kinds import Kind, NameKinds, cst_bindings
from torchlint.core.lazy import cst
from torchlint.analysis.names import ImportMap
from torchlint.analysis.source_view import SourceView
from torchlint.analysis.scopes import own_nodes
from torchlint.core.walk import ast_nodes


def _check(tmp_path, capsys, files, *flags):
    write_tree(tmp_path, {name: textwrap.dedent(text) for name, text in files.items()})
    capsys.readouterr()
    code = cli.main(["check", "--no-cache", "--select", "TL003", "--output-format", "json", *flags, str(tmp_path)])
    found = json.loads(capsys.readouterr().out)
    return code, [(item["filename"].rsplit("/", 1)[-1], item["location"]["row"], item["message"], item["fix"]) for item in found]


def _fixed(tmp_path, capsys, name, text, *flags):
    write_tree(tmp_path, {name: textwrap.dedent(text)})
    capsys.readouterr()
    cli.main(["check", "--no-cache", "--select", "TL003", "--fix", *flags, str(tmp_path)])
    capsys.readouterr()
    return (tmp_path / name).read_text()


LOOP = """\
import torch


def train(model, loader, optimizer):
    for x, y in loader:
        loss = model(x, y)
        {step}
        print(loss.item())
"""


@pytest.mark.parametrize(
    "step",
    [
        "loss.backward()",
        "scaler.scale(loss).backward()",
        "accelerator.backward(loss)",
        "fabric.backward(loss)",
        "torch.autograd.backward(loss)",
        "torch.autograd.grad(loss, x)",
        "optimizer.step()",
        "scaler.step(optimizer)",
        "self.d_optim.step()",
    ],
)
def test_a_loop_that_runs_a_backward_pass_or_a_step_is_hot(step, tmp_path, capsys):
    code, found = _check(tmp_path, capsys, {"train.py": LOOP.format(step=step)})
    assert code == 1
    assert [(f[0], f[1]) for f in found] == [("train.py", 8)]
    assert "the training loop in `train`" in found[0][2]


@pytest.mark.parametrize("step", ["lr_scheduler.step()", "scheduler.step()", "env.step(action)", "pass"])
def test_a_loop_without_one_is_not(step, tmp_path, capsys):
    assert _check(tmp_path, capsys, {"train.py": LOOP.format(step=step)}) == (0, [])


TRAINER = """\
import torch
from .meters import log_metrics


class Trainer:
    def _train_batch(self, batch):
        loss = self.model(batch)
        loss.backward()
        self.optimizer.step()
        return loss

    def _log(self, loss):
        self.history.append(loss.item())

    def fit(self, loader):
        for batch in loader:
            loss = self._train_batch(batch)
            self._log(loss)
            log_metrics(loss)

    @torch.no_grad()
    def evaluate(self, loader):
        for batch in loader:
            print(self.model(batch).item())

    def validate(self, loader):
        with torch.inference_mode():
            for batch in loader:
                print(self.model(batch).item())


def main(trainer, loader):
    for epoch in range(10):
        trainer.fit(loader)
        score = trainer.model.score()
        print(score.item())
"""
METERS = """\
def log_metrics(loss):
    print(f"loss {loss.item():.3f}")
"""


def test_a_trainer_method_loop_and_what_it_calls_across_files(tmp_path, capsys):
    code, found = _check(tmp_path, capsys, {"pkg/__init__.py": "", "pkg/trainer.py": TRAINER, "pkg/meters.py": METERS})
    assert code == 1
    assert [(f[0], f[1]) for f in found] == [("meters.py", 2), ("trainer.py", 13)]
    assert found[0][2].endswith(f"(reached from the training loop in `Trainer.fit` of `{tmp_path / 'pkg' / 'trainer.py'}` via `log_metrics`)")
    assert found[1][2].endswith("(reached from the training loop in `Trainer.fit` via `Trainer._log`)")


def test_evaluation_loops_are_hot_only_when_asked(tmp_path, capsys):
    files = {"pkg/__init__.py": "", "pkg/trainer.py": TRAINER, "pkg/meters.py": METERS}
    write_tree(tmp_path, {"pyproject.toml": "[tool.torchlint.host-sync-in-hot-path]\ncheck-evaluation-loops = true\n"})
    code, found = _check(tmp_path, capsys, files, "--config", str(tmp_path / "pyproject.toml"))
    assert [(f[0], f[1]) for f in found] == [("meters.py", 2), ("trainer.py", 13), ("trainer.py", 24), ("trainer.py", 29)]


def test_a_step_function_is_hot_itself(tmp_path, capsys):
    text = """\
    def train_step(model, batch, optimizer):
        loss = model(batch)
        loss.backward()
        optimizer.step()
        return {"loss": loss.item()}
    """
    code, found = _check(tmp_path, capsys, {"steps.py": text})
    assert [(f[0], f[1]) for f in found] == [("steps.py", 5)]
    assert "`train_step`" in found[0][2]


HARD_NEGATIVES = """\
import torch
from torch import nn


class BalanceCrossEntropyLoss(nn.Module):
    def forward(self, pred, gt, mask):
        positive = (gt * mask).byte()
        negative = ((1 - gt) * mask).byte()
        positive_count = int(positive.float().sum().item())
        negative_count = min(int(negative.float().sum().item()), positive_count * 3)
        loss = nn.functional.binary_cross_entropy(pred, gt, reduction="none")
        negative_loss, _ = torch.topk((loss * negative.float()).view(-1), negative_count)
        if positive.sum().item() > 0:
            loss = loss * 2
        return loss.sum() + negative_loss.sum()


def dice_loss(pred, gt):
    total = max(gt.sum().item(), 1)
    return (pred * gt).sum() / total


def train(model, loader, optimizer):
    for x, y in loader:
        loss = dice_loss(model(x), y)
        loss.backward()
        optimizer.step()
        for i in y.unique().tolist():
            print(i)
"""


def test_loss_code_reports_host_values_by_default_with_the_rewrite(tmp_path, capsys):
    code, found = _check(tmp_path, capsys, {"losses.py": HARD_NEGATIVES})
    rows = {f[1]: f[2] for f in found}
    assert sorted(rows) == [9, 10, 13, 19]
    assert "sort once and mask by rank instead of `topk`" in rows[9] and "no automatic fix" not in rows[9]
    assert "sort once and mask by rank" in rows[10]
    assert "`torch.where` instead of a Python branch" in rows[13] and "no automatic fix" in rows[13]
    assert "`clamp_min`" in rows[19] and "(reached from the training loop in `train` via `dice_loss`)" in rows[19]
    fixes = {f[1]: f[3] for f in found}
    # the counts and the selection rewritten together by one unsafe fix, carried by the first
    # sync; the branch's own sync and a divisor not known to meet a tensor (`pred` may be
    # anything) keep theirs
    assert fixes[9]["applicability"] == "unsafe" and len(fixes[9]["edits"]) == 3
    assert fixes[10] is None and fixes[13] is None and fixes[19] is None


def test_host_values_elsewhere_stay_behind_the_option(tmp_path, capsys):
    write_tree(tmp_path, {"pyproject.toml": "[tool.torchlint.host-sync-in-hot-path]\ncheck-host-values = true\n"})
    code, found = _check(tmp_path, capsys, {"losses.py": HARD_NEGATIVES}, "--config", str(tmp_path / "pyproject.toml"))
    assert 28 in {f[1] for f in found}


CRITERION = """\
import torch
from torch import nn


class FocalWeighting(nn.Module):
    def forward(self, pred, gt):
        k = int(gt.sum().item())
        n = max(gt.sum().item(), 1)
        if gt.any().item():
            pred = pred * 2
        return torch.topk(pred.view(-1), k)[0].sum() / n
"""
SCRIPT = """\
import torch
{imports}


def train(model, loader, optimizer, scaler):
    criterion = FocalWeighting().to("cuda")
    for x, y in loader:
        out = model(x)
        loss = criterion(out, y).mean()
        scaler.scale(loss).backward()
        optimizer.step()
"""


def test_a_class_called_as_the_criterion_of_a_training_loop_is_loss_code(tmp_path, capsys):
    code, found = _check(tmp_path, capsys, {"train.py": CRITERION + "\n\n" + SCRIPT.format(imports="")})
    rows = {f[1]: f[2] for f in found}
    assert sorted(rows) == [7, 8, 9]
    assert "sort once and mask by rank" in rows[7] and "`clamp_min`" in rows[8] and "`torch.where`" in rows[9]
    assert all(
        message.endswith("(called as `criterion` by the training loop in `train`, whose backward pass it feeds)")
        for message in rows.values()
    )
    assert all(f[3] is None for f in found)


def test_a_criterion_across_files_names_the_route(tmp_path, capsys):
    files = {"pkg/__init__.py": "", "pkg/losses.py": CRITERION, "pkg/train.py": SCRIPT.format(imports="from .losses import FocalWeighting")}
    code, found = _check(tmp_path, capsys, files)
    assert [(f[0], f[1]) for f in found] == [("losses.py", 7), ("losses.py", 8), ("losses.py", 9)]
    assert found[0][2].endswith(
        f"(called as `criterion` by the training loop in `train` of `{tmp_path / 'pkg' / 'train.py'}`, whose backward pass it feeds)"
    )


def test_a_trainers_self_criterion_across_files(tmp_path, capsys):
    trainer = """\
    from losses import FocalWeighting


    class Trainer:
        def __init__(self, model):
            self.model = model
            self.criterion = FocalWeighting()

        def train_step(self, x, y):
            loss = self.criterion(self.model(x), y)
            loss.backward()
            self.optimizer.step()
    """
    code, found = _check(tmp_path, capsys, {"losses.py": CRITERION, "train.py": trainer})
    assert [(f[0], f[1]) for f in found] == [("losses.py", 7), ("losses.py", 8), ("losses.py", 9)]
    assert "(called as `self.criterion` by the step function `Trainer.train_step` of `" in found[0][2]


def test_a_plain_class_called_as_the_criterion_runs_its_call_on_every_step(tmp_path, capsys):
    text = """\
    import torch


    class ComputeLoss:
        def __init__(self, model, autobalance=False):
            self.gr, self.autobalance = 1.0, autobalance

        def __call__(self, p, targets):
            obj = (p - targets).abs().mean()
            if self.autobalance:
                self.balance = 0.9999 + 0.0001 / obj.detach().item()
            self.history.append(obj.item())
            return obj * self.gr


    def train(model, loader, optimizer):
        compute_loss = ComputeLoss(model)
        for x, y in loader:
            loss = compute_loss(model(x), y)
            loss.backward()
            optimizer.step()
    """
    code, found = _check(tmp_path, capsys, {"train.py": text})
    # the `autobalance` block runs only if the caller turns the setting on (set in a tuple assignment)
    assert [f[1] for f in found] == [12]
    assert found[0][2].endswith("(called as `compute_loss` by the training loop in `train`, whose backward pass it feeds)")


def test_a_criterions_own_log_method_gets_no_lightning_fix(tmp_path, capsys):
    text = """\
    class Criterion:
        def __call__(self, p, y):
            loss = (p - y).abs().mean()
            self.log("loss", loss.item())
            return loss


    def train(model, loader, optimizer):
        criterion = Criterion()
        for x, y in loader:
            criterion(model(x), y).backward()
            optimizer.step()
    """
    code, found = _check(tmp_path, capsys, {"train.py": text})
    assert [(f[1], f[3]) for f in found] == [(4, None)]
    assert "(called as `criterion` by the training loop in `train`" in found[0][2]


def test_a_notebooks_criterion(tmp_path, capsys):
    cells = [
        "import torch\nfrom losses import FocalWeighting\ncriterion = FocalWeighting()\n",
        "for x, y in loader:\n    out = model(x)\n    loss = criterion(out, y)\n    loss.backward()\n    opt.step()\n",
    ]
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [], "execution_count": None} for c in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }
    files = {"pyproject.toml": "[tool.torchlint]\n", "losses.py": CRITERION}
    write_tree(tmp_path, {"train.ipynb": json.dumps(notebook)})
    code, found = _check(tmp_path, capsys, files, "--config", str(tmp_path / "pyproject.toml"))
    assert [(f[0], f[1]) for f in found] == [("losses.py", 7), ("losses.py", 8), ("losses.py", 9)]
    # another file is named from the project root, wherever the run starts
    assert "(called as `criterion` by the training loop in the script of `train.ipynb`" in found[0][2]


@pytest.mark.parametrize(
    "use",
    [
        # only in an evaluation loop
        "    with torch.no_grad():\n        for x, y in loader:\n            print(criterion(model(x), y))\n",
        # its result is logged, not differentiated; the model's output is the criterion's input
        "    for x, y in loader:\n        out = model(x)\n        metric = criterion(out, y)\n"
        "        out.sum().backward()\n        optimizer.step()\n        print(metric)\n",
    ],
)
def test_an_instance_whose_result_no_backward_pass_differentiates_is_no_criterion(use, tmp_path, capsys):
    script = "import torch\nfrom losses import FocalWeighting\n\n\ndef train(model, loader, optimizer):\n"
    script += "    criterion = FocalWeighting()\n" + use
    assert _check(tmp_path, capsys, {"losses.py": CRITERION, "train.py": script}) == (0, [])


def test_criterion_facts_follow_the_value_the_backward_pass_differentiates():
    text = """\
import torch
from .nets import Net, Focal


head = Net()


def train(loader, optimizer, scaler):
    model, criterion = Net(), Focal().cuda()
    for x, y in loader:
        with torch.no_grad():
            teacher = head(x)
        out = model(x)
        losses = [criterion(out[0], y), criterion(model(x)[1], y)]
        loss = sum(losses) + 0.1 * head(x, y).mean()
        loss.backward()
        optimizer.step()
"""
    facts = loop_facts(SourceView(text, "pkg/train.py"), criteria=True).owners["pkg.train.train"]
    # `head` returns a loss from the batch alone: a model, not a criterion
    assert facts.criteria == (Criterion(source="pkg.nets.Focal", loop=0, call="criterion"),)
    # a reader without instances first (the loop half of a rule) leaves the criteria to the next one
    view = SourceView(text, "pkg/train.py")
    assert loop_facts(view).owners["pkg.train.train"].criteria == ()
    with_criteria = loop_facts(view, criteria=True)
    assert with_criteria.owners["pkg.train.train"].criteria == facts.criteria
    assert loop_facts(view, criteria=True) is with_criteria  # resolved once per file
    # the record keeps them: what the project pass decodes is what the file pass built
    assert LoopFacts.from_json(json.loads(json.dumps(with_criteria.to_json()))) == with_criteria


NUMPY = """\
import cv2
import numpy as np


def train(model, loader, optimizer, boxes):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
        poly = np.asarray(boxes)
        warped = cv2.perspectiveTransform(poly[None], np.eye(3))
        sizes = [len(b) for b in boxes]
        count = len(boxes) * 2.0
        print(poly.tolist(), warped.reshape(-1).tolist(), sizes.item(), float(count), np.float32(1).item())
"""


def test_numpy_number_and_list_values_are_never_reported(tmp_path, capsys):
    assert _check(tmp_path, capsys, {"train.py": NUMPY}) == (0, [])


ACCUMULATE = """\
def train(model, loader, optimizer, epochs, bar):
    for epoch in range(epochs):
        running = 0.0
        correct = 0
        for step, (x, y) in enumerate(loader):
            logits = model(x)
            loss = logits.sum()
            loss.backward()
            optimizer.step()
            running += loss.item() * x.size(0)
            correct += (logits.argmax(1) == y).sum().item()
            if step % 100 == 0:
                print(logits.mean().item())
        print(f"{epoch}: {running / len(loader):.3f} {correct / 10}")
"""


def test_accumulation_moves_the_host_read_after_the_loop(tmp_path, capsys):
    # a count started at an int sums exactly: safe; a float total adds in float32 where Python added float64
    fixed = _fixed(tmp_path, capsys, "train.py", ACCUMULATE)
    assert "running += loss.item() * x.size(0)" in fixed
    assert "correct += (logits.argmax(1) == y).sum()\n" in fixed
    assert "        correct = int(correct)\n        print(f\"{epoch}" in fixed
    fixed = _fixed(tmp_path, capsys, "train.py", ACCUMULATE, "--unsafe-fixes")
    assert "running += loss.detach() * x.size(0)" in fixed
    assert "        correct = int(correct)\n        running = float(running)\n        print(f\"{epoch}" in fixed
    assert "print(logits.mean().item())" in fixed  # a sync every 100 steps stays quiet
    compile(fixed, "train.py", "exec")


def test_accumulation_fix_is_unsafe_when_a_later_read_is_no_number_context(tmp_path, capsys):
    text = """\
    def train(model, loader, optimizer):
        total = 0.0
        for x in loader:
            loss = model(x)
            loss.backward()
            optimizer.step()
            total += loss.item()
        return total
    """
    assert "total += loss.item()" in _fixed(tmp_path, capsys, "train.py", text)
    fixed = _fixed(tmp_path, capsys, "train.py", text, "--unsafe-fixes")
    assert "total += loss.detach()\n    total = float(total)\n    return total" in fixed


def test_accumulation_fix_is_unsafe_when_an_int_start_meets_a_tensor_of_unknown_dtype(tmp_path, capsys):
    # torchrl's distillation check: `total = 0; total += mask.sum().item()` is an int, which
    # `float(total)` would print as `10.0` in its error message
    text = """\
    def train(model, loader, optimizer):
        total = 0
        for x, valid in loader:
            loss = model(x)
            loss.backward()
            optimizer.step()
            positive = valid & (loss > 0)
            total += positive.sum().item()
        print(f"{total} positive")
    """
    assert "total += positive.sum().item()" in _fixed(tmp_path, capsys, "train.py", text)
    fixed = _fixed(tmp_path, capsys, "train.py", text, "--unsafe-fixes")
    assert "total += positive.sum().detach()\n    total = float(total)\n" in fixed
    # a count of matches started at an int sums exactly: safe; a float start adds in float32: unsafe
    for start, operand, convert, flags in (
        ("0.0", "positive.sum()", "float", ("--unsafe-fixes",)), ("0", "(loss > 0).sum()", "int", ())
    ):
        variant = text.replace("total = 0\n", f"total = {start}\n").replace("positive.sum()", operand)
        assert "total = " + convert + "(total)" not in _fixed(tmp_path, capsys, "train.py", variant) or not flags
        fixed = _fixed(tmp_path, capsys, "train.py", variant, *flags)
        assert f"    total = {convert}(total)\n" in fixed, fixed


def test_no_accumulation_fix_when_the_loop_reads_the_sum(tmp_path, capsys):
    text = """\
    def train(model, loader, optimizer, bar):
        total = 0.0
        for i, x in enumerate(loader):
            loss = model(x)
            loss.backward()
            optimizer.step()
            total += loss.item()
            bar.set_postfix(avg=total / (i + 1))
        return total
    """
    code, found = _check(tmp_path, capsys, {"train.py": text})
    assert [(f[1], f[3]) for f in found] == [(7, None)]


def test_display_every_step_is_reported_and_a_running_mean_too(tmp_path, capsys):
    text = """\
    import logging
    logger = logging.getLogger(__name__)


    def fit(model, loader, optimizer, bar):
        ema = 0.0
        for x in loader:
            loss = model(x)
            loss.backward()
            optimizer.step()
            ema = 0.9 * ema + 0.1 * loss.item()
            bar.set_postfix(loss=model.aux.item())
            logger.info("grad %s", model.weight.grad.norm().item())
    """
    code, found = _check(tmp_path, capsys, {"train.py": text})
    assert [f[1] for f in found] == [11, 12, 13]


def test_hugging_face_trainer_steps_are_hot(tmp_path, capsys):
    text = """\
    from transformers import Trainer


    class MyTrainer(Trainer):
        def training_step(self, model, inputs):
            loss = super().training_step(model, inputs)
            self.losses.append(loss.item())
            return loss
    """
    code, found = _check(tmp_path, capsys, {"train.py": text})
    assert [f[1] for f in found] == [7]


# ---- the analyses: their stdlib-ast and LibCST forms agree ------------------------------

KINDS = [
    ("np.asarray(a)", Kind.HOST), ("cv2.resize(a, s)", Kind.HOST), ("poly.tolist()", Kind.HOST),
    ("poly.reshape(-1)", Kind.HOST), ("x.item()", Kind.HOST), ("[1, 2]", Kind.HOST), ("len(a) * 2", Kind.HOST),
    ("3.0", Kind.HOST), ("t.numpy()", Kind.HOST), ("x.to(device)", Kind.TENSOR), ("torch.from_numpy(poly)", Kind.TENSOR),
    ("t.cuda()", Kind.TENSOR), ("t.sum()", Kind.UNKNOWN), ("t", Kind.UNKNOWN), ("self.x", Kind.UNKNOWN),
    ("loss", Kind.UNKNOWN), ("mixed", Kind.TENSOR), ("math.pi * r", Kind.UNKNOWN), ("math.pi * 2", Kind.HOST),
]
PRELUDE = (
    "import cv2\nimport math\nimport numpy as np\nimport torch\n\n"
    "def f(a, s, t, x, device, r, loss, self):\n    poly = np.asarray(a)\n    mixed = poly if a else t.cuda()\n"
    "    for loss in a:\n        pass\n"
)


@pytest.mark.parametrize("expression, expected", KINDS)
def test_value_kinds(expression, expected):
    source = PRELUDE + f"    return {expression}\n"
    module = cst.parse_module(source)
    cst_function = module.body[-1]
    cst_value = cst_function.body.body[-1].body[0].value
    imports = ImportMap(module)
    assert NameKinds(imports, cst_bindings(own_nodes(cst_function.body))).kind(cst_value) is expected


OWNERS = """\
import torch


def train(model, loader, opt, sched):
    for x in loader:
        opt.zero_grad()
        model(x).backward()
        opt.step()
        def inner():
            for y in x:
                pass
    sched.step()
    for epoch in range(3):
        helper(loader)


def helper(loader):
    for batch in loader:
        step_fn(batch)


def step_fn(batch):
    batch.backward()


class Trainer:
    def fit(self):
        while True:
            self.step()

    def step(self):
        self.optimizer.step()


for x in data:
    torch.autograd.grad(x, y)
"""


def test_training_loops_agree_in_both_forms(tmp_path):
    view = SourceView(OWNERS, "pkg/train.py")
    facts = loop_facts(view).owners
    module = cst.parse_module(OWNERS)
    for qualname, node, _ in cst_owners(module, "pkg.train"):
        body = node if isinstance(node, cst.Module) else node.body
        loops = [n for n in own_nodes(body) if isinstance(n, (cst.For, cst.While))]
        assert len(loops) == len(facts[qualname].loops), qualname
    assert set(facts) == {q for q, _, _ in cst_owners(module, "pkg.train")}
    ast_calls = [ast_training_call(n, view.imports) for n in ast_nodes(view.tree) if isinstance(n, ast.Call)]
    assert sum(ast_calls) == 5
    graph = LoopGraph({"pkg/train.py": LoopFacts(facts)})
    assert graph.steps == {"pkg.train.step_fn", "pkg.train.Trainer.step"}
    hot = {(q, i) for q, o in facts.items() for i in range(len(o.loops)) if graph.hot_loop(q, i)}
    assert hot == {
        ("pkg.train.train", 0), ("pkg.train.helper", 0), ("pkg.train.Trainer.fit", 0), ("pkg.train.<module>", 0)
    }


def test_an_epoch_loop_that_finishes_a_partial_accumulation_is_not_hot(tmp_path, capsys):
    text = """\
    class Model:
        def _step(self, x):
            self.loss_fn(self.net(x)).backward()
            self.optimizer.step()

        def fit(self, epochs):
            for loader in epochs:
                did_step = False
                for x in loader:
                    did_step = self._step(x)
                if not did_step:
                    self.optimizer.step()
                print(self.metric.compute().item())

        def fit_accumulated(self, batches):
            for chunks in batches:
                for x in chunks:
                    self.loss_fn(self.net(x)).backward()
                self.optimizer.step()
                print(self.metric.compute().item())
    """
    code, found = _check(tmp_path, capsys, {"model.py": text})
    assert [f[1] for f in found] == [20]


def test_a_display_string_built_by_concatenation_or_percent_is_a_display(tmp_path, capsys):
    text = """\
    def train(model, loader, opt, bar, eps):
        for x in loader:
            err = model(x)
            err.backward()
            opt.step()
            bar.set_description(f"loss {err.item()} " f"norm {x.norm().item()}" "(eps %.2f)" % eps)
    """
    code, found = _check(tmp_path, capsys, {"train.py": text})
    assert [(f[1], f[2].split(" in ")[0]) for f in found] == [(6, "`.item()`"), (6, "`.item()`")]
