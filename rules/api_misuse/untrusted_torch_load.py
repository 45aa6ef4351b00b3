from __future__ import annotations

from torchlint.analysis.torch_load import LOAD_TRIGGERS
from torchlint.rule_api.bases.torch_load import TorchLoadRule
from torchlint.rule_api.rule import Invalid


class UntrustedTorchLoad(TorchLoadRule):
    """
    ## What it does
    Flags a load that runs Python's full unpickler on a file or URL chosen outside the
    code: `torch.load(path, weights_only=False)` (or with a `pickle_module`), or
    `torch.hub.load_state_dict_from_url(url)` without `weights_only=True`, where the path
    or URL is a parameter of the enclosing function, a value computed from one, a
    configuration or command-line value (`args.resume`, `cfg.MODEL.WEIGHTS`,
    `self.hparams.ckpt`, `config["weights"]`), `sys.argv`, the environment, `input()`, or
    a download (`hf_hub_download(...)`). These loads are unrestricted in every torch
    version; TL201 reports the other unrestricted loads, and these too while this rule is
    not selected. Off by default: select it with `--select TL209` or
    `extend-select = ["TL209"]` (most such loads in real projects are deliberate: full
    training checkpoints holding optimizer state and hyperparameter objects).

    ## Why is this bad?
    Unpickling runs code. Whoever can put a file at that path, or name it (a shared
    checkpoint, a model from a hub, a path in a config someone sends you), runs code in
    this process with its permissions: a pickled object's `__reduce__` may call
    `os.system`. With `weights_only=True`, `torch.load` accepts only tensors, primitive
    types and containers, and types allow-listed with
    `torch.serialization.add_safe_globals`.

    ## Example
    ```python
    def resume(model, path):
        ckpt = torch.load(path, weights_only=False)
        model.load_state_dict(ckpt["model"])
    ```

    ## Use instead
    ```python
    def resume(model, path):
        ckpt = torch.load(path, weights_only=True)
        model.load_state_dict(ckpt["model"])
    ```

    ## Fix safety
    No fix: the call says `weights_only=False` (or passes a `pickle_module`) because the
    file holds more than tensors; save a `state_dict` and plain data instead, or
    allow-list the types it holds with `torch.serialization.add_safe_globals([...])` and
    load with `weights_only=True`.
    """

    code = "TL209"
    name = "untrusted-torch-load"
    summary = "torch.load runs the full unpickler on a path or URL from outside the code"
    level = "error"
    # most such loads are deliberate (full training checkpoints): off by default
    default_enabled = False
    triggers = LOAD_TRIGGERS

    VALID = (
        "import torch\n\ndef resume(path):\n    return torch.load(path, weights_only=True)\n",
        "import torch\n\nstate = torch.load('bundled.pt', weights_only=False)\n",
        "import torch\n\nclass M:\n    def restore(self):\n        return torch.load(self.path, weights_only=False)\n",
    )
    INVALID = (
        Invalid(
            "import torch\n\ndef resume(model, path):\n    ckpt = torch.load(path, weights_only=False)\n"
            "    model.load_state_dict(ckpt['model'])\n",
            line=4,
            column=12,
        ),
        Invalid(
            "import os\nimport torch\n\ndef main(args):\n    path = os.path.join(args.output_dir, 'last.pt')\n"
            "    return torch.load(path, map_location='cpu', weights_only=False)\n",
            line=6,
            column=12,
        ),
        Invalid(
            "import torch\n\ndef fetch(url):\n    return torch.hub.load_state_dict_from_url(url, map_location='cpu')\n",
            line=4,
            column=12,
        ),
    )

    def visit_Call(self, node) -> None:
        load = self.read_call(node)
        if load is None or not load.everywhere:
            return
        source = self.load_source(node)
        if source is None:
            return
        how = "`weights_only=False`" if load.unrestricted == "explicit" else {
            "pickle-module": "a `pickle_module`", "hub-default": "no `weights_only` (its default is False)"
        }[load.unrestricted]
        self.report(
            node,
            f"`{load.loader}` with {how} unpickles a file chosen outside the code ({source}): "
            "whoever controls that file runs code in this process",
        )
