"""Valid but deeply nested code never crashes a rule: every rule still reports, through
the CLI and through flake8; LibCST's recursion runs on a deep stack."""

from __future__ import annotations

import json
import pytest

from cli_support import run_torchlint
from flake8_support import run_flake8

# Each rule's default shape: an unread-at-import heavy import used in a function (TL001), a
# conv fed a channel concatenation of as many parts as the caller passes (TL002), an
# .item() in forward on a value nothing read before (TL003), double backward through an
# LSTM (TL004).
MODULE = '''import torch
import torch.nn as nn
import wandb
from torch.autograd import grad


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.lstm = nn.LSTM(4, 4)

    def forward(self, x, skip):
        y = self.lstm(x)[0]
{deep}
        print(y.sum().item())
        return self.conv(torch.cat([x, *skip], dim=1))

    def score(self, x):
        return grad(self(x, [x]).sum(), x, create_graph=True)[0]


def log():
    wandb.log({{}})
'''
ALL_RULES = ["TL001", "TL002", "TL003", "TL004"]


def _elifs(count: int) -> str:
    branches = "".join(f"        elif y == {i}:\n            print(x.item())\n" for i in range(1, count))
    return "        if y == 0:\n            print(x.item())\n" + branches


DEEP = {
    "elif-317": _elifs(317),
    "elif-2000": _elifs(2000),
    "brackets-140": "        z = " + "[" * 140 + "x.item()" + "]" * 140,
    "sum-319": "        z = " + " + ".join(["x.item()"] * 319),
    "strings-319": "        z = x.view(" + " ".join(f"'s{i}'" for i in range(319)) + ")",
    "calls-190": "        z = " + "torch.relu(" * 190 + "x" + ")" * 190,
}


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_every_rule_runs_on_deeply_nested_valid_code(tmp_path, shape):
    text = MODULE.format(deep=DEEP[shape])
    compile(text, "model.py", "exec")  # valid Python
    (tmp_path / "model.py").write_text(text)
    completed = run_torchlint("check", "--no-cache", "--output-format", "json", "model.py", cwd=tmp_path)
    assert completed.stderr.decode() == ""
    assert completed.returncode == 1
    codes = {finding["code"] for finding in json.loads(completed.stdout)}
    assert set(ALL_RULES) <= codes


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["elif-317", "sum-319", "brackets-140"])  # pyflakes fails on elif-2000
def test_flake8_plugin_on_deeply_nested_valid_code(tmp_path, shape):
    (tmp_path / "model.py").write_text(MODULE.format(deep=DEEP[shape]))
    completed = run_flake8("--select", "TL", "--format", "%(code)s", "model.py", cwd=tmp_path)
    assert completed.stderr == ""
    assert set(ALL_RULES) <= set(completed.stdout.split())


def test_an_elif_chain_costs_linear_work(tmp_path, monkeypatch):
    """Each branch of an `elif` chain is classified once (periodic? an error path? what
    it writes), not once per finding below it: doubling the chain doubles the work."""
    import torchlint.analysis.every_step as step_branches
    import torchlint.analysis.sync_history as sync_history

    counts = {}

    def counting(module, name):
        original = getattr(module, name)

        def counted(*args, **kwargs):
            counts[name] = counts.get(name, 0) + 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)

    for module, name in ((step_branches, "_periodic"), (step_branches, "_error_level"), (sync_history, "children")):
        counting(module, name)
    work = []
    for size in (200, 400):
        counts.clear()
        (tmp_path / "model.py").write_text(MODULE.format(deep=_elifs(size)))
        completed = run_torchlint("check", "--no-cache", "--select", "TL003", "--output-format", "json", "model.py",
                                  cwd=tmp_path)
        assert len(json.loads(completed.stdout)) >= size
        work.append(dict(counts))
    for name in ("_periodic", "_error_level", "children"):
        assert work[1][name] < 2.5 * work[0][name], (name, work)
