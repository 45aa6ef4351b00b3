"""TL003 and TL005 across files through torchlint.analysis.hot_paths, run through the real CLI: class
facts from files no rule parses, hot paths followed through `self.method()` calls, the
noise TL003 drops, and TL005 being opt-in."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import run_torchlint, write_tree


def configure(root: Path, **options: bool) -> Path:
    """Set TL003's options in `root`'s pyproject.toml."""
    lines = [f"{name.replace('_', '-')} = {str(value).lower()}" for name, value in options.items()]
    text = "[tool.torchlint]\n[tool.torchlint.host-sync-in-hot-path]\n" + "\n".join(lines) + "\n"
    (root / "pyproject.toml").write_text(text, encoding="utf-8")
    return root


def check(root: Path, *args: str) -> list:
    completed = run_torchlint("check", "--no-cache", "--output-format", "json-lines", *args, ".", cwd=root)
    stderr = completed.stderr.decode("utf-8", "replace")
    assert completed.returncode in (0, 1) and "error" not in stderr, stderr
    return [json.loads(line) for line in completed.stdout.decode("utf-8").splitlines() if line.strip()]


# an inference backend: `forward` must hand ONNX a numpy array; its base is no module,
# and the base's file has nothing any rule looks for
BACKEND_BASE = (
    "from abc import ABC, abstractmethod\n\n\nclass BaseBackend(ABC):\n    def __init__(self, weights):\n"
    "        self.weights = weights\n\n    @abstractmethod\n    def forward(self, im):\n        ...\n"
)
ONNX_BACKEND = (
    "from .base import BaseBackend\n\n\nclass OnnxBackend(BaseBackend):\n    def forward(self, im):\n"
    '        return self.session.run(None, {"images": im.cpu().numpy()})\n'
)


def test_a_class_whose_base_lives_in_an_ungated_file_is_resolved_through_it(tmp_path):
    root = write_tree(tmp_path, {"backends/__init__.py": "", "backends/base.py": BACKEND_BASE, "backends/onnx.py": ONNX_BACKEND})
    assert check(root, "--select", "TL003") == []


def test_a_lightning_datamodule_mixin_is_no_lightning_module(tmp_path):
    files = {
        "tasks/__init__.py": "",
        "tasks/task.py": "import lightning\n\n\nclass Task(lightning.LightningDataModule):\n    pass\n",
        "tasks/mixins.py": (
            "from .task import Task\n\n\nclass SegmentationTask(Task):\n"
            "    def validation_step(self, batch, batch_idx):\n        y = batch['y'].cpu().numpy()\n        return y\n"
        ),
    }
    assert check(write_tree(tmp_path, files), "--select", "TL003") == []


def test_without_the_base_a_forward_alone_does_not_make_a_module_but_layers_do(tmp_path):
    layered = ONNX_BACKEND.replace(
        "class OnnxBackend(BaseBackend):\n",
        "from torch import nn\n\n\nclass OnnxBackend(BaseBackend):\n    def __init__(self):\n"
        "        super().__init__()\n        self.head = nn.Linear(2, 2)\n\n",
    )
    # the numpy array is ONNX's input, a host value: reported only with check-host-values
    plain = configure(write_tree(tmp_path / "plain", {"onnx.py": ONNX_BACKEND}), check_host_values=True)
    assert check(plain, "--select", "TL003") == []
    found = check(configure(write_tree(tmp_path / "layers", {"onnx.py": layered}), check_host_values=True), "--select", "TL003")
    assert [(d["code"], d["location"]["row"]) for d in found] == [("TL003", 13)]


SHARED_STEP_BASE = (
    "import lightning as L\n\n\nclass Base(L.LightningModule):\n    def _shared_step(self, batch, stage):\n"
    "        loss = self(batch).mean()\n"
    '        self.log_dict({f"{stage}/loss": loss.item()})\n        return loss\n'
)
SHARED_STEP_MODEL = (
    "from .base import Base\n\n\nclass Model(Base):\n    def training_step(self, batch, batch_idx):\n"
    '        return self._shared_step(batch, "train")\n'
)


def test_a_sync_reached_from_a_step_in_another_file_is_reported_at_the_sync_and_fixed(tmp_path):
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": SHARED_STEP_BASE, "pkg/model.py": SHARED_STEP_MODEL})
    found = check(root, "--select", "TL003")
    assert len(found) == 1
    finding = found[0]
    assert finding["filename"].endswith("base.py") and finding["location"]["row"] == 7
    assert "reached from `Model.training_step` via `_shared_step`" in finding["message"]
    fixed = run_torchlint("check", "--no-cache", "--select", "TL003", "--fix", ".", cwd=root)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert 'loss.detach()})' in (root / "pkg/base.py").read_text(encoding="utf-8")


def test_a_helper_no_hot_path_reaches_is_not_reported(tmp_path):
    model = SHARED_STEP_MODEL.replace('self._shared_step(batch, "train")', "self(batch).mean()")
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": SHARED_STEP_BASE, "pkg/model.py": model})
    assert check(root, "--select", "TL003") == []


def test_reach_is_bounded_and_follows_the_instance_class(tmp_path):
    chain = (
        "from torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return self.a(x)\n\n"
        "    def a(self, x):\n        return self.b(x)\n\n    def b(self, x):\n        return self.c(x)\n\n"
        "    def c(self, x):\n        return self.d(x) + x.sum().item()\n\n"
        "    def d(self, x):\n        return x.mean().item()\n"
    )
    found = check(write_tree(tmp_path, {"net.py": chain}), "--select", "TL003")
    assert [d["location"]["row"] for d in found] == [15]  # `d` is a fourth call away
    assert "via `a` -> `b` -> `c`" in found[0]["message"]


def test_one_finding_per_value_no_fresh_cpu_tensors_no_error_paths(tmp_path):
    text = (
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        if x.dim() != 2:\n            raise ValueError(f'bad: {x.sum().item()}')\n"
        "        p = torch.rand(1).item() + torch.randint(0, 4, (1,)).item()\n"
        "        q = torch.tensor(3.0, device=x.device).item()\n"
        "        return x.numpy().tolist(), p, q\n"
    )
    root = configure(write_tree(tmp_path, {"net.py": text}), check_host_values=True)
    found = check(root, "--select", "TL003")
    assert [(d["location"]["row"], d["location"]["column"]) for d in found] == [(10, 13), (11, 16)]
    configure(root, check_host_values=True, check_error_paths=True)
    assert len(check(root, "--select", "TL003")) == 2  # a raise's message never runs per step


IMPLICIT = (
    "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x, mask):\n"
    "        if mask.any():\n            x = x.masked_fill(mask, 0.0)\n        return x\n"
)


def test_tl005_is_opt_in(tmp_path):
    root = write_tree(tmp_path, {"net.py": IMPLICIT})
    assert check(root) == []
    found = check(root, "--select", "TL005")
    assert [(d["code"], d["location"]["row"]) for d in found] == [("TL005", 7)]
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nextend-select = ["TL005"]\n', encoding="utf-8")
    assert [d["code"] for d in check(root)] == ["TL005"]


def test_tl005_follows_an_autograd_function_and_a_helper_in_a_base_file(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/base.py": (
            "import torch\n\n\nclass Helpers:\n    def _keep(self, scores):\n"
            "        return [int(i) for i in torch.nonzero(scores > 0.5)]\n"
        ),
        "pkg/head.py": (
            "import torch\nfrom torch import nn\nfrom .base import Helpers\n\n\nclass Head(Helpers, nn.Module):\n"
            "    def forward(self, scores):\n        return self._keep(scores)\n\n\n"
            "class Sync(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
            "        if torch.isnan(x).any():\n            x = torch.nan_to_num(x)\n        return x\n"
        ),
    }
    found = check(write_tree(tmp_path, files), "--select", "TL005")
    rows = sorted((Path(d["filename"]).name, d["location"]["row"]) for d in found)
    assert rows == [("base.py", 6), ("head.py", 14)]


@pytest.mark.slow
def test_the_flake8_plugin_reports_a_reached_sync_within_the_file(tmp_path):
    text = (
        "import lightning as L\n\n\nclass M(L.LightningModule):\n    def training_step(self, batch, i):\n"
        "        return self._shared(batch)\n\n    def _shared(self, batch):\n        loss = batch.sum()\n"
        '        self.log("loss", loss.item())\n        return loss\n'
    )
    path = tmp_path / "m.py"
    path.write_text(text, encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "TL", str(path)], capture_output=True, text=True, cwd=tmp_path
    )
    assert completed.stdout.strip().endswith("TL003 `.item()` in `M._shared` waits for the GPU to finish and copies "
                                             "to the host on every step (reached from `M.training_step` via `_shared`)")
    assert ":10:26:" in completed.stdout


def test_a_body_that_ends_in_raise_is_an_error_path_only_under_a_branch(tmp_path):
    text = (
        "import torch\nfrom torch import nn\n\n\nclass Loss(nn.Module):\n    def forward(self, x):\n"
        "        axes = torch.arange(2, x.dim()).tolist()\n        total = x.sum(axes).max().item()\n"
        "        if self.reduction == 'sum':\n            return x.sum() / total\n"
        "        for _ in range(2):\n            x = x / x.norm().item()\n            raise RuntimeError('once')\n"
        "        raise ValueError(f'bad reduction {self.reduction}')\n"
    )
    found = check(configure(write_tree(tmp_path, {"loss.py": text}), check_host_values=True), "--select", "TL003")
    assert [d["location"]["row"] for d in found] == [8, 12]


def test_a_block_that_runs_now_and_then_is_reported_only_with_its_option(tmp_path):
    text = (
        "import lightning as L\n\n\nclass M(L.LightningModule):\n    def training_step(self, batch, batch_idx):\n"
        "        out = self(batch)\n        if batch_idx % 100 == 0:\n"
        "            self.logger.experiment.add_image('out', out[0].cpu().numpy())\n"
        "        if self.log_images:\n            print(out.mean().item())\n"
        "        if batch_idx < 10 and self.logger:\n            self.log('first', out.min().item())\n"
        "        if batch.get('log_probs'):\n            out = out.log_softmax(-1).sum().item()\n        return out\n"
    )
    root = configure(write_tree(tmp_path, {"m.py": text}), check_host_values=True)
    assert [d["location"]["row"] for d in check(root, "--select", "TL003")] == [14]
    configure(root, check_host_values=True, check_periodic_branches=True)
    assert [d["location"]["row"] for d in check(root, "--select", "TL003")] == [8, 10, 12, 14]


def test_a_module_base_in_a_file_no_rule_parses_makes_its_subclass_a_module(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/base.py": "from torch import nn\n\n\nclass Base(nn.Module):\n    pass\n",
        "pkg/head.py": (
            "from .base import Base\n\n\nclass Head(Base):\n    def forward(self, x):\n        return x / x.sum().item()\n"
        ),
    }
    found = check(write_tree(tmp_path, files), "--select", "TL003")
    assert [(Path(d["filename"]).name, d["location"]["row"]) for d in found] == [("head.py", 6)]


def test_by_default_only_recorded_values_and_tensor_arithmetic_are_reported(tmp_path):
    text = (
        "import time\nimport torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n"
        "    def forward(self, x, sizes, stats):\n"
        "        k = int(x.sum().item())\n"  # 8: a size for topk
        "        parts = x.split(sizes.tolist())\n"  # 9: split sizes
        "        stats['norm'] = x.norm().item()\n"  # 10: recorded
        "        stats.update(mean=float(x.mean().item()))\n"  # 11: recorded
        "        loss = x.topk(k)[0].mean()\n        value = loss.item()\n"  # 13: logged through a name
        "        print(f'loss {value:.3f}')\n"
        "        t = time.perf_counter()\n        torch.cuda.synchronize()\n"  # 16: around a timer
        "        return parts, x / x.max().item()\n"  # 17: arithmetic
    )
    root = write_tree(tmp_path, {"net.py": text})
    assert [d["location"]["row"] for d in check(root, "--select", "TL003")] == [10, 11, 13, 17]
    configure(root, check_host_values=True)
    assert [d["location"]["row"] for d in check(root, "--select", "TL003")] == [8, 9, 10, 11, 13, 17]


def test_a_list_joined_to_a_synced_list_is_a_host_value(tmp_path):
    text = (
        "from torch import nn\n\n\nclass WL(nn.Module):\n    def forward(self, x, node):\n"
        "        key = hash(tuple([node] + x.sort()[0].tolist()))\n        return self.table[key]\n"
    )
    assert check(write_tree(tmp_path, {"wl.py": text}), "--select", "TL003") == []


def test_a_sample_drawn_from_a_tensor_lives_on_its_device(tmp_path):
    # issue 31 item 6: `torch.multinomial(w, 1)` is on `w`'s device, not a fresh CPU tensor
    text = (
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x, w):\n"
        "        i = torch.multinomial(w, 1).item()\n        j = torch.multinomial(torch.rand(4), 1).item()\n"
        "        k = torch.bernoulli(x).item()\n        return x[i] + x[j] + k\n"
    )
    root = configure(write_tree(tmp_path, {"net.py": text}), check_host_values=True)
    found = check(root, "--select", "TL003")
    assert [d["location"]["row"] for d in found] == [7, 9]
