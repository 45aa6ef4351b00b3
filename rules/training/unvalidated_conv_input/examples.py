"""TL002's examples: code the rule must leave alone, and code it must flag (with the fixed
text).

Cost: data, no analysis.
"""

from __future__ import annotations

from torchlint.rule_api.rule import Invalid
from torchlint.rules.training.unvalidated_conv_input.values import (
    CONCATS,
    FIXED_CONCATS,
    INTERNAL_CONCATS,
    MODEL_INPUTS,
    PARAMETERS,
)

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
    "        super().__init__()\n        self.conv1 = nn.Conv2d(c, g, 3)\n"
    "        self.conv2 = nn.Conv2d(c + g, g, 3)\n\n"
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
