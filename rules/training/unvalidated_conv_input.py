from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import AbstractSet, Dict, Iterator, List, Mapping, Optional, Set, Tuple

from torchlint.core.config import Config
from torchlint.core.partial_parse import definitions_around
from torchlint.core.diagnostics import Applicability, Fix
from torchlint.fixing.layout import argument_lines, comparison_lines, INDENT, string_lines, width
from torchlint.core.lazy import cst
from torchlint.analysis.modules import (
    assigned_names,
    attribute_values,
    canonical,
    children,
    class_functions,
    constructed_layer,
    file_classes,
    insert_import,
    Layer,
    method,
    module_functions,
    PARAMETRIZATIONS,
    reads_name,
    self_attribute,
    self_name,
    walk,
)
from torchlint.analysis.names import cst_dotted_name
from torchlint.analysis.hot_paths import class_graph
from torchlint.core.rule import Invalid, Positions, Report, Rule, SourceView
from torchlint.index.pending import ClassIs, ModelInput, SkipInput
from torchlint.index.record import FileRecord
from torchlint.analysis.submodule_calls import submodule_calls
from torchlint.core.walk import ast_nodes, blocks

# layer or function -> its spatial dimensions
CONV_LAYERS = {
    f"torch.nn.{kind}{n}d": n for kind in ("Conv", "ConvTranspose") for n in (1, 2, 3)
}
CONV_FUNCTIONS = {
    f"{prefix}.{kind}{n}d": n
    for prefix in ("torch.nn.functional", "torch")
    for kind in ("conv", "conv_transpose")
    for n in (1, 2, 3)
}
CONCATENATIONS = frozenset({"torch.cat", "torch.stack", "torch.concat", "torch.concatenate"})
_CONCAT_LAST = frozenset(name.rsplit(".", 1)[-1] for name in CONCATENATIONS)
# methods that return the same tensor's data with the same channel layout
_SAME_CHANNELS = frozenset(
    {"float", "half", "double", "bfloat16", "to", "contiguous", "cuda", "cpu", "type", "type_as", "detach", "clone"}
)
_CHECK_PREFIXES = ("check", "validate", "assert", "ensure")
_TEXT_MARKERS = ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose", "conv1d", "conv2d", "conv3d", "conv_transpose")


PARAMETERS = "check-parameters"
CONCATS = "check-concatenations"
INTERNAL_CONCATS = "check-internal-concatenations"
FIXED_CONCATS = "check-fixed-concatenations"
MODEL_INPUTS = "check-model-inputs"
COUNT = "*count"  # provenance: the caller decides how many parts a concatenation has
_INSIDE: frozenset = frozenset()


@dataclass
class _Value:
    origin: str  # PARAMETERS | CONCATS
    checked: bool = False
    reported: bool = False
    axis: Optional[int] = None  # CONCATS: the `dim` joined along, None if not a literal
    # CONCATS: where a part, or the number of parts, comes from outside the module: the
    # parameters of forward it derives from, and COUNT if the caller decides how many
    outside: frozenset = frozenset({COUNT})


@dataclass
class _Finding:
    origin: str  # PARAMETERS | CONCATS
    report: Report
    functional: bool  # F.conv*: no in_channels to name
    provenance: frozenset = frozenset()  # CONCATS: see _Value.outside


@dataclass
class _Conv:
    """A convolution call found in forward."""

    call: object
    label: str  # how the message names the layer
    dims: int
    access: Optional[str]  # `self.fusion[0]`: where in_channels is read, None for F.conv*
    optional: bool = False  # the attribute may hold None or nn.Identity() instead, here


class UnvalidatedConvInput(Rule):
    """
    ## What it does
    Flags a convolution in `forward` whose input's shape nothing has checked, where a check
    says more than PyTorch's own error. By default: a tensor joined by `torch.cat` /
    `torch.stack` / `torch.concat` / `torch.concatenate` along the channel axis (`dim` 1, or
    counted from the end) and fed to the layer, where the number of parts comes from outside
    the module: the sequence joined, or a starred part, is a parameter of `forward` or
    computed from one (an FPN fusion over however many levels the caller passes).

    Reported only with an option:
    - `check-fixed-concatenations`: a fixed number of parts, one of them from outside (a
      U-Net's `skip`), where PyTorch's error already names the one sum it changes;
    - `check-internal-concatenations`: parts that are all internal: outputs of the module's
      own layers (Inception branches, ASPP), a part one of its convs already took in the
      same `forward`, a part whose channel count its maker writes down (`x.mean(1,
      keepdim=True)`, `coords.reshape(b, 2, h, w)`), and a skip: a `forward` parameter that
      every module of the project calling this one feeds from its own layers (a skip some
      caller feeds from its own caller counts as from outside);
    - `check-parameters`: a parameter of `forward` fed straight to a convolution, in every
      module; `check-model-inputs`: the same at the entry convolution of a top-level model
      (no module of the linted project uses its class as a part; the flake8 plugin sees one
      file only). Not `F.conv*`. Eager PyTorch's error names both counts there.

    A convolution is a module attribute built as `nn.Conv1d/2d/3d` or `nn.ConvTranspose1d/2d/3d`
    (directly, under `weight_norm` / `spectral_norm` / parametrizations, as the first layer
    of an `nn.Sequential`, or by a function of the same file such as `conv_bn_relu(...)`;
    one branch of `__init__` may set it to `None` or `nn.Identity()`), or a direct
    `F.conv2d` / `torch.conv2d` call. A value is checked when an earlier statement of
    `forward` tests its shape (`assert`, `torch._assert(...)` or `if ...: raise` on
    `x.shape`, `x.size(...)`, `x.dim()`, `x.ndim` or names unpacked from them) or passes it
    to a function named `check*`, `validate*`, `assert*` or `ensure*`. Only the first
    convolution of each unchecked value is reported; outputs of other layers are not.

    ## Why is this bad?
    A wrong channel count (another backbone, an added FPN level, RGBA for RGB) surfaces
    inside the layer: on the GPU often as `CUDNN_STATUS_BAD_PARAM` or deep inside an AMP,
    `channels_last` or compiled kernel, far from the module that got the bad tensor and
    without the parts that made it up. A check where the tensor is assembled names the
    layer, the count it expects and the shape it got. At run time,
    `torchlint.runtime.guard(model)` (docs/guard.md) checks every convolution's input.

    ## Example
    ```python
    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.fusion = nn.Conv2d(1024, 256, 3, padding=1)

        def forward(self, p2, p3, p4, p5):
            fused = torch.cat([p2, p3, p4, p5], dim=1)
            return self.fusion(fused)
    ```

    ## Use instead
    ```python
        def forward(self, p2, p3, p4, p5):
            fused = torch.cat([p2, p3, p4, p5], dim=1)
            torch._assert(
                fused.size(-3) == self.fusion.in_channels,
                f"fusion expects {self.fusion.in_channels} input channels, "
                f"got shape {fused.shape}",
            )
            return self.fusion(fused)
    ```

    ## Fix safety
    Safe: one `torch._assert` before the statement compares the channel axis, counted from
    the end (`size(-3)` for a 2-d conv, batched or not), with the layer's `in_channels`
    (`self.fusion[0].in_channels` for an `nn.Sequential` or a factory), with a message that
    names the layer, the count and the shape. It adds `import torch` if missing and is laid
    out within the line length as a formatter would. A correct input passes unchanged; a
    wrong one fails earlier and says more. `torch._assert` works eagerly and under
    `torch.jit.script`, `torch.fx` (the message then shows the traced shape) and
    `torch.compile` (a passing check costs no graph break; a failing one under
    `fullgraph=True` raises dynamo's `Unsupported` instead of the message).

    No fix when the call is not evaluated unconditionally by its statement (a conditional
    expression, `and`/`or`, a comprehension, a lambda), the statement shares a line or is a
    compound statement's header, the input is not a plain name, the attribute may hold
    `None` or `nn.Identity()` at the call, or for `F.conv*` calls (check those by hand).

    ## Options
    - `check-concatenations` (default `true`): joined values with a part count from outside.
    - `check-fixed-concatenations` (default `false`): also a fixed count with a part from outside.
    - `check-internal-concatenations` (default `false`): also joins of internal parts only.
    - `check-parameters` (default `false`): a `forward` parameter fed to a convolution.
    - `check-model-inputs` (default `false`): the same at a top-level model's entry convolution.

    ```toml
    [tool.torchlint.unvalidated-conv-input]
    check-parameters = true
    ```
    """

    code = "TL002"
    name = "unvalidated-conv-input"
    summary = "Convolution applied to an input whose shape nothing checks"
    fixable = True
    project_rule = True
    triggers = ("Conv", "conv")
    options = {PARAMETERS: False, CONCATS: True, INTERNAL_CONCATS: False, FIXED_CONCATS: False, MODEL_INPUTS: False}

    VALID = (
        # checked by an assert, by torch._assert, by if/raise, by a check function
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3)\n\n"
        "    def forward(self, x):\n        assert x.shape[1] == 3\n        return self.conv(x)\n",
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3)\n\n"
        "    def forward(self, x):\n        if x.dim() != 4:\n            raise ValueError(x.shape)\n"
        "        return self.conv(x)\n",
        "from torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.conv = nn.Conv1d(3, 8, 3)\n\n"
        "    def forward(self, x):\n        self._check_input(x)\n        return self.conv(x)\n",
        "from torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.proj = nn.Conv2d(3, 8, 3)\n\n"
        "    def forward(self, pixels):\n        n, channels, h, w = pixels.shape\n"
        "        if channels != 3:\n            raise ValueError(channels)\n        return self.proj(pixels)\n",
        # the input came out of another layer
        "from torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.stem = nn.Linear(3, 8)\n        self.conv = nn.Conv1d(8, 8, 3)\n\n"
        "    def forward(self, x):\n        h = self.stem(x)\n        return self.conv(h)\n",
        # not a module; not forward; a Lazy conv; using .shape for a size is no check but no conv here
        "from torch import nn\n\nclass M:\n    def __init__(self):\n        self.conv = nn.Conv2d(3, 8, 3)\n\n"
        "    def forward(self, x):\n        return self.conv(x)\n",
        "from torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3)\n\n"
        "    def features(self, x):\n        return self.conv(x)\n",
        "from torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.conv = nn.LazyConv2d(8, 3)\n\n"
        "    def forward(self, x):\n        return self.conv(x)\n",
        # a conv layer's own forward
        "import torch.nn.functional as F\nfrom torch import nn\n\nclass StdConv2d(nn.Conv2d):\n"
        "    def forward(self, x):\n        return F.conv2d(x, self.weight / self.weight.std())\n",
        # a local class named like a torch one is not a module
        "class Module:\n    pass\n\nclass Conv2d:\n    pass\n\nclass M(Module):\n    def __init__(self):\n"
        "        self.conv = Conv2d()\n\n    def forward(self, x):\n        return self.conv(x)\n",
        # joined along time (causal padding), not channels; along an axis the code computes
        "import torch\nfrom torch import nn\n\nclass CausalConv(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.conv = nn.Conv1d(8, 8, 3)\n\n"
        "    def forward(self, cache, x):\n        assert x.shape[1] == 8\n"
        "        x = torch.cat([cache, x], dim=2)\n        y = self.conv(x)\n"
        "        return y + self.conv(torch.cat([x, x], d))\n",
        # the parts are this module's own layers' outputs: their number and widths are fixed
        # when it is built (Inception, Res2Net, ASPP)
        "import torch\nfrom torch import nn\n\nclass Mixed(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.branches = nn.ModuleList([nn.Conv2d(8, 4, 1), nn.Conv2d(8, 4, 3)])\n"
        "        self.fuse = nn.Conv2d(8, 8, 1)\n\n"
        "    def forward(self, x):\n        assert x.shape[1] == 8\n        parts = []\n"
        "        for branch in self.branches:\n            parts.append(branch(x))\n"
        "        out = torch.cat(parts, dim=1)\n        return self.fuse(out)\n",
        # a U-Net decoder's skips: the parent passes its own encoder's outputs, whose
        # widths its own constructor fixed (also through a loop over a ModuleList)
        "import torch\nfrom torch import nn\n\nclass Up(nn.Module):\n    def __init__(self, c):\n"
        "        super().__init__()\n        self.conv = nn.Conv2d(2 * c, c, 3)\n\n"
        "    def forward(self, x, skip):\n        return self.conv(torch.cat([x, skip], dim=1))\n\n"
        "class UNet(nn.Module):\n    def __init__(self, c):\n        super().__init__()\n"
        "        self.down = nn.Conv2d(3, c, 3)\n        self.ups = nn.ModuleList([Up(c), Up(c)])\n\n"
        "    def forward(self, image):\n        skip = self.down(image)\n        x = skip\n"
        "        for up in self.ups:\n            x = up(x, skip)\n        return x\n",
        # parts whose channel count their call writes down (CBAM's spatial attention;
        # coordinates reshaped to two channels)
        "import torch\nfrom torch import nn\n\nclass SpatialAttention(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.conv = nn.Conv2d(4, 1, 7, padding=3)\n\n"
        "    def forward(self, x, coords):\n        b, _, h, w = x.shape\n"
        "        pooled = torch.cat([torch.mean(x, dim=1, keepdim=True), x.max(1, keepdim=True)[0]], 1)\n"
        "        return self.conv(torch.cat([pooled, coords.reshape(b, 2, h, w)], dim=1))\n",
        # a part that already went through one of the module's convs: that layer checked
        # its channels (a dense block)
        "import torch\nfrom torch import nn\n\nclass Dense(nn.Module):\n    def __init__(self, c, g):\n"
        "        super().__init__()\n        self.conv1 = nn.Conv2d(c, g, 3)\n        self.conv2 = nn.Conv2d(c + g, g, 3)\n\n"
        "    def forward(self, x):\n        x1 = self.conv1(x)\n        return self.conv2(torch.cat((x, x1), 1))\n",
        # a top-level model's entry conv: only with check-model-inputs
        "from torch import nn\n\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3)\n\n"
        "    def forward(self, images):\n        return self.conv(images)\n",
    )
    INVALID = (
        # an FPN fusion over however many levels the caller passes
        Invalid(
            "import torch\nfrom torch import nn\n\n\nclass Fusion(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n"
            "        self.lateral = nn.ModuleList(nn.Conv2d(c, 64, 1) for c in (16, 32, 64, 128))\n"
            "        self.fusion = nn.Conv2d(256, 256, 3, padding=1)\n\n"
            "    def forward(self, features):\n"
            "        fused = torch.cat([conv(f) for conv, f in zip(self.lateral, features)], dim=1)\n"
            "        return self.fusion(fused)\n",
            fixed="import torch\nfrom torch import nn\n\n\nclass Fusion(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n"
            "        self.lateral = nn.ModuleList(nn.Conv2d(c, 64, 1) for c in (16, 32, 64, 128))\n"
            "        self.fusion = nn.Conv2d(256, 256, 3, padding=1)\n\n"
            "    def forward(self, features):\n"
            "        fused = torch.cat([conv(f) for conv, f in zip(self.lateral, features)], dim=1)\n"
            "        torch._assert(\n"
            "            fused.size(-3) == self.fusion.in_channels,\n"
            '            f"fusion expects {self.fusion.in_channels} input channels, "\n'
            '            f"got shape {fused.shape}",\n'
            "        )\n"
            "        return self.fusion(fused)\n",
            line=13,
            column=16,
        ),
        # a fixed number of parts that are parameters, and no module of the project is seen
        # passing its own layers' outputs there (the fix is applied by the CLI's project pass)
        Invalid(
            "import torch\nfrom torch import nn\n\n\nclass Decoder(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n"
            "        self.fusion = nn.Conv2d(1024, 256, 3, padding=1)\n\n"
            "    def forward(self, p2, p3):\n"
            "        fused = torch.cat([p2, p3], dim=1)\n"
            "        return self.fusion(fused)\n",
            line=12,
            column=16,
            options=((FIXED_CONCATS, True),),
        ),
        # a factory returning a Sequential; `import torch` is added
        Invalid(
            "import torch.nn as nn\n\n\ndef conv_bn_relu(i, o):\n"
            "    return nn.Sequential(nn.Conv1d(i, o, 3), nn.BatchNorm1d(o), nn.ReLU())\n\n\n"
            "class Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.block = conv_bn_relu(64, 32)\n\n"
            "    def forward(self, feats):\n        out = self.block(feats)\n        return out\n",
            fixed="import torch\nimport torch.nn as nn\n\n\ndef conv_bn_relu(i, o):\n"
            "    return nn.Sequential(nn.Conv1d(i, o, 3), nn.BatchNorm1d(o), nn.ReLU())\n\n\n"
            "class Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.block = conv_bn_relu(64, 32)\n\n"
            "    def forward(self, feats):\n"
            "        torch._assert(\n"
            "            feats.size(-2) == self.block[0].in_channels,\n"
            '            f"block expects {self.block[0].in_channels} input channels, "\n'
            '            f"got shape {feats.shape}",\n'
            "        )\n"
            "        out = self.block(feats)\n        return out\n",
            line=14,
            column=15,
            options=((PARAMETERS, True),),
        ),
        # using the shape for a size is not a check; a conditional call is flagged only
        Invalid(
            "from torch import nn\nimport torch.nn.functional as F\n\nclass M(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n        self.up = nn.ConvTranspose2d(8, 8, 2)\n\n"
            "    def forward(self, x, size=None):\n        h, w = x.shape[-2:]\n"
            "        y = self.up(x) if size is None else x\n        return F.interpolate(y, size=(h, w))\n",
            line=11,
            column=13,
            options=((MODEL_INPUTS, True),),
        ),
        # an F.conv2d on a parameter: flagged only
        Invalid(
            "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\nclass M(nn.Module):\n"
            "    def forward(self, x, weight):\n        return F.conv2d(x, weight)\n",
            line=7,
            column=16,
            options=((PARAMETERS, True),),
        ),
        # a torch.cat straight into the layer; Lightning modules are modules too
        Invalid(
            "import torch\nimport pytorch_lightning as pl\n\nclass M(pl.LightningModule):\n"
            "    def __init__(self):\n        super().__init__()\n        self.conv = torch.nn.Conv3d(4, 8, 3)\n\n"
            "    def forward(self, a, rest):\n        return self.conv(torch.cat([a, *rest], 1))\n",
            line=10,
            column=16,
        ),
        # an imported base that defines forward: a module (decided in the project pass)
        Invalid(
            "from torch import nn\nfrom .base import Base\n\nclass M(Base):\n"
            "    def __init__(self):\n        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3)\n\n"
            "    def forward(self, x):\n        return self.conv(x)\n",
            line=10,
            column=16,
            options=((MODEL_INPUTS, True),),
        ),
        Invalid(
            "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3)\n\n"
            "    def forward(self, x):\n        return self.conv(x)\n",
            options=((PARAMETERS, True), (CONCATS, False)),
            fixed="import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3)\n\n"
            "    def forward(self, x):\n"
            "        torch._assert(\n"
            "            x.size(-3) == self.conv.in_channels,\n"
            '            f"conv expects {self.conv.in_channels} input channels, got shape {x.shape}",\n'
            "        )\n"
            "        return self.conv(x)\n",
        ),
        # a block of a U-Net: not its parameters, but the skip joined to them, when the
        # module that calls it passes a tensor from its own caller there
        Invalid(
            'import torch\n'
            'from torch import nn\n'
            '\n'
            '\n'
            'class Up(nn.Module):\n'
            '    def __init__(self):\n'
            '        super().__init__()\n'
            '        self.conv = nn.Conv2d(16, 8, 3)\n'
            '\n'
            '    def forward(self, x, skip):\n'
            '        x = torch.cat([x, skip], dim=1)\n'
            '        return self.conv(x)\n'
            '\n'
            '\n'
            'class Refine(nn.Module):\n'
            '    def __init__(self):\n'
            '        super().__init__()\n'
            '        self.stem = nn.Conv2d(3, 8, 3)\n'
            '        self.up = Up()\n'
            '\n'
            '    def forward(self, image, guide):\n'
            '        return self.up(self.stem(image), guide)\n',
            line=12,
            column=16,
            options=((FIXED_CONCATS, True),),
        ),
        # the parts all come from this module's layers: with check-internal-concatenations
        Invalid(
            'import torch\n'
            'from torch import nn\n'
            '\n'
            '\n'
            'class Mixed(nn.Module):\n'
            '    def __init__(self):\n'
            '        super().__init__()\n'
            '        self.a = nn.Conv2d(8, 4, 1)\n'
            '        self.b = nn.Conv2d(8, 4, 3, padding=1)\n'
            '        self.fuse = nn.Conv2d(8, 8, 1)\n'
            '\n'
            '    def forward(self, x):\n'
            '        out = torch.cat((self.a(x), self.b(x)), 1)\n'
            '        return self.fuse(out)\n'
            '\n'
            '\n'
            'class Net(nn.Module):\n'
            '    def __init__(self):\n'
            '        super().__init__()\n'
            '        self.mixed = Mixed()\n',
            fixed='import torch\n'
            'from torch import nn\n'
            '\n'
            '\n'
            'class Mixed(nn.Module):\n'
            '    def __init__(self):\n'
            '        super().__init__()\n'
            '        self.a = nn.Conv2d(8, 4, 1)\n'
            '        self.b = nn.Conv2d(8, 4, 3, padding=1)\n'
            '        self.fuse = nn.Conv2d(8, 8, 1)\n'
            '\n'
            '    def forward(self, x):\n'
            '        out = torch.cat((self.a(x), self.b(x)), 1)\n'
            '        torch._assert(\n'
            '            out.size(-3) == self.fuse.in_channels,\n'
            '            f"fuse expects {self.fuse.in_channels} input channels, "\n'
            '            f"got shape {out.shape}",\n'
            '        )\n'
            '        return self.fuse(out)\n'
            '\n'
            '\n'
            'class Net(nn.Module):\n'
            '    def __init__(self):\n'
            '        super().__init__()\n'
            '        self.mixed = Mixed()\n',
            line=14,
            column=16,
            options=((INTERNAL_CONCATS, True),),
        ),
        # a conv wrapped by weight_norm; `assert mel is not None` checks no shape
        Invalid(
            'import torch\n'
            'from torch import nn\n'
            'from torch.nn.utils import weight_norm\n'
            '\n'
            '\n'
            'class Vocoder(nn.Module):\n'
            '    def __init__(self):\n'
            '        super().__init__()\n'
            '        self.conv_pre = weight_norm(nn.Conv1d(80, 512, 7, padding=3))\n'
            '\n'
            '    def forward(self, mel):\n'
            '        assert mel is not None\n'
            '        x = self.conv_pre(mel)\n'
            '        return x\n',
            fixed='import torch\n'
            'from torch import nn\n'
            'from torch.nn.utils import weight_norm\n'
            '\n'
            '\n'
            'class Vocoder(nn.Module):\n'
            '    def __init__(self):\n'
            '        super().__init__()\n'
            '        self.conv_pre = weight_norm(nn.Conv1d(80, 512, 7, padding=3))\n'
            '\n'
            '    def forward(self, mel):\n'
            '        assert mel is not None\n'
            '        torch._assert(\n'
            '            mel.size(-2) == self.conv_pre.in_channels,\n'
            '            f"conv_pre expects {self.conv_pre.in_channels} input channels, "\n'
            '            f"got shape {mel.shape}",\n'
            '        )\n'
            '        x = self.conv_pre(mel)\n'
            '        return x\n',
            line=13,
            column=13,
            options=((PARAMETERS, True),),
        ),
        # nn.Identity() in one branch: flagged, no fix (self.proj may have no in_channels)
        Invalid(
            'import torch\n'
            'from torch import nn\n'
            '\n'
            '\n'
            'class Blocks(nn.Module):\n'
            '    def __init__(self, dim, project=False):\n'
            '        super().__init__()\n'
            '        self.proj = nn.Identity()\n'
            '        if project:\n'
            '            self.proj = nn.Conv2d(dim, dim, 1)\n'
            '\n'
            '    def forward(self, x):\n'
            '        x = self.proj(x)\n'
            '        return x\n',
            line=13,
            column=13,
            options=((MODEL_INPUTS, True),),
        ),
        # None in one branch, called under `if self.shortcut is not None:`: fixed there
        Invalid(
            'import torch\n'
            'from torch import nn\n'
            '\n'
            '\n'
            'class ResBlock(nn.Module):\n'
            '    def __init__(self, cin, cout):\n'
            '        super().__init__()\n'
            '        self.shortcut = None\n'
            '        if cin != cout:\n'
            '            self.shortcut = nn.Conv2d(cin, cout, 1)\n'
            '\n'
            '    def forward(self, x, h):\n'
            '        if self.shortcut is not None:\n'
            '            x = self.shortcut(x)\n'
            '        return x + h\n',
            fixed='import torch\n'
            'from torch import nn\n'
            '\n'
            '\n'
            'class ResBlock(nn.Module):\n'
            '    def __init__(self, cin, cout):\n'
            '        super().__init__()\n'
            '        self.shortcut = None\n'
            '        if cin != cout:\n'
            '            self.shortcut = nn.Conv2d(cin, cout, 1)\n'
            '\n'
            '    def forward(self, x, h):\n'
            '        if self.shortcut is not None:\n'
            '            torch._assert(\n'
            '                x.size(-3) == self.shortcut.in_channels,\n'
            '                f"shortcut expects {self.shortcut.in_channels} input channels, "\n'
            '                f"got shape {x.shape}",\n'
            '            )\n'
            '            x = self.shortcut(x)\n'
            '        return x + h\n',
            line=14,
            column=17,
            options=((PARAMETERS, True),),
        ),
    )

    def __init__(self, context) -> None:
        super().__init__(context)
        self._deferred: List[Tuple[str, List[Report]]] = []
        self._functions = None

    # ---- gate ---------------------------------------------------------------

    @classmethod
    def gate(cls, view: SourceView, config: Config) -> bool:
        if not any(marker in view.text for marker in _TEXT_MARKERS):
            return False
        if view.tree is None:
            return True
        return next(cls._firing_classes(view, config), None) is not None

    @classmethod
    def _firing_classes(cls, view: SourceView, config: Config) -> Iterator[ast.ClassDef]:
        """The classes whose `forward` may hold a finding, by the stdlib ast alone."""
        settings = {**cls.options, **config.options_for(cls.name)}
        imports = view.imports
        factories = _AstFactories(view.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef), imports)
        for node in view.nodes_of(ast.ClassDef):
            if any(
                forward.name == "forward" and _ast_may_fire(node, forward, settings, factories, imports)
                for forward in ast_methods(node)
            ):
                yield node

    @classmethod
    def needed_definitions(cls, view: SourceView, config: Config) -> Optional[AbstractSet[int]]:
        """The definitions holding a class whose `forward` the gate says may fire."""
        if view.tree is None:
            return None
        return definitions_around(view, cls._firing_classes(view, config))

    @classmethod
    def ast_facts(cls, view: SourceView, config: Config, record: FileRecord) -> None:
        record.submodule_uses = tuple(submodule_uses(view))
        record.submodule_calls = tuple(submodule_calls(view))
        # every file's classes, parsed by LibCST or not, resolve the project's bases (the
        # resolver counts a class a module by its bases or its `forward`, not its body)
        if view.tree is not None:
            record.classes = class_graph(view).classes

    # ---- traversal ------------------------------------------------------------

    def visit_ClassDef(self, node) -> None:
        forward = method(node, "forward")
        if forward is None or not isinstance(forward.body, cst.IndentedBlock):
            return
        classes = file_classes(self.context)
        verdict = classes.verdict(node, "module")
        if verdict is False:
            return
        if any(canonical(base) in CONV_LAYERS for base in classes.facts_of(node).bases):
            return  # a conv layer's own forward (a weight-standardized Conv2d): the caller checks
        class_name = classes.facts_of(node).name
        reports, entries = [], []
        positions = _parameter_positions(forward)
        for finding in self._check_forward(node, forward):
            skip = self._skip_parameters(finding, positions)
            if skip:
                self.context.defer(finding.report, SkipInput(class_name, tuple(tuple(pair) for pair in skip)))
            elif finding.origin == CONCATS or self.settings[PARAMETERS]:
                reports.append(finding.report)
            elif self.settings[MODEL_INPUTS] and not finding.functional:  # F.conv*: no in_channels to name
                entries.append(finding.report)
        for report in entries:
            self.context.defer(report, ModelInput(class_name))
        if verdict:
            self.context.reports.extend(reports)
        elif reports:
            self._deferred.append((class_name, reports))

    def leave_Module(self, node) -> None:
        for class_name, reports in self._deferred:
            for report in reports:
                self.context.defer(report, ClassIs(class_name, "module"))

    def _skip_parameters(self, finding: _Finding, positions: Mapping[str, Optional[int]]) -> List[list]:
        """For a concatenation whose outside parts are parameters of `forward` (a skip),
        and not the number of parts: `[[position or None, name], ...]` of those
        parameters; else empty (reported as it is)."""
        if finding.origin != CONCATS or self.settings[INTERNAL_CONCATS] or not finding.provenance:
            return []
        if not all(name in positions for name in finding.provenance):  # COUNT, or unknown
            return []
        return [[positions[name], name] for name in sorted(finding.provenance)]

    # ---- the analysis of one forward -------------------------------------------

    def _convs(self, class_node) -> Dict[str, Tuple[Layer, int, frozenset]]:
        """The attributes that hold a conv: name -> (layer, spatial dims, what some branch
        of the class leaves there instead: {"None", "Identity"} or a part of it)."""
        if self._functions is None:
            self._functions = module_functions(self.context.module)
        imports = self.context.imports
        functions = {**self._functions, **class_functions(class_node)}
        convs = {}
        for name, values in attribute_values(class_node).items():
            kinds = [_placeholder(value, imports) for value in values]
            layers = {constructed_layer(value, imports, functions) for value, kind in zip(values, kinds) if not kind}
            if len(layers) == 1:
                layer = layers.pop()
                if layer is not None and layer.qualified in CONV_LAYERS:
                    convs[name] = (layer, CONV_LAYERS[layer.qualified], frozenset(filter(None, kinds)))
        return convs

    def _check_forward(self, class_node, forward) -> Iterator[_Finding]:
        """The findings of one forward, each with the origin of the value (PARAMETERS or
        CONCATS) and whether the convolution is functional (`F.conv2d`)."""
        instance = self_name(forward)
        if instance is None:
            return
        params = forward.params
        names = [p.name.value for p in (*params.posonly_params, *params.params)][1:]
        names += [p.name.value for p in params.kwonly_params]
        values = {name: _Value(PARAMETERS) for name in names}
        walker = _ForwardWalker(self, instance, self._convs(class_node), values)
        for statement in forward.body.body:
            yield from walker.statement(statement)

    # ---- the report ------------------------------------------------------------

    def conv_report(self, conv: _Conv, value_name: Optional[str], origin: str, statement, conditional: bool) -> Report:
        if origin == CONCATS:
            subject = f"`{value_name}`, a concatenation," if value_name else "a concatenation"
            message = (
                f"{conv.label} is applied to {subject} whose channel count (the sum of its parts) "
                "nothing checks; a part of the wrong width fails inside the layer without saying which"
            )
        elif self.settings[PARAMETERS]:
            message = (
                f"{conv.label} is applied to `{value_name}`, a parameter of `forward`, whose shape "
                "nothing checks; a wrong channel count fails inside the layer instead of here"
            )
        else:
            message = (
                f"{conv.label} is the entry convolution of a model that no module of the project "
                f"uses as a part, and nothing checks the shape of its input `{value_name}`; a wrong "
                "input fails inside the layer instead of at the model's boundary"
            )
        reason = None
        if conv.access is None:
            reason = "the channel count of a functional convolution depends on its weight and groups"
        elif value_name is None:
            reason = "the input is not a plain name"
        elif conv.optional:
            reason = "the attribute may hold None or nn.Identity() instead of the convolution here"
        elif conditional:
            reason = "the call is not evaluated unconditionally by its statement"
        elif statement is None:
            reason = "the call is in a compound statement's header or shares its line"
        if reason:
            return Report(self, conv.call, f"{message} (no automatic fix: {reason})")
        return Report(
            self,
            conv.call,
            message,
            lambda positions: self._fix(conv, value_name, statement, positions),
        )

    def _fix(self, conv: _Conv, value: str, statement, positions: Positions) -> Fix:
        label = conv.access.split(".", 1)[-1].split("[", 1)[0]
        indent, line_length = positions.indent_of(statement), self.context.config.line_length
        expected = f"{conv.access}.in_channels"
        # the channel axis counted from the end is the same for a batched and an unbatched
        # input; `size(axis)` names the valid range if the input has too few dims; a dim
        # too many is the layer's own error to raise
        room = line_length - width(f"{indent}{INDENT},")
        condition = comparison_lines(f"{value}.size({-(conv.dims + 1)})", "==", expected, room)
        message = string_lines(f"{label} expects {{{expected}}} input channels, got shape {{{value}.shape}}", room)
        lines = argument_lines("torch._assert", [condition, message], line_length, indent)
        newline = self.context.newline
        edits = [positions.insert_lines_before(statement, lines, newline)]
        if self.context.imports.table.get("torch") != "torch":
            edits.insert(0, insert_import(self.context.module, positions, newline))
        return Fix(f"Check the input of {label} with `torch._assert`", tuple(edits), Applicability.SAFE)


class _ForwardWalker:
    """Goes through forward's statements in source order, tracking which names hold an
    unchecked parameter or concatenation, and reporting the first conv on each."""

    def __init__(self, rule: UnvalidatedConvInput, instance: str, convs, values: Dict[str, _Value]) -> None:
        self.rule = rule
        self.instance = instance
        self.convs = convs
        self.values = values
        self.imports = rule.context.imports
        self.concatenations = rule.settings[CONCATS]
        self.shape_aliases: Dict[str, set] = {}
        self.present: Set[str] = set()  # attributes an enclosing `if self.x is not None:` shows set
        self.outside = _Outside(instance, values)
        self.internal_concatenations = rule.settings[INTERNAL_CONCATS]
        self.fixed_concatenations = rule.settings[FIXED_CONCATS]
        self.depth = 0  # how many blocks (branches, loops, ...) enclose the statement

    def statement(self, statement) -> Iterator[_Finding]:
        if isinstance(statement, cst.SimpleStatementLine):
            fixable_line = statement if len(statement.body) == 1 else None
            for small in statement.body:
                yield from self.small(small, fixable_line)
        elif isinstance(statement, cst.SimpleStatementSuite):  # `if c: return self.conv(x)`
            for small in statement.body:
                yield from self.small(small, None)
        elif isinstance(statement, cst.If):
            if _raises(statement.body):
                self.mark_checked(statement.test)
            yield from self.expression(statement.test, None)
            body, *rest = blocks(statement)
            present = _present_attribute(statement.test, self.instance)
            added = present is not None and present not in self.present
            if added:
                self.present.add(present)
            self.depth += 1
            for inner in body:
                yield from self.statement(inner)
            if added:
                self.present.discard(present)
            for block in rest:
                for inner in block:
                    yield from self.statement(inner)
            self.depth -= 1
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            self.values.pop(statement.name.value, None)
        else:
            for header in _headers(statement):
                yield from self.expression(header, None)
            for target in _targets(statement):
                self.rebind(target, None)
            if isinstance(statement, cst.For):
                self.outside.iterate(statement.target, statement.iter)
            else:
                for target in _targets(statement):
                    self.outside.assign(target, None)
            yield from self.blocks(statement)

    def blocks(self, statement) -> Iterator[_Finding]:
        self.depth += 1
        for block in blocks(statement):
            for inner in block:
                yield from self.statement(inner)
        self.depth -= 1

    def small(self, small, line) -> Iterator[_Finding]:
        if isinstance(small, cst.Assert):
            self.mark_checked(small.test)
            return
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and _is_check_call(small.value):
            for arg in small.value.args:
                self.mark_checked(arg.value, shape_only=False)
            return
        for child in children(small):
            yield from self.expression(child, line)
        if isinstance(small, cst.Assign):
            for target in small.targets:
                self.rebind(target.target, small.value)
                self.outside.assign(target.target, small.value)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            self.rebind(small.target, small.value)
            self.outside.assign(small.target, small.value)
        elif isinstance(small, cst.Del):
            self.rebind(small.target, None)
        elif isinstance(small, cst.Expr):
            self.outside.grow(small.value)

    def expression(self, expression, line) -> Iterator[_Finding]:
        for call, conditional in _calls(expression, False):
            conv = self.conv(call)
            if conv is None:
                continue
            argument = _input(call)
            if argument is None:
                continue
            if isinstance(argument, cst.Name):
                value = self.values.get(argument.value)
                if value is None or value.checked or value.reported:
                    continue
                if value.origin == CONCATS and not self.reports_concatenation(value.axis, value.outside, conv):
                    continue
                value.reported = True
                report = self.rule.conv_report(conv, argument.value, value.origin, line, conditional)
                yield _Finding(value.origin, report, conv.access is None, value.outside)
            elif self.concatenations and self.is_concatenation(argument):
                provenance = self.outside.concatenated(argument)
                if self.reports_concatenation(_concat_axis(argument), provenance, conv):
                    report = self.rule.conv_report(conv, None, CONCATS, line, conditional)
                    yield _Finding(CONCATS, report, conv.access is None, provenance)
            if self.depth == 0 and not conditional and not conv.optional and conv.access is not None:
                source = _same_channels_source(argument)
                if source is not None:
                    self.outside.checked_by_layer(source)
        for node in _named_expressions(expression):
            self.rebind(node.target, None)

    def conv(self, call) -> Optional[_Conv]:
        func = call.func
        attribute = self_attribute(func, self.instance)
        if attribute is not None:
            found = self.convs.get(attribute)
            if found is None:
                return None
            layer, dims, placeholders = found
            access = f"{self.instance}.{attribute}" + "".join(f"[{i}]" for i in layer.index)
            label = f"`{self.instance}.{attribute}` ({layer.qualified.rsplit('.', 1)[-1]})"
            # under `if self.x is not None:` a None alternative is ruled out; nn.Identity() is not
            certain = not placeholders or (placeholders == {"None"} and attribute in self.present)
            return _Conv(call, label, dims, access, not certain)
        qualified = self.imports.qualified_name(func)
        if qualified in CONV_FUNCTIONS:
            return _Conv(call, f"`{cst_dotted_name(func)}`", CONV_FUNCTIONS[qualified], None)
        return None

    def reports_concatenation(self, axis: Optional[int], outside: frozenset, conv: _Conv) -> bool:
        if not _joins_channels(axis, conv.dims):
            return False
        if self.internal_concatenations:
            return True
        # a fixed number of parts: torch's own error names the one sum the outside parts change
        return bool(outside) and (COUNT in outside or self.fixed_concatenations)

    def is_concatenation(self, expression) -> bool:
        return isinstance(expression, cst.Call) and self.imports.qualified_name(expression.func) in CONCATENATIONS

    def mark_checked(self, expression, shape_only: bool = True) -> None:
        """The values a test checks: those whose shape it reads (`x.shape[1] == 3`,
        `x.dim()`, `c` of `n, c, h, w = x.shape`; `x is not None` checks no shape), or,
        given to a check function, any it reads."""
        for name, value in self.values.items():
            if reads_name(expression, name) if not shape_only else name in _shape_sources(expression, self.values):
                value.checked = True
        for alias, sources in self.shape_aliases.items():
            if reads_name(expression, alias):
                for source in sources:
                    if source in self.values:
                        self.values[source].checked = True

    def rebind(self, target, value, aliases: bool = True) -> None:
        """A name is bound anew: it now holds a concatenation, the same tensor (`x = x.float()`),
        part of a tracked value's shape (`n, c, h, w = x.shape`: a check on `c` checks `x`),
        or something else that this rule does not follow."""
        if aliases:
            sources = _shape_sources(value, self.values) if value is not None else set()
            for name in assigned_names(target):
                self.shape_aliases.pop(name, None)
                if sources:
                    self.shape_aliases[name] = sources
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.rebind(element.value, None, aliases=False)
            return
        if isinstance(target, cst.StarredElement):
            self.rebind(target.value, None, aliases=False)
            return
        if not isinstance(target, cst.Name):
            return
        name = target.value
        if value is not None and self.concatenations and self.is_concatenation(value):
            self.values[name] = _Value(CONCATS, axis=_concat_axis(value), outside=self.outside.concatenated(value))
            return
        source = _same_channels_source(value)
        if source is not None and source in self.values and source == name:
            return  # x = x.float(): still the same value
        self.values.pop(name, None)


class _Outside:
    """Which local names of a forward hold data from outside the module: a parameter, or
    what is computed from one without passing through a layer of the module (`x[1]`,
    `skip.float()`, `F.interpolate(skip, ...)`, a list built by iterating over a
    parameter, so that its length is the caller's). A layer is `self.<attr>` or a name
    bound by iterating over one (`for conv in self.convs`). `holds` answers with the
    provenance: the parameters the data derives from, and COUNT where the number of
    items is the caller's; empty for data of the module's own."""

    def __init__(self, instance: str, parameters) -> None:
        self.instance = instance
        self.names: Dict[str, frozenset] = {name: frozenset({name}) for name in parameters}
        self.layers: Set[str] = set()

    def holds(self, node) -> frozenset:
        if isinstance(node, cst.Name):
            return self.names.get(node.value, _INSIDE)
        if isinstance(node, (cst.Attribute, cst.Subscript)):
            return self.holds(node.value) if self_attribute(node, self.instance) is None else _INSIDE
        if isinstance(node, cst.Call):
            func = node.func
            if self._is_layer(func) or _fixed_channels(node):
                return _INSIDE
            found = self.holds(func.value) if isinstance(func, cst.Attribute) else _INSIDE
            return found.union(*(self.holds(arg.value) for arg in node.args if arg.keyword is None))
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            return _INSIDE.union(*(self.holds(element.value) for element in node.elements))
        if isinstance(node, cst.StarredElement):
            return self.holds(node.value)
        if isinstance(node, cst.BinaryOperation):
            return self.holds(node.left) | self.holds(node.right)
        if isinstance(node, cst.IfExp):
            return self.holds(node.body) | self.holds(node.orelse)
        if isinstance(node, (cst.ListComp, cst.GeneratorExp)):
            return self._comprehension(node)
        return _INSIDE

    def concatenated(self, call) -> frozenset:
        """What a concatenation's parts derive from, with COUNT when the caller decides
        how many there are: the sequence joined (`torch.cat(features)`) or a starred part
        (`[x, *skips]`) comes from outside."""
        found = self.holds(call)
        sequence = next((arg.value for arg in call.args if arg.keyword is None or arg.keyword.value == "tensors"), None)
        if sequence is None or not found:
            return found
        if isinstance(sequence, (cst.List, cst.Tuple)):
            starred = [element.value for element in sequence.elements if isinstance(element, cst.StarredElement)]
            return found | {COUNT} if any(self.holds(value) for value in starred) else found
        return found | {COUNT} if self.holds(sequence) else found

    def checked_by_layer(self, name: str) -> None:
        """`name` went through a conv of the module on every path: the layer checked its
        channel count, so as a part it is as good as the module's own."""
        if name in self.names:
            self.names[name] = _INSIDE

    def _is_layer(self, func) -> bool:
        while isinstance(func, cst.Subscript):
            func = func.value
        if self_attribute(func, self.instance) is not None:
            return True
        return isinstance(func, cst.Name) and func.value in self.layers

    def _comprehension(self, node) -> frozenset:
        saved = (dict(self.names), set(self.layers))
        found = _INSIDE
        comp = node.for_in
        while comp is not None:
            iterated = self.holds(comp.iter)
            if iterated:  # the number of items is the caller's
                found = found | iterated | {COUNT}
            self.iterate(comp.target, comp.iter)
            comp = comp.inner_for_in
        found = found | self.holds(node.elt)
        self.names, self.layers = saved
        return found

    def assign(self, target, value) -> None:
        outside = self.holds(value) if value is not None else _INSIDE
        layer = value is not None and self._is_layer(value)
        for name in assigned_names(target):
            self._set(name, outside, layer)

    def iterate(self, target, iterable) -> None:
        """`for target in iterable`: `zip` and `enumerate` pair targets with their sources."""
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and isinstance(target, (cst.Tuple, cst.List)):
            sources = [arg.value for arg in iterable.args]
            if iterable.func.value == "enumerate" and len(target.elements) == 2 and sources:
                self.assign(target.elements[0].value, None)
                self.iterate(target.elements[1].value, sources[0])
                return
            if iterable.func.value == "zip" and len(target.elements) == len(sources):
                for element, source in zip(target.elements, sources):
                    self.iterate(element.value, source)
                return
        self.assign(target, iterable)

    def grow(self, expression) -> None:
        """`parts.append(x)`, `parts.extend(xs)`, `parts.insert(0, x)`: `parts` holds
        outside data from then on if `x` does."""
        if isinstance(expression, cst.Call) and isinstance(expression.func, cst.Attribute):
            owner = expression.func.value
            if isinstance(owner, cst.Name) and expression.func.attr.value in ("append", "extend", "insert"):
                grown = _INSIDE.union(*(self.holds(arg.value) for arg in expression.args))
                if grown:
                    self.names[owner.value] = self.names.get(owner.value, _INSIDE) | grown

    def _set(self, name: str, outside: frozenset, layer: bool) -> None:
        if outside:
            self.names[name] = outside
        else:
            self.names.pop(name, None)
        (self.layers.add if layer else self.layers.discard)(name)


# reductions that, over the channel axis with keepdim=True, leave one channel (CBAM's
# `torch.cat([x.mean(1, keepdim=True), x.max(1, keepdim=True)[0]], 1)`)
_REDUCTIONS = frozenset({"mean", "sum", "max", "min", "amax", "amin", "std", "var", "norm", "logsumexp", "prod"})
# calls whose second positional argument is the channel count of what they build
_SHAPED = frozenset({"reshape", "view", "new_zeros", "new_ones", "new_empty", "zeros", "ones", "empty", "rand", "randn"})


def _fixed_channels(call) -> bool:
    """Whether a call's result has a channel count written in the call, whatever its
    input: a reduction over axis 1 with `keepdim=True` (one channel), or
    `t.reshape(b, 2, h, w)` / `torch.zeros(b, 1, h, w)` with a literal channel count."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    if name in _REDUCTIONS:
        keep = keywords.get("keepdim")
        if not (isinstance(keep, cst.Name) and keep.value == "True"):
            return False
        # x.mean(1, ...) or torch.mean(x, 1, ...): the axis follows the tensor
        axis = keywords.get("dim", keywords.get("axis"))
        if axis is None:
            position = 0 if isinstance(func, cst.Attribute) and not _is_torch_module(func.value) else 1
            axis = positional[position] if len(positional) > position else None
        return isinstance(axis, cst.Integer) and axis.evaluated_value == 1
    if name in _SHAPED and len(positional) >= 3 and not any(arg.star for arg in call.args):
        return isinstance(positional[1], cst.Integer)
    return False


def _is_torch_module(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "torch"


def _parameter_positions(forward) -> Dict[str, Optional[int]]:
    """forward's parameters after `self`: name -> position (None for keyword-only)."""
    params = forward.params
    positional = [p.name.value for p in (*params.posonly_params, *params.params)][1:]
    found: Dict[str, Optional[int]] = {name: index for index, name in enumerate(positional)}
    found.update((p.name.value, None) for p in params.kwonly_params)
    return found


def _concat_axis(call) -> Optional[int]:
    """The `dim` a torch.cat/stack call joins along, if written as an integer literal
    (`dim=1`, `axis=-3`, the second positional argument; 0 when left out)."""
    found = None
    for position, arg in enumerate(call.args):
        if arg.star:
            return None
        if (arg.keyword is None and position == 1) or (arg.keyword is not None and arg.keyword.value in ("dim", "axis")):
            found = arg.value
    if found is None:
        return 0
    sign = 1
    if isinstance(found, cst.UnaryOperation) and isinstance(found.operator, cst.Minus):
        sign, found = -1, found.expression
    return sign * found.evaluated_value if isinstance(found, cst.Integer) else None


def _joins_channels(axis: Optional[int], dims: int) -> bool:
    """Whether joining along `axis` adds up channels for a conv with `dims` spatial dims:
    axis 1 of a batch, or the channel axis counted from the end. A time or batch axis
    (causal padding, stacked samples) does not, nor an axis the code computes."""
    return axis is not None and axis in (1, -(dims + 1))


def _placeholder(value, imports) -> Optional[str]:
    """"None" for `None`, "Identity" for `nn.Identity()`: what a class stores where it
    has no conv to put."""
    if isinstance(value, cst.Name) and value.value == "None":
        return "None"
    if isinstance(value, cst.Call) and canonical(imports.qualified_name(value.func)) == "torch.nn.Identity":
        return "Identity"
    return None


def _present_attribute(test, instance: str) -> Optional[str]:
    """`x` for a test `self.x is not None` or `self.x`: true only when self.x is set."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if isinstance(target.operator, cst.IsNot) and isinstance(target.comparator, cst.Name):
            if target.comparator.value == "None":
                return self_attribute(test.left, instance)
        return None
    return self_attribute(test, instance)


def _shape_sources(value, tracked) -> set:
    """The tracked names whose shape an expression reads: `x` in `x.shape[1]`,
    `x.size(1)`, `x.dim()`, `x.ndim`."""
    found = set()
    for node in walk(value):
        if (
            isinstance(node, cst.Attribute)
            and node.attr.value in ("shape", "size", "dim", "ndim", "ndimension")
            and isinstance(node.value, cst.Name)
            and node.value.value in tracked
        ):
            found.add(node.value.value)
    return found


def _calls(node, conditional: bool) -> Iterator[Tuple[object, bool]]:
    """Calls in an expression, in evaluation order (roughly), each with whether it runs
    only on some paths through the statement."""
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return
    if isinstance(node, cst.Lambda):
        yield from _calls(node.body, True)
        return
    if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
        for child in children(node):
            yield from _calls(child, True)
        return
    if isinstance(node, cst.IfExp):
        yield from _calls(node.test, conditional)
        yield from _calls(node.body, True)
        yield from _calls(node.orelse, True)
        return
    if isinstance(node, cst.BooleanOperation):
        yield from _calls(node.left, conditional)
        yield from _calls(node.right, True)
        return
    if isinstance(node, cst.Call):
        # arguments are evaluated before the call itself
        for child in children(node):
            yield from _calls(child, conditional)
        yield node, conditional
        return
    for child in children(node):
        yield from _calls(child, conditional)


def _named_expressions(node) -> Iterator:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.NamedExpr):
            yield current
        if not isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(children(current))


def _input(call):
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            return arg.value
        if arg.keyword.value == "input":
            return arg.value
    return None


def _is_check_call(call) -> bool:
    dotted = cst_dotted_name(call.func)
    if dotted is None:
        return False
    return dotted.rsplit(".", 1)[-1].lstrip("_").lower().startswith(_CHECK_PREFIXES)


def _raises(block) -> bool:
    body = block.body if isinstance(block, cst.IndentedBlock) else (block,)
    for statement in body:
        smalls = statement.body if isinstance(statement, cst.SimpleStatementLine) else ()
        if isinstance(block, cst.SimpleStatementSuite):
            smalls = block.body
        if any(isinstance(small, cst.Raise) for small in smalls):
            return True
    return False


def _same_channels_source(value) -> Optional[str]:
    """`x` for `x.float()`, `x.to(device)`, `x.contiguous()`..., else None."""
    while (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in _SAME_CHANNELS
    ):
        value = value.func.value
    return value.value if isinstance(value, cst.Name) else None


def _headers(statement) -> List:
    if isinstance(statement, cst.For):
        return [statement.iter]
    if isinstance(statement, cst.While):
        return [statement.test]
    if isinstance(statement, cst.With):
        return [item.item for item in statement.items]
    return []


def _targets(statement) -> List:
    if isinstance(statement, cst.For):
        return [statement.target]
    if isinstance(statement, cst.With):
        return [item.asname.name for item in statement.items if item.asname is not None]
    return []


# ---- the gate (stdlib ast) ----------------------------------------------------------


_AST_LAYER_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in CONV_LAYERS) | {"Sequential"}
_AST_FUNCTION_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in CONV_FUNCTIONS)
_AST_PARAMETRIZATIONS = frozenset(name.rsplit(".", 1)[-1] for name in PARAMETRIZATIONS)
_AST_METHOD_BLOCKS = (ast.If, ast.Try, ast.With, ast.AsyncWith) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def ast_methods(class_node: ast.ClassDef) -> List[ast.AST]:
    """The `def` and `async def` methods of a class body, also those under `if`, `try` and
    `with` in the body: the stdlib-ast counterpart of `torchlint.analysis.modules.methods` (a
    superset of it, so gates built on it stay necessary conditions)."""
    found: List[ast.AST] = []
    stack = list(class_node.body)
    while stack:
        statement = stack.pop(0)
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append(statement)
        elif isinstance(statement, _AST_METHOD_BLOCKS):
            for block in blocks(statement):
                stack.extend(block)
    return found


def _ast_called(func: ast.AST, imports) -> Optional[str]:
    """The last part of the name a call uses, through the file's imports (`C` for
    `from torch.nn import Conv2d as C` is `Conv2d`); None if not a name or attribute."""
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return imports.get(func.id, func.id).rsplit(".", 1)[-1]
    return None


class _AstFactories:
    """Which calls may build a conv, as far as the stdlib ast can tell: a conv class,
    `Sequential` whose first layer may be one, or a function or method of this file that
    returns such a call. A superset of what the rule resolves, so the gate stays a
    necessary condition."""

    def __init__(self, functions, imports) -> None:
        self._functions: Dict[str, List[ast.AST]] = {}
        for function in functions:
            self._functions.setdefault(function.name, []).append(function)
        self._imports = imports
        self._known: Dict[str, bool] = {}

    def builds_conv(self, call: ast.Call, depth: int = 0) -> bool:
        called = _ast_called(call.func, self._imports)
        if depth > 4 or called is None:
            return False
        if called == "Sequential" or called in _AST_PARAMETRIZATIONS:
            first = call.args[0] if call.args else None
            return isinstance(first, ast.Call) and self.builds_conv(first, depth + 1)
        return called in _AST_LAYER_NAMES or self._is_factory(called, depth)

    def _is_factory(self, name: str, depth: int) -> bool:
        if name in self._known:
            return self._known[name]
        self._known[name] = False  # a recursive factory does not make itself one
        found = any(
            isinstance(node, ast.Return) and isinstance(node.value, ast.Call) and self.builds_conv(node.value, depth + 1)
            for function in self._functions.get(name, ())
            for node in ast_nodes(function)
        )
        self._known[name] = found
        return found


def _ast_layer_attributes(class_node: ast.ClassDef, factories: _AstFactories) -> set:
    """Attributes the class assigns from a call that may build a conv."""
    found = set()
    for node in ast_nodes(class_node):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
            if factories.builds_conv(node.value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found.update(t.attr for t in targets if isinstance(t, ast.Attribute))
    return found


def _ast_may_fire(class_node: ast.ClassDef, forward: ast.AST, settings, factories, imports) -> bool:
    """A call in forward of a possible conv whose input is a concatenation (or, with
    the options that report them, a parameter): necessary for a finding."""
    layers = None
    positional = (*forward.args.posonlyargs, *forward.args.args)
    instance = positional[0].arg if positional else None
    args = forward.args
    candidates = set()
    if settings[PARAMETERS] or settings[MODEL_INPUTS]:  # a conv fed by a parameter may fire
        candidates = {a.arg for a in (*args.posonlyargs, *args.args)[1:]} | {a.arg for a in args.kwonlyargs}
    concatenations = settings[CONCATS]

    def is_concat(node) -> bool:
        return isinstance(node, ast.Call) and _ast_called(node.func, imports) in _CONCAT_LAST

    if concatenations:
        for node in ast_nodes(forward):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and is_concat(node.value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                candidates.update(t.id for t in targets if isinstance(t, ast.Name))
    for node in ast_nodes(forward):
        if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Attribute, ast.Name)):
            continue
        first = node.args[0] if node.args else None
        if first is None:
            first = next((k.value for k in node.keywords if k.arg == "input"), None)
        if not (isinstance(first, ast.Name) and first.id in candidates) and not (concatenations and is_concat(first)):
            continue
        func = node.func
        name = _ast_called(func, imports)
        if name in _AST_FUNCTION_NAMES:  # F.conv2d, torch.conv2d, conv2d
            return True
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == instance):
            continue
        if layers is None:
            layers = _ast_layer_attributes(class_node, factories)
        if func.attr in layers:
            return True
    return False


# ---- which classes other code builds into itself (stdlib ast, every file) -------------------


def submodule_uses(view: SourceView) -> List[str]:
    """The capitalised names (as classes are named; `_Private` too) a file mentions in a
    way that may make a module part of another: anything inside a class body but the
    class's own name (a base, `self.block = Block(...)`, `nn.ModuleList(Block() ...)`,
    `isinstance(m, Block)`), and outside classes anything but the constructor a statement
    returns (`return ResNet(...)`, `return Net().cuda()`: a factory builds the model, it
    does not embed it; `_resnet(BasicBlock, ...)` passes a part along, and
    `head = Head(); Model(head=head)` builds one)."""
    if view.tree is None:
        return []
    owner: Dict[int, str] = {}  # line -> the innermost class whose body holds it
    for node in sorted(view.nodes_of(ast.ClassDef), key=lambda node: node.lineno):
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
            owner[line] = node.name
    built: Set[int] = set()
    for statement in view.nodes_of(ast.Return):
        func = statement.value
        if not isinstance(func, ast.Call) or statement.lineno in owner:
            continue
        while isinstance(func, (ast.Attribute, ast.Call)):
            built.add(id(func))
            func = func.value if isinstance(func, ast.Attribute) else func.func
        built.add(id(func))
    found = set()
    for node in view.nodes_of(ast.Name, ast.Attribute):
        name = node.id if isinstance(node, ast.Name) else node.attr
        if name.lstrip("_")[:1].isupper() and id(node) not in built and owner.get(node.lineno) != name:
            found.add(name)
    return sorted(found)
