"""TL004 on names bound to each other (`f = g; g = f`) nested in two function transforms
(issue 30): `transform_of` followed the bindings round the cycle until the recursion limit
(seconds of CPU, then `rule TL004 crashed: RecursionError`, and the file lost its TL004
findings). A name followed again is now a dead end: the file is linted as usual."""

from __future__ import annotations

import json

from cli_support import run_torchlint, write_tree
from test_tl004_binding_forms import CRITIC

SOURCE = (
    "import torch\n"
    "from torch import nn\n\n\n"
    + CRITIC
    + "\n\n"
    "def penalty(critic, x):\n"
    "    (grads,) = torch.autograd.grad(critic(x), x, create_graph=True)\n"
    "    return grads.norm()\n\n\n"
    "def build(x, fn):\n"
    "    f = g\n"
    "    g = f\n"
    "    h = torch.func.grad(torch.func.grad(f))\n"
    "    return h(x)\n\n\n"
    "critic = Critic()\n"
    "penalty(critic, torch.randn(2, 3, 8, requires_grad=True))\n"
)


def test_a_cycle_of_aliases_under_two_transforms_neither_crashes_nor_loses_the_files_findings(tmp_path):
    write_tree(tmp_path, {"gp.py": SOURCE})
    result = run_torchlint(
        "check", "--no-cache", "-j", "1", "--select", "TL004", "--exit-zero", "--output-format", "json", ".", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert b"crashed" not in result.stderr and b"RecursionError" not in result.stderr, result.stderr
    findings = json.loads(result.stdout)
    assert [finding["code"] for finding in findings] == ["TL004"]
    assert findings[0]["location"]["row"] == 8  # the LSTM, reached by `penalty`'s double backward
