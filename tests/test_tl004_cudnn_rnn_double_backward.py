"""TL004 across files, its fix, the gate, and the fixture models run for real on CPU."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import FIXTURES, run_torchlint, write_tree
from torchlint.core.config import Config
from torchlint.engine import lint_text
from torchlint.rule_api.registry import all_rules
from torchlint.run.jobs import RunSettings
from torchlint.run.runner import run

RULE = next(rule for rule in all_rules() if rule.code == "TL004")
SEQGAN = FIXTURES / "seqgan"

GRU_MODEL = (
    "import torch\nfrom torch import nn\n\n\nclass Critic(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.rnn = nn.GRU(4, 8, batch_first=True)\n\n"
    "    def forward(self, x):\n        out, _ = self.rnn(x)\n        return out.sum(-1)\n"
)
PROJECTED_MODEL = GRU_MODEL.replace("nn.GRU(4, 8, batch_first=True)", "nn.LSTM(4, 8, batch_first=True, proj_size=2)")
CNN_AND_LM = (
    "from torch import nn\n\n\nclass LM(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.rnn = nn.LSTM(4, 4)\n\n    def forward(self, x):\n        return self.rnn(x)[0]\n\n\n"
    "class CNN(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.conv = nn.Conv1d(4, 4, 3)\n\n"
    "    def forward(self, x):\n        return self.conv(x)\n"
)


def penalty(import_line: str, model: str = "Critic()") -> str:
    return (
        f"import torch\n{import_line}\n\n\ndef gradient_penalty(critic, x):\n    x.requires_grad_(True)\n"
        "    (g,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)\n    return g.pow(2).mean()\n\n\n"
        f"def step(x):\n    return gradient_penalty({model}, x)\n"
    )


def lint_tree(root: Path, monkeypatch, mode: str = "check", unsafe: bool = False):
    monkeypatch.chdir(root)
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))
    settings = RunSettings(Config(root=root), ("TL004",), mode=mode, unsafe=unsafe, use_cache=False)
    result = run([(name, root / name, None) for name in files], settings, workers=1)
    assert not result.errors, result.errors
    return result.diagnostics


def findings(diagnostics):
    return sorted((d.filename, d.location.row, d.location.column) for d in diagnostics)


# ---- across files ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "site_path,import_line,model",
    [
        ("train.py", "from pkg.models import Critic", "Critic()"),  # src layout: src/pkg answers pkg
        ("train.py", "from pkg import Critic", "Critic()"),  # re-exported by the package
        ("train.py", "import pkg.models as m", "m.Critic()"),
        ("src/pkg/train.py", "from .models import Critic", "Critic()"),
        ("src/pkg/sub/train.py", "from ..models import Critic", "Critic()"),
        ("src/pkg/train.py", "from . import models", "models.Critic()"),
    ],
)
def test_cross_file_finding_names_the_site(tmp_path, monkeypatch, site_path, import_line, model):
    write_tree(
        tmp_path,
        {
            "src/pkg/__init__.py": "from .models import Critic\n",
            "src/pkg/sub/__init__.py": "",
            "src/pkg/models.py": GRU_MODEL,
            site_path: penalty(import_line, model),
        },
    )
    diagnostics = lint_tree(tmp_path, monkeypatch)
    assert findings(diagnostics) == [("src/pkg/models.py", 8, 20)]
    assert f"at {site_path}:7 via `torch.autograd.grad(..., create_graph=True)`" in diagnostics[0].message
    assert diagnostics[0].fix is not None and diagnostics[0].fix.applicability.value == "unsafe"


@pytest.mark.parametrize(
    "signature,expected",
    [
        ("critic: Critic, x", [("pkg/models.py", 8, 20)]),  # the annotation says what arrives
        ('critic: "Critic", x', [("pkg/models.py", 8, 20)]),
        ("critic: nn.Module, x", []),  # says nothing: no caller, no module class in the file
        ("critic, x", []),  # importing the class is not passing it in
    ],
)
def test_an_uncalled_penalty_reaches_only_what_its_annotation_names(tmp_path, monkeypatch, signature, expected):
    site = penalty("from torch import nn\nfrom .models import Critic").split("\n\n\ndef step")[0] + "\n"
    site = site.replace("critic, x", signature)
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/models.py": GRU_MODEL, "pkg/gp.py": site})
    assert findings(lint_tree(tmp_path, monkeypatch)) == expected


def test_an_unrelated_model_is_not_reported(tmp_path, monkeypatch):
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/models.py": CNN_AND_LM,
            "pkg/train.py": penalty("from .models import CNN, LM", "CNN()")
            + "\n\ndef lm_step(x):\n    LM()(x).sum().backward()\n",
        },
    )
    assert lint_tree(tmp_path, monkeypatch) == []


def test_a_tree_with_an_rnn_and_a_penalty_that_never_meet_is_clean(tmp_path, monkeypatch):
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/lm.py": CNN_AND_LM,
            "pkg/gan.py": penalty("from torch import nn", "nn.Linear(4, 1)"),
        },
    )
    assert lint_tree(tmp_path, monkeypatch) == []


def test_noqa_on_the_constructor_suppresses_the_cross_file_finding(tmp_path, monkeypatch):
    model = GRU_MODEL.replace("batch_first=True)\n", "batch_first=True)  # noqa: TL004\n")
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/models.py": model, "pkg/gp.py": penalty("from .models import Critic")})
    assert lint_tree(tmp_path, monkeypatch) == []


@pytest.mark.parametrize("model,expected", [(GRU_MODEL, []), (PROJECTED_MODEL, [("pkg/models.py", 8, 20)])])
def test_penalty_with_cudnn_off_only_clears_plain_rnns(tmp_path, monkeypatch, model, expected):
    site = penalty("from .models import Critic").replace(
        "    (g,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)\n",
        "    with torch.backends.cudnn.flags(enabled=False):\n"
        "        (g,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)\n",
    )
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/models.py": model, "pkg/gp.py": site})
    diagnostics = lint_tree(tmp_path, monkeypatch)
    assert findings(diagnostics) == expected
    if expected:
        assert "Projected `nn.LSTM(...)` (proj_size=2)" in diagnostics[0].message
        assert diagnostics[0].fix is None


def test_cross_file_fix_edits_the_model_file_once(tmp_path, monkeypatch):
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/models.py": GRU_MODEL, "pkg/gp.py": penalty("from .models import Critic")})
    assert lint_tree(tmp_path, monkeypatch, mode="fix", unsafe=True) == []
    fixed = (tmp_path / "pkg/models.py").read_text()
    assert fixed == GRU_MODEL.replace(
        "        out, _ = self.rnn(x)\n",
        "        with torch.backends.cudnn.flags(enabled=False):\n            out, _ = self.rnn(x)\n",
    )
    assert lint_tree(tmp_path, monkeypatch, mode="fix", unsafe=True) == []
    assert (tmp_path / "pkg/models.py").read_text() == fixed
    assert lint_tree(tmp_path, monkeypatch) == []


def test_safe_fix_mode_leaves_the_model_alone(tmp_path, monkeypatch):
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/models.py": GRU_MODEL, "pkg/gp.py": penalty("from .models import Critic")})
    assert findings(lint_tree(tmp_path, monkeypatch, mode="fix")) == [("pkg/models.py", 8, 20)]
    assert (tmp_path / "pkg/models.py").read_text() == GRU_MODEL


# ---- the gate ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path,text,parsed",
    [
        ("plain.py", "import torch\n\ndef f(x):\n    return torch.relu(x).sum().backward()\n", False),
        ("lstm_word.py", "# an LSTM would be nice here\nimport torch\nx = torch.ones(1)\n", False),
        ("grad.py", "import torch\ng = torch.autograd.grad(y, x, create_graph=False)\n", False),
        ("site.py", "import torch\ng = torch.autograd.grad(y, x, create_graph=True)\n", True),
        ("layer.py", "from torch import nn\nrnn = nn.GRU(1, 1)\n", True),
        ("pkg/__init__.py", "from .models import Critic\n", True),
        ("pkg/__init__.py", '"""Nothing to re-export."""\n', False),
    ],
)
def test_gate_lets_through_only_files_with_a_role(path, text, parsed):
    assert lint_text(text, path, Config(), [RULE]).parsed is parsed


# ---- the fixture project ----------------------------------------------------------------


def test_cli_reports_the_cross_file_finding_and_the_in_file_one():
    result = run_torchlint("check", "--no-cache", "--output-format", "json", "fixtures/seqgan", cwd=FIXTURES.parent)
    assert result.returncode == 1, result.stderr.decode()
    items = [item for item in json.loads(result.stdout) if item["code"] == "TL004"]
    found = {(relative(item["filename"]), item["location"]["row"]): item for item in items}
    assert set(found) == {("fixtures/seqgan/models.py", 40), ("fixtures/seqgan/energy.py", 10)}
    critic = found[("fixtures/seqgan/models.py", 40)]
    assert critic["message"].startswith("Projected `nn.LSTM(...)` (proj_size=proj) is reached by double backward")
    assert "at fixtures/seqgan/penalty.py:14" in critic["message"]
    assert critic["fix"] is None
    assert found[("fixtures/seqgan/energy.py", 10)]["fix"]["applicability"] == "unsafe"


def test_cli_on_the_model_files_alone_reports_nothing():
    result = run_torchlint(
        "check", "--no-cache", "--select", "TL004", "--output-format", "json",
        "fixtures/seqgan/models.py", "fixtures/seqgan/lm.py", "fixtures/seqgan/__init__.py",
        cwd=FIXTURES.parent,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()
    assert json.loads(result.stdout) == []


@pytest.mark.slow
def test_flake8_sees_only_in_file_findings():
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "TL", "models.py", "energy.py", "penalty.py"],
        cwd=SEQGAN,
        capture_output=True,
        text=True,
    )
    assert result.stdout.splitlines() == [
        "energy.py:10:20: TL004 `nn.GRU(...)` is reached by double backward at energy.py:22 via "
        "`torch.autograd.grad(..., create_graph=True)`: cuDNN RNNs have no double backward on CUDA; run "
        "the layer under `torch.backends.cudnn.flags(enabled=False)`"
    ], result.stderr


def relative(filename: str) -> str:
    return Path(filename).resolve().relative_to(FIXTURES.parent).as_posix()


def _load_package(name: str, directory: Path):
    spec = importlib.util.spec_from_file_location(
        name, directory / "__init__.py", submodule_search_locations=[str(directory)]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    spec.loader.exec_module(package)
    return package


def _load_module(name: str, path: Path):
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), module.__dict__)
    return module


@pytest.fixture(scope="module")
def seqgan():
    torch = pytest.importorskip("torch")
    package = _load_package("seqgan_fixture", SEQGAN)
    importlib.import_module("seqgan_fixture.energy")
    importlib.import_module("seqgan_fixture.lm")
    importlib.import_module("seqgan_fixture.train")
    yield torch, package
    for name in [n for n in sys.modules if n.startswith("seqgan_fixture")]:
        del sys.modules[name]


def test_double_backward_through_each_fixture_model_runs_on_cpu(seqgan):
    torch, package = seqgan
    torch.manual_seed(0)
    vocab, length = package.lm.VOCAB_SIZE, 6
    critic = package.penalty.make_critic(hidden=16)
    generator = package.Generator(vocab, hidden=16)
    fake = generator.sample(3, length).detach()
    real = torch.nn.functional.one_hot(torch.randint(0, vocab, (3, length)), vocab).float()
    optimizer = torch.optim.SGD(critic.parameters(), lr=0.01)
    before = critic.rnn.weight_hr_l0.detach().clone()
    loss = package.critic_step(critic, optimizer, real, fake)
    assert torch.isfinite(loss) and not torch.equal(before, critic.rnn.weight_hr_l0)

    energy = package.energy
    model = energy.SequenceEnergy(4, hidden=8)
    sm_loss = energy.score_matching_loss(model, torch.randn(2, 5, 4))
    sm_loss.backward()
    assert model.gru.weight_ih_l0.grad is not None and model.gru.weight_ih_l0.grad.abs().sum() > 0

    lm = package.lm.TokenLM(hidden=16)
    lm_loss = package.lm.lm_step(lm, torch.optim.SGD(lm.parameters(), lr=0.1), torch.randint(0, vocab, (2, 7)))
    assert torch.isfinite(lm_loss)
    generator_c, critic_c = package.train.train([real], length=length, critic_steps=1, device="cpu")
    assert critic_c is not None and generator_c is not None


def test_unsafe_fix_keeps_the_energy_model_outputs(seqgan):
    torch, _ = seqgan
    original = _load_module("energy_original", SEQGAN / "energy.py")
    fixed = _load_module("energy_fixed", SEQGAN / "energy.py.unsafe-fixed")
    torch.manual_seed(1)
    model = original.SequenceEnergy(4, hidden=8)
    twin = fixed.SequenceEnergy(4, hidden=8)
    twin.load_state_dict(model.state_dict())
    x = torch.randn(3, 5, 4)
    assert torch.equal(model(x), twin(x))
    assert torch.equal(original.score(model, x.clone()), fixed.score(twin, x.clone()))
    torch.manual_seed(2)
    loss = original.score_matching_loss(model, x)
    torch.manual_seed(2)
    loss_fixed = fixed.score_matching_loss(twin, x)
    assert torch.equal(loss, loss_fixed)
    loss.backward()
    loss_fixed.backward()
    grads = [(name, a.grad, b.grad) for (name, a), (_, b) in zip(model.named_parameters(), twin.named_parameters())]
    assert any(a is not None for _, a, _ in grads)
    for name, a, b in grads:
        assert (a is None and b is None) or torch.equal(a, b), name


# ---- starred arguments, defs under cuDNN off, package __init__ ----------------------------


def tl004(text: str, path: str = "m.py"):
    result = lint_text(text, path, Config(), [RULE])
    return [d for d in result.diagnostics if d.code == "TL004"]


STARRED_SITE = (
    "import torch\nrnn = torch.nn.GRU(4, 4)\n\ndef penalty(x, *extra):\n"
    "    return torch.autograd.grad(rnn(x)[0].sum(), x, {call_tail})\n"
)


@pytest.mark.parametrize(
    "call_tail,flagged",
    [
        ("*extra, create_graph=True", True),
        ("*extra, create_graph=False", False),
        ("**{}, create_graph=True", True),
        ("*extra", False),  # where create_graph would be is unknown: not guessed
    ],
)
def test_keywords_after_a_starred_argument_are_seen(call_tail, flagged):
    assert bool(tl004(STARRED_SITE.format(call_tail=call_tail))) is flagged


def test_a_false_default_set_true_after_a_starred_argument_counts():
    text = (
        "import torch\nrnn = torch.nn.GRU(4, 4)\n\ndef grads(loss, x, *rest, create_graph=False):\n"
        "    return torch.autograd.grad(loss, x, create_graph=create_graph)\n\n"
        "def main(x, rest):\n    return grads(rnn(x)[0].sum(), x, *rest, create_graph=True)\n"
    )
    assert [d.location.row for d in tl004(text)] == [2]


def test_cudnn_off_spelled_after_a_starred_argument_counts():
    text = (
        "import torch\nrnn = torch.nn.GRU(4, 4)\nopts = ()\n\ndef penalty(x):\n"
        "    with torch.backends.cudnn.flags(*opts, enabled=False):\n"
        "        return torch.autograd.grad(rnn(x)[0].sum(), x, create_graph=True)\n"
    )
    assert tl004(text) == []


@pytest.mark.parametrize("args", ["*CFG, proj_size=2", "*CFG", "**KW", "*CFG, batch_first=True"])
def test_a_starred_lstm_constructor_gets_no_cudnn_off_fix(args):
    text = GRU_MODEL.replace("nn.GRU(4, 8, batch_first=True)", f"nn.LSTM({args})")
    text = text.replace("from torch import nn\n", "from torch import nn\n\nCFG = (4, 8)\nKW = {}\n")
    text += (
        "\n\ndef gradient_penalty(x):\n"
        "    (g,) = torch.autograd.grad(Critic()(x).sum(), x, create_graph=True)\n    return g\n"
    )
    (diagnostic,) = tl004(text)
    assert diagnostic.fix is None
    if "proj_size=2" in args:
        assert diagnostic.message.startswith("Projected `nn.LSTM(...)` (proj_size=2)")
    else:
        assert "a projection could not be ruled out" in diagnostic.message


def test_a_starred_lstm_with_an_explicit_zero_projection_keeps_its_fix():
    text = GRU_MODEL.replace("nn.GRU(4, 8, batch_first=True)", "nn.LSTM(*CFG, proj_size=0)")
    text = text.replace("from torch import nn\n", "from torch import nn\n\nCFG = (4, 8)\n")
    text += "\n\ndef hess(x):\n    return torch.autograd.functional.hessian(lambda t: Critic()(t).sum(), x)\n"
    (diagnostic,) = tl004(text)
    assert diagnostic.fix is not None and "Projected" not in diagnostic.message


def test_a_def_under_cudnn_off_does_not_run_with_cudnn_off():
    body = (
        "        def penalty(x):\n"
        "            return torch.autograd.grad(rnn(x)[0].sum(), x, create_graph=True)\n"
    )
    defined_under_off = (
        "import torch\nrnn = torch.nn.GRU(4, 4)\n\ndef make():\n"
        "    with torch.backends.cudnn.flags(enabled=False):\n" + body + "    return penalty\n"
    )
    assert [d.location.row for d in tl004(defined_under_off)] == [2]
    # the with inside the function still counts, and is restored after a nested def
    inside = (
        "import torch\nrnn = torch.nn.GRU(4, 4)\n\ndef penalty(x):\n"
        "    with torch.backends.cudnn.flags(enabled=False):\n"
        "        def helper():\n            pass\n"
        "        return torch.autograd.grad(rnn(x)[0].sum(), x, create_graph=True)\n"
    )
    assert tl004(inside) == []


def test_a_forward_defined_under_cudnn_off_is_not_already_fixed():
    text = GRU_MODEL.replace(
        "    def forward(self, x):\n        out, _ = self.rnn(x)\n",
        "    with torch.backends.cudnn.flags(enabled=False):\n"
        "        def forward(self, x):\n            out, _ = self.rnn(x)\n",
    ).replace("        return out.sum(-1)\n", "            return out.sum(-1)\n")
    text += "\n\ndef hess(x):\n    return torch.autograd.functional.hessian(lambda t: Critic()(t).sum(), x)\n"
    assert [d.location.row for d in tl004(text)] == [8]


@pytest.mark.parametrize("path", ["pkg/__init__.py", "pkg\\__init__.py", "__init__.py"])
def test_a_package_init_is_always_looked_at(path):
    assert RULE.trigger_strings(Config(), path) == ()
    assert RULE.trigger_strings(Config(), "pkg/models.py") == RULE.triggers


# ---- module instances followed into the functions they are passed to (real CLI) ----------

LOSSES = (
    "import torch\n\n\ndef gradient_penalty(critic, real, fake):\n"
    "    mixed = (0.5 * real + 0.5 * fake).requires_grad_(True)\n"
    "    (g,) = torch.autograd.grad(critic(mixed).sum(), mixed, create_graph=True)\n"
    "    return ((g.norm(2, dim=1) - 1) ** 2).mean()\n"
)
TRAIN = "{imports}\n\n\ndef train(batches):\n    D = Critic().cuda()\n    for real, fake in batches:\n        gp = {call}\n        gp.backward()\n"


def check_tree(root: Path, *paths: str):
    """TL004's findings on a tree, by the real command line: [(file, row, col)], and the first message."""
    result = run_torchlint(
        "check", "--no-cache", "--select", "TL004", "--output-format", "json", *(paths or ["."]), cwd=root
    )
    assert result.returncode in (0, 1), result.stderr.decode()
    items = json.loads(result.stdout)
    found = sorted((Path(i["filename"]).resolve().relative_to(root.resolve()).as_posix(), i["location"]["row"], i["location"]["column"]) for i in items)
    return found, [i["message"] for i in items]


@pytest.mark.parametrize(
    "imports,call",
    [
        ("from losses import gradient_penalty\nfrom models import Critic", "gradient_penalty(D, real, fake)"),
        ("from losses import gradient_penalty\nfrom models import Critic", "gradient_penalty(fake=fake, real=real, critic=D)"),
        ("import losses\nfrom models import Critic", "losses.gradient_penalty(D, real, fake)"),
        ("import losses as L\nimport models\nCritic = models.Critic", "L.gradient_penalty(D, real, fake)"),
    ],
)
def test_wgan_gp_across_three_files_is_reported_on_the_critic(tmp_path, imports, call):
    write_tree(tmp_path, {"models.py": GRU_MODEL, "losses.py": LOSSES, "train.py": TRAIN.format(imports=imports, call=call)})
    found, messages = check_tree(tmp_path)
    assert found == [("models.py", 8, 20)]
    assert "at losses.py:6 via `torch.autograd.grad(..., create_graph=True)`" in messages[0]


def test_wgan_gp_in_a_package_through_relative_imports_and_a_forwarding_function(tmp_path):
    write_tree(
        tmp_path,
        {
            "gan/__init__.py": "from .losses import gradient_penalty\n",
            "gan/nets/__init__.py": "",
            "gan/nets/critic.py": GRU_MODEL,
            "gan/losses.py": LOSSES + "\n\ndef critic_loss(critic, real, fake):\n"
            "    return critic(fake).mean() - critic(real).mean() + gradient_penalty(critic, real, fake)\n",
            "gan/loop.py": "from . import losses\nfrom .nets.critic import Critic\n\n\n"
            "class Trainer:\n    def __init__(self):\n        self.critic = Critic()\n\n"
            "    def step(self, real, fake):\n        return losses.critic_loss(self.critic, real, fake)\n",
        },
    )
    assert check_tree(tmp_path)[0] == [("gan/nets/critic.py", 8, 20)]


@pytest.mark.parametrize(
    "change",
    [
        ("D = Critic().cuda()", "D = torch.nn.Linear(4, 1)"),  # another model is passed in
        ("gp = gradient_penalty(D, real, fake)", "gp = D(real).sum()"),  # the penalty is never called with it
    ],
)
def test_a_critic_that_never_reaches_the_penalty_is_not_reported(tmp_path, change):
    train = TRAIN.format(imports="import torch\nfrom losses import gradient_penalty\nfrom models import Critic", call="gradient_penalty(D, real, fake)")
    write_tree(tmp_path, {"models.py": GRU_MODEL, "losses.py": LOSSES, "train.py": train.replace(*change)})
    assert check_tree(tmp_path)[0] == []


def test_cudnn_off_around_the_penalty_still_silences_it_across_files(tmp_path):
    losses = LOSSES.replace(
        "    (g,) = torch.autograd.grad(",
        "    with torch.backends.cudnn.flags(enabled=False):\n        (g,) = torch.autograd.grad(",
    )
    train = TRAIN.format(imports="from losses import gradient_penalty\nfrom models import Critic", call="gradient_penalty(D, real, fake)")
    write_tree(tmp_path, {"models.py": GRU_MODEL, "losses.py": losses, "train.py": train})
    assert check_tree(tmp_path)[0] == []


def test_a_subclass_of_lstm_from_another_file_is_an_rnn(tmp_path):
    model = GRU_MODEL.replace("from torch import nn\n", "from torch import nn\n\nfrom layers import TimeLSTM\n").replace(
        "nn.GRU(4, 8, batch_first=True)", "TimeLSTM(4, 8, batch_first=True)"
    )
    layers = "from torch import nn\n\n\nclass BaseLSTM(nn.LSTM):\n    pass\n\n\nclass TimeLSTM(BaseLSTM):\n    pass\n"
    train = TRAIN.format(imports="from losses import gradient_penalty\nfrom models import Critic", call="gradient_penalty(D, real, fake)")
    write_tree(tmp_path, {"layers.py": layers, "models.py": model, "losses.py": LOSSES, "train.py": train})
    assert check_tree(tmp_path)[0] == [("models.py", 10, 20)]
    # a class of the same name that is no RNN is not one
    write_tree(tmp_path, {"layers.py": "from torch import nn\n\n\nclass TimeLSTM(nn.Linear):\n    pass\n"})
    assert check_tree(tmp_path)[0] == []


def test_an_rnn_and_a_second_order_call_in_unrelated_files_stay_silent(tmp_path):
    # as in NeMo: RNN models in one place, create_graph=True in an unrelated utility
    write_tree(
        tmp_path,
        {
            "asr/__init__.py": "",
            "asr/lstm_decoder.py": CNN_AND_LM,
            "asr/train.py": "from .lstm_decoder import LM\n\n\ndef step(x):\n    LM()(x).sum().backward()\n",
            "utils/__init__.py": "",
            "utils/jacobian.py": "import torch\n\n\ndef input_jacobian(model, x):\n"
            "    x.requires_grad_(True)\n    return torch.autograd.grad(model(x).sum(), x, create_graph=True)[0]\n",
        },
    )
    assert check_tree(tmp_path)[0] == []


MAML = (
    "import torch\nfrom torch import nn\n\n\nclass Learner(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.lstm = nn.LSTM(4, 8)\n\n    def forward(self, x):\n"
    "        return self.lstm(x)[0].sum()\n\n\n"
    "def inner_loop(learner, batch, lr=0.1):\n    loss = learner(batch)\n"
    "    grads = torch.autograd.grad(loss, learner.parameters(), create_graph=True)\n"
    "    return [p - lr * g for p, g in zip(learner.parameters(), grads)]\n"
)


def test_a_single_file_maml_loop_over_an_lstm_learner_is_reported(tmp_path):
    write_tree(tmp_path, {"maml.py": MAML})
    assert check_tree(tmp_path)[0] == [("maml.py", 8, 21)]
    # a caller in another file that passes in something else decides instead
    write_tree(tmp_path, {"run.py": "import torch\nfrom maml import inner_loop\n\ninner_loop(torch.nn.Linear(4, 1), None)\n"})
    assert check_tree(tmp_path)[0] == []


def test_a_variable_reassigned_many_times_is_followed_once(tmp_path):
    # `h = h.float()` 200 times: following each assignment into every other one branched
    # 200 ways per step (an hour for this file; 15 s at 60 times)
    body = "".join("    h = h.float()\n" for _ in range(200))
    write_tree(
        tmp_path,
        {
            "models.py": GRU_MODEL,
            "losses.py": LOSSES,
            "train.py": "from losses import gradient_penalty\nfrom models import Critic\n\n\ndef train(real, fake):\n"
            "    h = Critic()\n" + body + "    return gradient_penalty(h, real, fake)\n",
        },
    )
    assert check_tree(tmp_path)[0] == [("models.py", 8, 20)]
