"""torchlint.analysis.modules: which classes are modules, across imports, files and aliases."""

from __future__ import annotations

import pytest

from torchlint.core.lazy import cst
from torchlint.analysis.layers import Layer, constructed_layer, module_functions
from torchlint.analysis.modules import ClassIndex, FileClasses, Kind, root_kind
from torchlint.analysis.statements import read_names
from torchlint.analysis.classes import attribute_values, method
from torchlint.analysis.names import ImportMap


def _classes(source: str, path: str = "pkg/models.py") -> FileClasses:
    module = cst.parse_module(source)
    return FileClasses(module, path, ImportMap(module))


def _verdicts(source: str, path: str = "pkg/models.py", needs: str = "module"):
    classes = _classes(source, path)
    return {node.name.value: classes.verdict(node, needs) for node in classes.by_node}


@pytest.mark.parametrize(
    "header,base",
    [
        ("import torch.nn as nn", "nn.Module"),
        ("from torch import nn", "nn.Module"),
        ("import torch", "torch.nn.Module"),
        ("from torch.nn import Module", "Module"),
        ("from torch.nn import Module as M", "M"),
        ("from torch.nn.modules.loss import _Loss", "_Loss"),
        ("from torch import nn", "nn.Sequential"),
        ("from torch.nn import Conv2d", "Conv2d"),
        ("import pytorch_lightning as pl", "pl.LightningModule"),
        ("from lightning.pytorch import LightningModule", "LightningModule"),
        ("import lightning as L", "L.LightningModule"),
    ],
)
def test_module_bases_resolve_through_imports(header, base):
    assert _verdicts(f"{header}\nclass A({base}):\n    pass\n") == {"A": True}


@pytest.mark.parametrize(
    "source",
    [
        "class Module:\n    pass\nclass A(Module):\n    pass\n",  # a local class that shares the name
        "from torch.utils.data import Dataset\nclass A(Dataset):\n    pass\n",
        "from torch import nn\nclass A(nn.Parameter):\n    pass\n",
        "import abc\nclass A(abc.ABC):\n    def forward(self, x):\n        pass\n",
        "class A(object):\n    def forward(self, x):\n        pass\n",
        "class A:\n    pass\n",
    ],
)
def test_non_modules(source):
    assert set(_verdicts(source).values()) == {False}


def test_inheritance_within_the_file_and_nested_classes():
    source = (
        "from torch import nn\n"
        "class Base(nn.Module):\n    pass\n"
        "class Head(Base):\n    class Config:\n        pass\n"
        "class Plain:\n    pass\n"
    )
    assert _verdicts(source) == {"Base": True, "Head": True, "Config": False, "Plain": False}


def test_imported_base_is_deferred_and_lightning_is_a_module():
    source = "from .base import BaseHead\nimport pytorch_lightning as pl\nclass H(BaseHead):\n    pass\nclass L(pl.LightningModule):\n    pass\n"
    assert _verdicts(source) == {"H": None, "L": True}
    assert _verdicts(source, needs="lightning") == {"H": None, "L": True}
    classes = _classes(source)
    assert [facts.bases for facts in classes.by_node.values()][0] == ("pkg.base.BaseHead",)


def test_project_index_resolves_across_files_and_falls_back():
    base = _classes("from torch import nn\nclass BaseHead(nn.Module):\n    pass\nclass Plain:\n    pass\n", "src/pkg/base.py")
    heads = _classes(
        "from pkg.base import BaseHead, Plain\nfrom vendor import Thing\n"
        "class H(BaseHead):\n    pass\nclass P(Plain):\n    def forward(self, x):\n        pass\n"
        "class T(Thing):\n    def forward(self, x):\n        pass\n"
        "class U(Thing):\n    pass\n",
        "src/pkg/heads.py",
    )
    index = ClassIndex([*base.by_node.values(), *heads.by_node.values()])
    by_name = {facts.name.rsplit(".", 1)[-1]: facts for facts in heads.by_node.values()}
    assert index.kind(by_name["H"].name) is Kind.MODULE
    assert index.is_module(by_name["H"])
    assert not index.is_module(by_name["P"])  # found in the tree, and not a module
    assert index.is_module(by_name["T"])  # unresolvable base, defines forward
    assert not index.is_module(by_name["U"])


def test_cycles_do_not_hang():
    index = ClassIndex([])
    source = "from .b import B\nclass A(B):\n    pass\n"
    a = _classes(source, "p/a.py")
    b = _classes("from .a import A\nclass B(A):\n    pass\n", "p/b.py")
    index = ClassIndex([*a.by_node.values(), *b.by_node.values()])
    assert index.kind("p.a.A") is Kind.OTHER


def test_root_kind():
    assert root_kind("torch.nn.modules.conv.Conv2d") is Kind.MODULE
    assert root_kind("torch.nn.utils.rnn.PackedSequence") is Kind.OTHER
    assert root_kind("torch.autograd.Function") is Kind.OTHER
    assert root_kind("typing.Generic") is Kind.OTHER
    assert root_kind("pytorch_lightning.core.module.LightningModule") is Kind.LIGHTNING
    assert root_kind("transformers.PreTrainedModel") is Kind.MODULE  # the ecosystem's documented module bases
    assert root_kind("mmengine.model.BaseModule") is Kind.MODULE
    assert root_kind("transformers.PreTrainedTokenizer") is None


def test_attributes_layers_and_factories():
    source = (
        "import torch.nn as nn\n"
        "def conv_bn_relu(i, o):\n"
        "    return nn.Sequential(nn.Conv2d(i, o, 3), nn.BatchNorm2d(o), nn.ReLU())\n"
        "class A(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fusion = conv_bn_relu(3, 4)\n"
        "        self.head: nn.Module = nn.Conv1d(4, 2, 1)\n"
        "        self.a, self.b = nn.Linear(1, 2), 3\n"
        "    def forward(self, x):\n"
        "        return self.fusion(x)\n"
    )
    module = cst.parse_module(source)
    imports = ImportMap(module)
    class_node = module.body[2]
    values = attribute_values(class_node)
    layers = {name: constructed_layer(v[0], imports, module_functions(module)) for name, v in values.items()}
    assert layers == {
        "fusion": Layer("torch.nn.Conv2d", (0,), "conv_bn_relu"),
        "head": Layer("torch.nn.Conv1d"),
        "a": Layer("torch.nn.Linear"),
        "b": None,
    }
    assert method(class_node, "forward").name.value == "forward"
    assert method(class_node, "training_step") is None


def test_read_names():
    assert read_names(cst.parse_expression("x.shape[1] == 3")) == {"x"}
    assert "x" not in read_names(cst.parse_expression("self.x + f(x=1)"))
