"""TL001's examples: code the rule must leave alone, and code it must flag (with the fixed text)."""

from __future__ import annotations

from torchlint.rule_api.rule import Invalid
from torchlint.rules.training.heavy_import_at_module_level.heavy_modules import REPORT_IMPORT_TIME_USE

VALID = (
    "def train():\n    import wandb\n    wandb.init()\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import wandb\n",
    "import typing\nif typing.TYPE_CHECKING:\n    from wandb import Run\n",
    "import torch\nfrom torch.utils.data import DataLoader\n",
    "import wandbx\n",
    "class Logger:\n    def start(self):\n        from torch.utils.tensorboard import SummaryWriter\n"
    "        return SummaryWriter()\n",
    # used when the module is imported: only restructuring helps (report-import-time-use)
    "import numba\n\n@numba.njit\ndef f(x):\n    return x\n",
    "import numba\n\n@numba.jit(nopython=True)\ndef f(x):\n    return x\n",
    "import wandb\n\ndef train(run: wandb.Run):\n    wandb.log({})\n",
    # a second import of a module that stays imported saves nothing
    "from numba import cuda\nimport numba\n\n@cuda.jit\ndef k(x):\n    pass\n\ndef f():\n    return numba.config\n",
    'import importlib\n\njson = importlib.import_module("json")\n',
    # never read: nothing to make lazy (F401's finding, or a check that it is installed)
    "import wandb\n",
    "try:\n    import numba  # noqa: F401\nexcept ImportError as e:\n"
    "    raise ImportError('pip install numba') from e\n",
)

INVALID = (
    Invalid(
        "import wandb\n\n\ndef train():\n    wandb.init()\n",
        fixed="def train():\n    import wandb\n\n    wandb.init()\n",
        line=1,
        column=1,
    ),
    Invalid(
        "import wandb as wb\n\ndef train():\n    '''Train.'''\n    wb.init()\n"
        "    def inner():\n        wb.log({})\n",
        fixed="def train():\n    '''Train.'''\n    import wandb as wb\n\n    wb.init()\n"
        "    def inner():\n        wb.log({})\n",
    ),
    Invalid(
        "from torch.utils.tensorboard import SummaryWriter\n\n"
        "class Trainer:\n    def fit(self):\n        return SummaryWriter()\n",
        fixed="class Trainer:\n    def fit(self):\n"
        "        from torch.utils.tensorboard import SummaryWriter\n\n        return SummaryWriter()\n",
    ),
    Invalid(
        "from torch.utils import data, tensorboard\n\ndef f():\n    return tensorboard, data\n",
        fixed="from torch.utils import data\n\ndef f():\n"
        "    from torch.utils import tensorboard\n\n    return tensorboard, data\n",
    ),
    Invalid("import wandb\n\nRUN = wandb.init()\n", options=((REPORT_IMPORT_TIME_USE, True),)),
    Invalid(
        "try:\n    import wandb\nexcept ImportError:\n    wandb = None\n\n"
        "def log():\n    if wandb:\n        wandb.log({})\n",
        line=2,
        column=5,
    ),
    Invalid("import numba\n\n@numba.njit\ndef f(x):\n    return x\n", options=((REPORT_IMPORT_TIME_USE, True),)),
    # a module-level call into the module runs it whenever this module is imported: no fix
    Invalid("import wandb\n\nRUN = wandb.init()\n"),
    Invalid('import wandb\n\nwandb.login(key="k")\n\ndef train():\n    wandb.log({})\n\nwandb.finish()\n'),
    Invalid("import mlflow\n\nmlflow.start_run()\n"),
    # spelled as a call: reported, moved by hand
    Invalid('from monai.utils import optional_import\n\nmlflow, _ = optional_import("mlflow")\n\n'
            'def log():\n    mlflow.log_metric("a", 1)\n', line=3),
    Invalid('import importlib\n\nwandb = importlib.import_module("wandb")\n\ndef log():\n    wandb.log({})\n', line=3),
    Invalid('neptune = __import__("neptune")\n\ndef log():\n    neptune.init_run()\n'),
    # annotations that never run are no use at import time
    Invalid(
        "import wandb\n\ndef train():\n    run: wandb.Run = wandb.init()\n",
        fixed="def train():\n    import wandb\n\n    run: wandb.Run = wandb.init()\n",
    ),
    Invalid(
        "from __future__ import annotations\nimport wandb\n\ndef train(run: wandb.Run):\n    wandb.log({})\n", line=2
    ),
    Invalid('import wandb\n\ndef train(run: "wandb.Run"):\n    wandb.log({})\n'),
    # the moved import keeps its comments, and goes above the comment on the first statement
    Invalid(
        "import os\n\n# experiment tracking\nimport wandb\nimport torch\n\n"
        "def train():\n    wandb.init()\n    return os, torch\n",
        fixed="import os\n\nimport torch\n\ndef train():\n    # experiment tracking\n    import wandb\n\n"
        "    wandb.init()\n    return os, torch\n",
    ),
    Invalid(
        "import os\n\n# experiment tracking\nimport wandb  # type: ignore[import-untyped]\n\n"
        "def train():\n    \"\"\"Train.\"\"\"\n    # start a run\n    wandb.init()\n    return os\n",
        fixed="import os\n\ndef train():\n    \"\"\"Train.\"\"\"\n    # experiment tracking\n"
        "    import wandb  # type: ignore[import-untyped]\n\n    # start a run\n    wandb.init()\n    return os\n",
    ),
    Invalid(
        "from typing import TYPE_CHECKING\nif not TYPE_CHECKING:\n    import mlflow\n\ndef f():\n    mlflow.log()\n"
    ),
    # a name the module exports, or that is looked up on it by name: no fix
    Invalid("import wandb\n__all__ = ['wandb', 'train']\n\ndef train():\n    wandb.init()\n"),
    Invalid("import wandb\n__all__: tuple = ('train',)\n__all__ += ('wandb',)\n\ndef train():\n    wandb.init()\n"),
    Invalid(
        "from torch.utils.tensorboard import SummaryWriter\n__all__ = []\n__all__.append('SummaryWriter')\n\n"
        "def make():\n    return SummaryWriter()\n"
    ),
    Invalid("import wandb\n__all__ = ['train']\n__all__.extend(['wandb'])\n\ndef train():\n    wandb.init()\n"),
    Invalid("import wandb\n__all__ = [n for n in dir() if not n.startswith('_')]\n\ndef train():\n    wandb.init()\n"),
    Invalid(
        "import sys\nimport wandb\n\ndef train():\n    wandb.init()\n\nHAS = hasattr(sys.modules[__name__], 'wandb')\n"
    ),
    Invalid("import wandb\n\ndef train():\n    wandb.init()\n\ndef logger():\n    return globals()['wandb']\n"),
    Invalid("import sys\nimport wandb\n\ndef train():\n    return sys.modules[__name__].wandb, wandb.init()\n"),
    Invalid(
        "import wandb\nfrom unittest import mock\n\ndef train():\n    wandb.init()\n\n"
        "def test_train():\n    with mock.patch('trainer.wandb'):\n        train()\n"
    ),
    # `__all__` without the name, and the name's own text in a string: still fixed
    Invalid(
        "import wandb\n__all__ = ['train']\n\ndef train():\n    wandb.init(project='wandb')\n",
        fixed="__all__ = ['train']\n\ndef train():\n    import wandb\n\n    wandb.init(project='wandb')\n",
    ),
)
