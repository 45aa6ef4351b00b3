"""TL201 where a checkpoint holds objects: `torch.utils.model_zoo.load_url` is reported as
`torch.hub.load_state_dict_from_url` is; a load whose result is read as an object
(`ckpt["args"]`, `ckpt.cfg`), or whose source the project loads with `weights_only=False`
elsewhere, gets the advice to say `weights_only=False` (or allow-list the types) and no
`weights_only=True` fix, which real torch proves would break it."""

from __future__ import annotations

import argparse
import importlib.util
import json
import re

import pytest

from cli_support import run_torchlint, write_tree
from flake8_support import run_flake8
from torchlint.cli import main

EVALUATE = '''import torch


def evaluate(args, model):
    ckpt = torch.load(args.resume, map_location="cpu")
    model.load_state_dict(ckpt["model"])
    return ckpt
'''
TRAIN = '''import torch


def resume(args, model):
    ckpt = torch.load(args.resume, weights_only=False)
    model.load_state_dict(ckpt["model"])
'''


def _findings(capsys, root, *flags):
    code = main(["check", "--no-cache", "--select", "TL201", "--output-format", "json", *flags, str(root)])
    findings = json.loads(capsys.readouterr().out)
    return code, {(f["filename"].rsplit("/", 1)[-1], f["location"]["row"]): f for f in findings}


def test_model_zoo_load_url_is_reported_and_fixed_like_the_hub_loader(tmp_path, capsys):
    write_tree(tmp_path, {"m.py": (
        "import torch.utils.model_zoo as model_zoo\nfrom torch.utils.model_zoo import load_url\n\n"
        "a = model_zoo.load_url('https://x/a.pth')\nb = load_url('https://x/b.pth', map_location='cpu')\n"
        "c = torch.hub.load_state_dict_from_url('https://x/c.pth')\n"
    )})
    _, found = _findings(capsys, tmp_path)
    assert set(found) == {("m.py", 4), ("m.py", 5)}
    assert "`torch.utils.model_zoo.load_url` without `weights_only`" in found[("m.py", 4)]["message"]
    assert main(["check", "--no-cache", "--select", "TL201", "--fix", "--unsafe-fixes", str(tmp_path)]) == 0
    text = (tmp_path / "m.py").read_text()
    assert "load_url('https://x/a.pth', weights_only=True)" in text
    assert "load_url('https://x/b.pth', map_location='cpu', weights_only=True)" in text


@pytest.mark.parametrize(
    "body, evidence",
    [
        ("    ckpt = torch.load(path)\n    return ckpt['args'].lr\n", '`ckpt["args"]` is read'),
        ("    ckpt = torch.load(path)\n    return ckpt.get('hparams')\n", '`ckpt.get("hparams")` is read'),
        ("    return torch.load(path).cfg\n", "`torch.load(...).cfg` is read"),
        ("    with open(path, 'rb') as f:\n        state = torch.load(f)\n    return state['opt']\n", '`state["opt"]`'),
        # a config under a compound key
        ("    pkg = torch.load(path)\n    return pkg['xp.cfg']\n", '`pkg["xp.cfg"]` is read'),
        ("    state = torch.load(path)\n    return state.get('model_args')\n", '`state.get("model_args")` is read'),
    ],
)
def test_a_checkpoint_read_as_an_object_gets_no_weights_only_true_fix(tmp_path, capsys, body, evidence):
    write_tree(tmp_path, {"m.py": f"import torch\n\n\ndef load(path):\n{body}"})
    _, found = _findings(capsys, tmp_path, "--unsafe-fixes")
    (finding,) = found.values()
    assert evidence in finding["message"] and "pass `weights_only=False`" in finding["message"]
    assert "add_safe_globals" in finding["message"] and finding["fix"] is None


@pytest.mark.parametrize(
    "body",
    [
        "    sd = torch.load(path)\n    model.load_state_dict(sd)\n    return sd.keys()\n",
        "    ckpt = torch.load(path)\n    return ckpt['state_dict'], ckpt['epoch']\n",
        "    return torch.load(path).get('model')\n",
    ],
)
def test_a_state_dict_keeps_the_fix(tmp_path, capsys, body):
    write_tree(tmp_path, {"m.py": f"import torch\n\n\ndef load(path, model):\n{body}"})
    _, found = _findings(capsys, tmp_path, "--unsafe-fixes")
    (finding,) = found.values()
    assert finding["fix"] and finding["fix"]["applicability"] == "unsafe"
    assert finding["message"].endswith("pass `weights_only=True`")


def test_a_source_loaded_with_weights_only_false_in_another_file_gets_no_fix(tmp_path, capsys):
    write_tree(tmp_path, {"train.py": TRAIN, "evaluate.py": EVALUATE})
    _, found = _findings(capsys, tmp_path, "--unsafe-fixes")
    finding = found[("evaluate.py", 5)]
    assert re.search(r"`args.resume` is loaded with `weights_only=False` in \S*train.py", finding["message"])
    assert finding["fix"] is None
    # alone, the same file offers the fix
    (tmp_path / "train.py").unlink()
    _, found = _findings(capsys, tmp_path, "--unsafe-fixes")
    assert found[("evaluate.py", 5)]["fix"] is not None


@pytest.mark.slow
def test_flake8_decides_within_the_file(tmp_path):
    write_tree(tmp_path, {"both.py": TRAIN + "\n\n" + EVALUATE.replace("import torch\n", "")})
    result = run_flake8("--select", "TL201", "both.py", cwd=tmp_path)
    assert "`args.resume` is loaded with `weights_only=False` in" in result.stdout, result.stdout + result.stderr


def test_real_torch_the_fix_withheld_would_break_the_load_and_the_advice_works(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    checkpoint = tmp_path / "ckpt.pt"
    torch.save({"model": {"w": torch.ones(2)}, "args": argparse.Namespace(lr=0.5)}, checkpoint)
    weights_file = tmp_path / "weights.pt"
    torch.save({"model": {"w": torch.ones(2)}}, weights_file)
    write_tree(tmp_path, {"proj/show.py": "import torch\n\n\ndef show(path):\n    ckpt = torch.load(path)\n    return ckpt['args'].lr\n",
                          "proj/weights.py": "import torch\n\n\ndef weights(path):\n    return torch.load(path)['model']\n"})
    _, found = _findings(capsys, tmp_path / "proj")
    assert "pass `weights_only=False` if the file is trusted" in found[("show.py", 5)]["message"]
    assert main(["check", "--no-cache", "--select", "TL201", "--fix", "--unsafe-fixes", str(tmp_path / "proj")]) == 1
    capsys.readouterr()
    show = tmp_path / "proj" / "show.py"
    assert "weights_only" not in show.read_text()
    assert "weights_only=True" in (tmp_path / "proj" / "weights.py").read_text()

    def function(name):
        spec = importlib.util.spec_from_file_location(name, tmp_path / "proj" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return getattr(module, name)

    assert torch.equal(function("weights")(weights_file)["w"], torch.ones(2))  # fixed: a dict of tensors loads
    with pytest.raises(Exception, match="argparse.Namespace"):  # what the withheld fix would do
        torch.load(checkpoint, weights_only=True)
    show.write_text(show.read_text().replace("torch.load(path)", "torch.load(path, weights_only=False)"))
    assert function("show")(checkpoint) == 0.5  # the advice, followed


@pytest.mark.parametrize(
    "body",
    [  # a read before the load, and one in a branch that excludes the load: of other values
        "    buffer = io.BytesIO(obj.cpu().numpy())\n    obj = torch.load(buffer)\n    return obj\n",
        "    if not is_tensor:\n        obj = torch.load(io.BytesIO(obj))\n    else:\n        obj = obj.to(device)\n"
        "    return obj\n",
    ],
)
def test_reads_of_another_value_of_the_name_do_not_count(tmp_path, capsys, body):
    write_tree(tmp_path, {"m.py": f"import io\nimport torch\n\n\ndef receive(obj, is_tensor, device):\n{body}"})
    _, found = _findings(capsys, tmp_path, "--unsafe-fixes")
    (finding,) = found.values()
    assert finding["fix"] is not None and "holds objects" not in finding["message"]


NUMPY_SAVED = """\
import numpy as np
import torch


def save(model, accs, path):
    state = {"model": model.state_dict()}
    state["best_acc"] = {value}
    torch.save(state, path)


def resume(model, path):
    ckpt = torch.load(path)
    model.load_state_dict(ckpt["model"])
    return ckpt["best_acc"]
"""


@pytest.mark.parametrize("value, holds_numpy", [
    ("np.mean(accs)", True),
    ("np.asarray(accs).max() * 100", True),
    ("torch.tensor(accs).numpy()", True),
    ("float(np.mean(accs))", False),
    ("np.mean(accs).item()", False),
    ("max(accs)", False),
])
def test_a_key_saved_as_a_numpy_value_is_read_as_an_object(tmp_path, value, holds_numpy):
    (tmp_path / "train.py").write_text(NUMPY_SAVED.replace("{value}", value))
    result = run_torchlint("check", "--no-cache", "--output-format", "json", "--unsafe-fixes", "train.py", cwd=tmp_path)
    [finding] = json.loads(result.stdout)
    assert finding["location"]["row"] == 12
    assert (finding["fix"] is None) == holds_numpy
    if holds_numpy:
        assert f'`ckpt["best_acc"]` is saved as a NumPy value, `{value}`' in finding["message"]


def test_numpy_saved_values_really_refuse_weights_only(tmp_path):
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    path = tmp_path / "ckpt.pt"
    torch.save({"best_acc": np.mean([0.5, 0.7])}, path)
    with pytest.raises(Exception, match="numpy"):
        torch.load(path, weights_only=True)


# Issue 31 item 2: the project's own evidence (what it saves, the keys it reads) and the
# declared torch decide TL201's fix and wording.
SRRESNET = '''import torch
from models import SRResNet

CHECKPOINT = "checkpoints/checkpoint_srresnet.pth.tar"


def train():
    model = SRResNet().to("cpu")
    torch.save({"epoch": 1, "model": model}, CHECKPOINT)
'''
SRGAN = '''import torch

srresnet_checkpoint = "./checkpoint_srresnet.pth.tar"


def main():
    return torch.load(srresnet_checkpoint)["model"]
'''


def test_a_file_another_module_saves_a_whole_model_to_gets_no_fix(tmp_path):
    write_tree(tmp_path, {"srresnet.py": SRRESNET, "srgan.py": SRGAN})
    result = run_torchlint("check", "--no-cache", "--select", "TL201", "--unsafe-fixes", "--output-format", "json", ".",
                           cwd=tmp_path)
    [finding] = json.loads(result.stdout)
    assert finding["fix"] is None and finding["location"]["row"] == 7
    assert re.search(r'`"checkpoint_srresnet.pth.tar"` is where \S*srresnet.py saves a whole object', finding["message"])
    # alone, nothing says what the file holds: the fix stays
    (tmp_path / "srresnet.py").unlink()
    result = run_torchlint("check", "--no-cache", "--select", "TL201", "--unsafe-fixes", "--output-format", "json", ".",
                           cwd=tmp_path)
    [finding] = json.loads(result.stdout)
    assert finding["fix"] is not None


@pytest.mark.parametrize("body, evidence", [
    ("    ckpt = torch.load(path)\n    ckpt.pop('message_hub')\n    ckpt.pop('optimizer')\n    return ckpt\n",
     '`ckpt.pop("message_hub")` is read: a training checkpoint'),
    ("    ckpt = torch.load(path)\n    optimizer.load_state_dict(ckpt['optimizer'])\n    return ckpt['epoch']\n",
     '`ckpt["optimizer"]` and `ckpt["epoch"]` are read: a training checkpoint'),
    ("    ckpt = torch.load(path)\n    return ckpt['meta'], ckpt['state_dict']\n", '`ckpt["meta"]` is read'),
    ("    ckpt = torch.load(path)\n    return ckpt['train_args'].lr\n", '`ckpt["train_args"]` is read'),
])
def test_a_training_checkpoint_read_by_its_keys_gets_no_fix(tmp_path, body, evidence):
    write_tree(tmp_path, {"m.py": f"import torch\n\n\ndef load(path, optimizer):\n{body}"})
    result = run_torchlint("check", "--no-cache", "--select", "TL201", "--unsafe-fixes", "--output-format", "json", ".",
                           cwd=tmp_path)
    [finding] = json.loads(result.stdout)
    assert finding["fix"] is None and evidence in finding["message"], finding["message"]


def test_a_tensor_method_on_the_loaded_value_is_no_evidence_of_objects(tmp_path):
    write_tree(tmp_path, {"m.py": "import torch\n\n\ndef codebook(path):\n    codebook_ckpt_weight = torch.load(path)\n"
                                  "    return codebook_ckpt_weight.clone(), codebook_ckpt_weight.shape\n"})
    result = run_torchlint("check", "--no-cache", "--select", "TL201", "--unsafe-fixes", "--output-format", "json", ".",
                           cwd=tmp_path)
    [finding] = json.loads(result.stdout)
    assert finding["fix"] is not None and "holds objects" not in finding["message"]


TARGET_26 = '[tool.torchlint]\ntarget-torch = "2.6"\n[tool.torchlint.torch-load-without-weights-only]\n'


def test_from_torch_2_6_a_load_of_objects_is_reported_as_failing_and_nothing_inserts_weights_only(tmp_path):
    write_tree(tmp_path, {
        "pyproject.toml": TARGET_26,
        "m.py": "import torch\n\n\ndef same(model):\n    torch.save(model, 'whole.pt')\n    return torch.load('whole.pt')\n\n\n"
                "def plain(path):\n    return torch.load(path)['model']\n\n\n"
                "def trusted(path):\n    return torch.load(path, weights_only=False)\n",
    })
    result = run_torchlint("check", "--no-cache", "--select", "TL201", "--unsafe-fixes", "--output-format", "json", ".",
                           cwd=tmp_path)
    [finding] = json.loads(result.stdout)
    assert finding["location"]["row"] == 6 and finding["fix"] is None
    message = finding["message"]
    assert "refuses objects from torch 2.6 (target-torch is 2.6)" in message and "UnpicklingError" in message
    assert "add_safe_globals" in message and "safe_globals([...])" in message and "weights_only=False` with a comment" in message
    # written out, with the option: the advice is the allow-list, not `weights_only=True`
    (tmp_path / "pyproject.toml").write_text(TARGET_26 + "report-explicit-false = true\n")
    result = run_torchlint("check", "--no-cache", "--select", "TL201", "--unsafe-fixes", "--output-format", "json", ".",
                           cwd=tmp_path)
    explicit = [f for f in json.loads(result.stdout) if f["location"]["row"] == 14]
    assert explicit and "add_safe_globals" in explicit[0]["message"] and explicit[0]["fix"] is None
    assert "pass `weights_only=True`" not in explicit[0]["message"]


def test_real_torch_a_whole_model_saved_refuses_weights_only(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "whole.pt"
    torch.save(torch.nn.Linear(2, 1), path)
    with pytest.raises(Exception, match="weights_only"):
        torch.load(path, weights_only=True)


# pytorch-forecasting's TimeSeriesDataSet and torchrl's GPT2RewardModel save themselves
# whole; their loaders read what `save` wrote, whatever path the caller passes
SAVES_ITSELF = '''import torch


class Dataset:
    @classmethod
    def load(cls, fname):
        obj = torch.load(fname)
        assert isinstance(obj, cls)
        return obj

    def save(self, fname):
        torch.save({SAVED}, fname)
'''


@pytest.mark.parametrize("target", ["2.2", "2.6"])
def test_a_class_that_saves_its_own_instance_gets_no_fix_for_its_loads(tmp_path, target):
    write_tree(tmp_path, {"pyproject.toml": f'[tool.torchlint]\ntarget-torch = "{target}"\n',
                          "m.py": SAVES_ITSELF.replace("{SAVED}", "self")})
    result = run_torchlint("check", "--no-cache", "--select", "TL201", "--fix", "--unsafe-fixes", "--output-format", "json",
                           ".", cwd=tmp_path)
    [finding] = json.loads(result.stdout)
    assert finding["location"]["row"] == 7 and finding["fix"] is None
    assert "`Dataset` saves its own instance whole with `torch.save(self, ...)`" in finding["message"]
    assert "weights_only" not in (tmp_path / "m.py").read_text()


def test_a_class_that_saves_a_state_dict_keeps_the_fix(tmp_path):
    write_tree(tmp_path, {"m.py": SAVES_ITSELF.replace("{SAVED}", "self.state_dict()")})
    result = run_torchlint("check", "--no-cache", "--select", "TL201", "--unsafe-fixes", "--output-format", "json", ".",
                           cwd=tmp_path)
    [finding] = json.loads(result.stdout)
    assert finding["fix"] is not None and "holds objects" not in finding["message"]


ROUND_TRIP = '''import argparse
import io

import torch


def clone(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer)


def clone_weights(model):
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    return torch.load(buffer)


copy = clone(argparse.Namespace(lr=0.1))
weights = clone_weights(torch.nn.Linear(2, 2))
'''


def test_a_round_trip_of_an_object_through_a_buffer_keeps_working_and_a_state_dicts_gets_the_fix(
        tmp_path, capsys, monkeypatch):
    pytest.importorskip("torch")
    # the project's torch is older than 2.6, where a load without `weights_only` unpickles anything
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    write_tree(tmp_path, {"m.py": ROUND_TRIP})
    _, found = _findings(capsys, tmp_path, "--unsafe-fixes")
    assert "saves `obj` with `torch.save` and loads what it saved" in found[("m.py", 11)]["message"]
    assert found[("m.py", 11)]["fix"] is None and found[("m.py", 18)]["fix"] is not None
    main(["check", "--no-cache", "--select", "TL201", "--fix", "--unsafe-fixes", str(tmp_path)])
    capsys.readouterr()
    fixed = (tmp_path / "m.py").read_text()
    assert fixed.count("weights_only=True") == 1
    namespace = {}
    exec(compile(fixed, "m.py", "exec"), namespace)  # real torch: the object round trip still loads
    assert namespace["copy"].lr == 0.1 and set(namespace["weights"]) == {"weight", "bias"}
    with pytest.raises(Exception, match="(?i)weights only|Unsupported global"):  # what the fix would have done
        exec(compile(ROUND_TRIP.replace("return torch.load(buffer)", "return torch.load(buffer, weights_only=True)", 1),
                     "m.py", "exec"), {})


def test_a_path_under_a_config_named_key_keeps_the_fix(tmp_path, capsys):
    write_tree(tmp_path, {"m.py": "import torch\n\n\ndef load(path):\n    ckpt = torch.load(path)\n"
                                  "    return ckpt['config_path'], ckpt['model']\n"})
    _, found = _findings(capsys, tmp_path, "--unsafe-fixes")
    (finding,) = found.values()
    assert finding["fix"] is not None


def test_a_checkpoint_handed_to_fairseq_gets_no_fix(tmp_path, capsys):
    write_tree(tmp_path, {"m.py": (
        "import fairseq\nimport torch\n\n\ndef load(path):\n    checkpoint = torch.load(path)\n"
        "    models, *_ = fairseq.checkpoint_utils.load_model_ensemble_and_task({path: checkpoint})\n"
        "    return models[0]\n")})
    _, found = _findings(capsys, tmp_path, "--unsafe-fixes")
    (finding,) = found.values()
    assert "goes to fairseq" in finding["message"] and finding["fix"] is None


def test_a_load_returned_as_a_module_keeps_working(tmp_path, capsys, monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")  # a torch before 2.6, as the project declares
    torch.save(torch.nn.Linear(2, 2), tmp_path / "best_model")
    source = ("import torch\nfrom torch import nn\n\n\ndef load_model(path) -> nn.Module:\n"
              "    return torch.load(path, map_location='cpu').to(torch.float64)\n")
    write_tree(tmp_path, {"m.py": source})
    _, found = _findings(capsys, tmp_path, "--unsafe-fixes")
    (finding,) = found.values()
    assert "`load_model` returns it as `nn.Module`" in finding["message"] and finding["fix"] is None
    main(["check", "--no-cache", "--select", "TL201", "--fix", "--unsafe-fixes", str(tmp_path)])
    capsys.readouterr()
    namespace = {}
    exec(compile((tmp_path / "m.py").read_text(), "m.py", "exec"), namespace)
    assert namespace["load_model"](tmp_path / "best_model").weight.dtype == torch.float64
