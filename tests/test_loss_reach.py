"""TL003 reaches the loss code a training step runs through something other than a direct
`self.method()` call, through the real CLI (issue 31 item 6): a criterion passed as a
parameter or built by a factory, a loss method called on a submodule, a loss method handed
to a call. Each with a twin the rule must leave alone."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import run_torchlint, write_tree

# a criterion that is no `...Loss` by name: its host count is reported only as loss code
FOCAL = (
    "import torch\nfrom torch import nn\n\n\nclass Focal(nn.Module):\n    def forward(self, scores, positive):\n"
    "        k = int(positive.sum().item())\n        return torch.topk(scores.view(-1), 3 * k)[0].mean()\n\n\n"
    "def build_criterion(name):\n    return Focal()\n"
)
LOOP = (
    "    for x, y in loader:\n        loss = {criterion}(model(x), y)\n        loss.backward()\n        opt.step()\n"
)


def check(root: Path, *args: str) -> list:
    completed = run_torchlint("check", "--no-cache", "--select", "TL003", "--output-format", "json-lines", *args, ".", cwd=root)
    stderr = completed.stderr.decode("utf-8", "replace")
    assert completed.returncode in (0, 1) and "error" not in stderr, stderr
    return [json.loads(line) for line in completed.stdout.decode("utf-8").splitlines() if line.strip()]


def places(findings: list) -> list:
    return sorted((f["filename"].replace("\\", "/").rsplit("/", 1)[-1], f["location"]["row"]) for f in findings)


def test_a_criterion_passed_as_a_parameter_is_what_the_callers_pass(tmp_path):
    train = (
        "from pkg.losses import Focal\n\n\ndef train(model, loader, opt, criterion):\n" + LOOP.format(criterion="criterion")
        + "\n\ndef main(model, loader, opt):\n    train(model, loader, opt, Focal())\n"
    )
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/losses.py": FOCAL, "pkg/train.py": train})
    findings = check(root)
    assert places(findings) == [("losses.py", 7)]
    assert "called as `criterion` by the training loop in `train`" in findings[0]["message"]


def test_a_parameter_that_receives_another_criterion_leaves_the_class_alone(tmp_path):
    train = (
        "from torch import nn\nfrom pkg.losses import Focal\n\n\ndef train(model, loader, opt, criterion):\n"
        + LOOP.format(criterion="criterion")
        + "\n\ndef main(model, loader, opt):\n    train(model, loader, opt, nn.MSELoss())\n    print(Focal())\n"
    )
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/losses.py": FOCAL, "pkg/train.py": train})
    assert check(root) == []


def test_a_criterion_built_by_a_factory_is_what_the_factory_returns(tmp_path):
    fit = "from pkg.losses import build_criterion\n\n\ndef fit(model, loader, opt):\n    criterion = build_criterion('focal')\n"
    root = write_tree(
        tmp_path, {"pkg/__init__.py": "", "pkg/losses.py": FOCAL, "pkg/fit.py": fit + LOOP.format(criterion="criterion")}
    )
    assert places(check(root)) == [("losses.py", 7)]


def test_a_factory_built_metric_that_no_backward_pass_differentiates_is_no_criterion(tmp_path):
    fit = (
        "from pkg.losses import build_criterion\n\n\ndef fit(model, loader, opt):\n    metric = build_criterion('focal')\n"
        "    for x, y in loader:\n        loss = model(x).mean()\n        loss.backward()\n        opt.step()\n"
        "        print(metric(model(x), y))\n"
    )
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/losses.py": FOCAL, "pkg/fit.py": fit})
    assert check(root) == []


HEAD = (
    "import lightning as L\nfrom torch import nn\n\n\nclass ActionHead(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.proj = nn.Linear(8, 4)\n\n    def forward(self, x):\n        return self.proj(x)\n\n"
    "    def loss_fn(self, logits, actions):\n        valid = int((actions >= 0).sum().item())\n"
    "        return nn.functional.cross_entropy(logits, actions.clamp_min(0), reduction='sum') / max(valid, 1)\n\n\n"
    "class Policy(L.LightningModule):\n    def __init__(self):\n        super().__init__()\n"
    "        self.action_head = ActionHead()\n\n    def training_step(self, batch, batch_idx):\n"
    "        logits = self.action_head(batch['obs'])\n"
)


def test_a_loss_method_called_on_a_submodule_is_followed_into_its_class(tmp_path):
    source = HEAD + "        return self.action_head.loss_fn(logits, batch['actions'])\n"
    root = write_tree(tmp_path, {"policy.py": source})
    findings = check(root)
    assert places(findings) == [("policy.py", 14)]
    assert "via `ActionHead.loss_fn`" in findings[0]["message"]
    check(root, "--fix", "--unsafe-fixes")
    fixed = (root / "policy.py").read_text()
    assert "valid = (actions >= 0).sum().detach().long()" in fixed
    assert "/ valid.clamp_min(1)" in fixed


def test_a_submodule_method_no_step_calls_stays_quiet(tmp_path):
    source = HEAD + "        return logits.mean()\n\n    def on_train_epoch_end(self):\n        self.action_head.loss_fn(None, None)\n"
    assert check(write_tree(tmp_path, {"policy.py": source})) == []


REDIRECTED = (
    "import lightning as L\nfrom torch import nn\n\n\nclass Distiller(L.LightningModule):\n    def __init__(self, model):\n"
    "        super().__init__()\n        self.model = model\n\n    def {hook}(self, batch, batch_idx):\n"
    "        return self._forward_redirection(self.model, self, self._compute_loss, batch)\n\n"
    "    def _compute_loss(self, batch):\n        logits = self.model(batch['x'])\n        mask = batch['labels'] != -100\n"
    "        n_tokens = int(mask.sum().item())\n"
    "        return nn.functional.cross_entropy(logits[mask], batch['labels'][mask], reduction='sum') / n_tokens\n"
)


def test_a_loss_method_handed_to_a_call_runs_in_the_step(tmp_path):
    root = write_tree(tmp_path, {"distill.py": REDIRECTED.format(hook="training_step")})
    findings = check(root)
    assert places(findings) == [("distill.py", 16)]
    assert "via `_compute_loss`" in findings[0]["message"]


def test_a_loss_method_handed_to_a_call_of_an_epoch_hook_stays_quiet(tmp_path):
    root = write_tree(tmp_path, {"distill.py": REDIRECTED.format(hook="on_train_epoch_end")})
    assert check(root) == []


# a loss that picks its method in `__init__` and calls it through an attribute
CHOSEN_METHOD = (
    "import torch\nfrom torch import nn\n\n\nclass PairLoss(nn.Module):\n    def __init__(self, mat_based=True):\n"
    "        super().__init__()\n        self.loss_method = self.mat_loss if mat_based else self.pair_loss\n"
    "        self.scale = self.default_scale\n\n"
    "    def forward(self, mat, labels):\n        return self.loss_method(mat, labels) * self.scale\n\n"
    "    def mat_loss(self, mat, labels):\n        k = int(labels.sum().item())\n        return mat.topk(k)[0].mean()\n\n"
    "    def pair_loss(self, mat, labels):\n        return mat.mean()\n\n"
    "    def rarely(self, mat):\n        return mat.max().item()\n"
)


def test_a_method_set_on_self_in_init_is_what_a_call_through_it_runs(tmp_path):
    root = write_tree(tmp_path, {"losses.py": CHOSEN_METHOD})
    # `mat_loss` runs from `forward` through `self.loss_method`; `rarely` is called by nothing
    findings = check(root)
    assert places(findings) == [("losses.py", 15)]
    assert "reached from `PairLoss.forward`" in findings[0]["message"]
    # unbound, nothing in the tree calls `mat_loss`: it is a module's loss method that code outside the tree may
    # run on every step, said so; `rarely`, named as no loss, stays quiet
    unbound = CHOSEN_METHOD.replace("self.mat_loss if mat_based else self.pair_loss", "None")
    findings = check(write_tree(tmp_path / "unbound", {"losses.py": unbound}))
    assert places(findings) == [("losses.py", 15)]
    assert "(a module's loss method runs on every training step)" in findings[0]["message"]
