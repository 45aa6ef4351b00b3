"""TL002 (unvalidated-conv-input) and TL003 (host-sync-in-hot-path): the gates are
necessary conditions of what the rules report, and TL003's safe fix is offered only where
`self.log` is Lightning's and the value is a tensor."""

from __future__ import annotations

import pytest

from rule_support import config_for, findings
from torchlint.core.config import Config
from torchlint.engine import lint_text
from torchlint.core.gating import may_fire
from torchlint.fixing.apply import fix_text
from torchlint.rule_api.registry import find_rule
from torchlint.analysis.source_view import SourceView

TL002 = find_rule("TL002")
TL003 = find_rule("TL003")


def _findings(rule, text, options=()):
    return findings(rule, text, options, path="x.py")[0]


def _fixed(rule, text, unsafe=False):
    config = Config()
    return fix_text(text, lambda t: lint_text(t, "x.py", config, [rule]), unsafe)


def _gate(rule, text, options=()) -> bool:
    return may_fire(rule, SourceView(text, "x.py"), config_for(rule, options))


# ---- TL003: the safe `.detach()` fix of logged values ---------------------------------


PLAIN_MODULE_LOG = (
    "from torch import nn\n\nclass M(nn.Module):\n"
    "    def log(self, name, value):\n        print(name, f'{value:.3f}')\n\n"
    "    def forward(self, x):\n"
    '        self.log("x", x.sum().item())\n'
    '        self.log_dict({"x": x.mean().item()})\n'
    "        return x\n"
)

LIGHTNING_FORWARD_LOG = (
    "import pytorch_lightning as pl\n\nclass M(pl.LightningModule):\n"
    "    def forward(self, x):\n"
    '        self.log("x", x.sum().item())\n'
    "        return x\n"
)

NUMPY_LOG = (
    "import numpy as np\nimport pytorch_lightning as pl\n\nclass M(pl.LightningModule):\n"
    "    def training_step(self, batch, i):\n"
    '        self.log("a", np.float32(1).item())\n'
    '        self.log_dict({"b": np.mean(batch).item()})\n'
    "        return batch\n"
)


def test_tl003_numpy_values_are_never_reported():
    # issue 22: `.item()` on a numpy value waits for nothing (torchlint/analysis/value_kinds.py)
    assert not _findings(TL003, NUMPY_LOG)


@pytest.mark.parametrize("text", [PLAIN_MODULE_LOG, LIGHTNING_FORWARD_LOG])
def test_tl003_log_outside_a_lightning_step_or_of_a_host_value_is_flagged_without_a_safe_fix(text):
    diagnostics = _findings(TL003, text)
    assert diagnostics
    assert all(d.fix is None for d in diagnostics)
    assert not _fixed(TL003, text).changed
    assert not _fixed(TL003, text, unsafe=True).changed


def test_tl003_log_in_a_lightning_step_keeps_its_safe_fix():
    text = (
        "import numpy as np\nimport torch\nimport lightning as L\n\nclass M(L.LightningModule):\n"
        "    def validation_step(self, batch, i):\n"
        '        self.log("a", torch.tensor(1.0, device=self.device).item())\n'
        '        self.log("b", np.float32(1).item())\n'
        "        return batch\n"
    )
    outcome = _fixed(TL003, text)
    assert outcome.text == text.replace(
        "torch.tensor(1.0, device=self.device).item()", "torch.tensor(1.0, device=self.device).detach()"
    )
    assert len(_findings(TL003, text)) == 1  # `np.float32(1).item()` waits for nothing


def test_tl003_log_in_a_step_of_a_deferred_class_keeps_its_safe_fix():
    text = (
        "from .base import Base\n\nclass M(Base):\n    def training_step(self, batch, i):\n"
        '        self.log("loss", batch.sum().item())\n        return batch\n'
    )
    diagnostics = _findings(TL003, text)
    assert len(diagnostics) == 1 and diagnostics[0].fix is not None


# ---- gates: methods under if/try/with, async def -----------------------------------------


ASYNC_FORWARD = (
    "from torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3)\n\n"
    "    async def forward(self, x):\n        return self.conv(x)\n"
)

GUARDED_FORWARD = (
    "import sys\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3)\n\n"
    "    if sys.version_info >= (3, 8):\n"
    "        def forward(self, x):\n            return self.conv(x)\n"
    "    else:\n"
    "        try:\n            pass\n        finally:\n"
    "            def forward(self, x):\n                return self.conv(x)\n"
)

ANNASSIGN_CONCAT = (
    "import torch\nfrom torch import Tensor, nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.conv = nn.Conv2d(6, 8, 3)\n\n"
    "    def forward(self, a, rest):\n"
    "        fused: Tensor = torch.cat([a, *rest], dim=1)\n"
    "        return self.conv(fused)\n"
)

ALIASED_IMPORTS = (
    "from torch import cat as join\nfrom torch.nn import Conv2d as C, Module\n\nclass M(Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.conv = C(6, 8, 3)\n\n"
    "    def forward(self, a, rest):\n        fused = join([a, *rest], dim=1)\n        return self.conv(fused)\n"
)


@pytest.mark.parametrize(
    "text,row",
    [(ASYNC_FORWARD, 9), (GUARDED_FORWARD, 17), (ANNASSIGN_CONCAT, 11), (ALIASED_IMPORTS, 11)],
    ids=["async-forward", "forward-under-if-try", "annassign-concat", "aliased-imports"],
)
def test_tl002_gate_lets_through_what_the_rule_reports(text, row):
    options = (("check-parameters", True),)  # a parameter's conv is reported in any module
    assert _gate(TL002, text, options)
    diagnostics = _findings(TL002, text, options)
    assert [d.location.row for d in diagnostics] == [row]


def test_tl002_annassign_concat_is_flagged_with_parameters_off():
    options = (("check-parameters", False),)
    assert _gate(TL002, ANNASSIGN_CONCAT, options)
    diagnostics = _findings(TL002, ANNASSIGN_CONCAT, options)
    assert [d.location.row for d in diagnostics] == [11]
    assert "concatenation" in diagnostics[0].message


@pytest.mark.parametrize(
    "text",
    [
        "import pytorch_lightning as pl\n\nclass M(pl.LightningModule):\n"
        "    async def training_step(self, batch, i):\n        print(batch.sum().item())\n        return batch\n",
        "from torch import nn\n\nclass M(nn.Module):\n    try:\n        import numpy\n"
        "    except ImportError:\n        pass\n    else:\n"
        "        def forward(self, x):\n            return {'values': x.tolist()}\n",
        "from torch import nn\nfrom torch.cuda import synchronize\n\nclass M(nn.Module):\n"
        "    if True:\n        def forward(self, x):\n            synchronize()\n            return x\n",
    ],
    ids=["async-step", "forward-under-try-else", "imported-synchronize"],
)
def test_tl003_gate_lets_through_what_the_rule_reports(text):
    assert _gate(TL003, text)
    assert _findings(TL003, text)


@pytest.mark.parametrize("rule", [TL002, TL003], ids=["TL002", "TL003"])
def test_gate_holds_for_every_invalid_example(rule):
    for example in rule.INVALID:
        assert _gate(rule, example.code, example.options), example.code


@pytest.mark.parametrize("rule", [TL002, TL003], ids=["TL002", "TL003"])
def test_gate_holds_wherever_the_rule_reports_in_the_tests_above(rule):
    texts = [
        PLAIN_MODULE_LOG, LIGHTNING_FORWARD_LOG, NUMPY_LOG,
        ASYNC_FORWARD, GUARDED_FORWARD, ANNASSIGN_CONCAT, ALIASED_IMPORTS,
    ]
    for text in texts:
        if _findings(rule, text):
            assert _gate(rule, text), text


def test_tl002_one_line_block_is_flagged_without_a_fix_and_does_not_crash():
    source = (
        "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3)\n\n"
        "    def forward(self, x, c):\n        if c: return self.conv(x)\n        return x\n"
    )
    for options in ((("check-model-inputs", True),), (("check-parameters", True),)):  # a model's; any module's
        diagnostics, _ = findings(find_rule("TL002"), source, options)
        assert [(d.code, d.location.row, d.fix) for d in diagnostics] == [("TL002", 11, None)]
