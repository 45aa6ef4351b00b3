from __future__ import annotations

from torchlint.call_arguments import append_keyword
from torchlint.ftypes import Applicability, Fix
from torchlint.rule import Invalid, Rule
from torchlint.torch_load import LoadSites, untrusted_load_selected

REPORT_EXPLICIT_FALSE = "report-explicit-false"

_MESSAGES = {
    "explicit": "`{loader}(..., weights_only=False)` unpickles arbitrary objects: a crafted file runs code when loaded",
    "pickle-module": "`{loader}` with a `pickle_module` unpickles arbitrary objects in every torch version "
    "(`weights_only=True` cannot be combined with it)",
    "hub-default": "`{loader}` without `weights_only` unpickles arbitrary objects in every torch version "
    "(its default is False); pass `weights_only=True`",
    "old-default": "`{loader}` without `weights_only` unpickles arbitrary objects before torch 2.6 "
    "(target-torch is {target}); pass `weights_only=True`",
}


class TorchLoadWithoutWeightsOnly(LoadSites, Rule):
    """
    ## What it does
    Flags loads that run Python's full unpickler on a checkpoint:

    - `torch.load(path)` without `weights_only` when `target-torch` is below 2.6 (torch
      1.13 added `weights_only`; 2.6 made `True` its default);
    - `torch.load(path, pickle_module=...)`: a custom pickle module turns the default to
      `False` in every version;
    - `torch.hub.load_state_dict_from_url(url)` without `weights_only`: its default is
      still `False` (torch 2.13 included);
    - with `report-explicit-false`, `torch.load(..., weights_only=False)` too, whatever
      the target version. Off by default: written out, it is mostly deliberate (the file
      holds more than tensors: a training state, a dataset's arrays). Of a random 10 of
      the 34 such calls in the audited packages, 4 were worth changing (a state dict
      from the user's path, which `weights_only=True` loads) and 6 were not.

    Calls that pass `**kwargs` (which may hold `weights_only`) or a non-literal
    `weights_only` are not reported, nor the fallback for torch < 1.13 in
    `try: torch.load(f, weights_only=True) except TypeError: torch.load(f)`. When the
    path comes from outside the code (a parameter, a configuration or command-line value)
    and the load is unrestricted in every version, the message says so; with TL209
    (`untrusted-torch-load`, off by default) selected, TL209 reports those calls instead.

    ## Why is this bad?
    Unpickling runs code: a checkpoint file can hold an object whose unpickling calls
    `os.system`. With `weights_only=True`, `torch.load` accepts only tensors, primitive
    types, dicts, lists and types allow-listed with
    `torch.serialization.add_safe_globals`. On torch older than 2.6, a call without
    `weights_only` gets the unsafe default.

    ## Example
    ```python
    state = torch.load("model.pt", map_location="cpu")
    ```

    ## Use instead
    ```python
    state = torch.load("model.pt", map_location="cpu", weights_only=True)
    ```

    ## Fix safety
    Unsafe fix: adds `weights_only=True` where `weights_only` is missing (not with a
    `pickle_module`, which `weights_only=True` rejects with a RuntimeError; not below
    the version that has the argument: 1.13 for `torch.load`, 2.1 for
    `load_state_dict_from_url`). A file that
    holds more than tensors and plain containers (an `argparse.Namespace`, a numpy array,
    a whole pickled `nn.Module`, an optimizer's custom state) then fails to load with an
    `UnpicklingError` naming the type; allow-list it with
    `torch.serialization.add_safe_globals([...])` or save a `state_dict` instead.
    `weights_only=False` written out is reported (with the option) without a fix: it is
    there because the file holds such objects.

    ## Options
    - `report-explicit-false` (default `false`): report `weights_only=False` written out.
      TL209 (`untrusted-torch-load`, off by default) reports those whose path comes from
      outside the code, the ones that matter for security:
      ```toml
      [tool.torchlint.torch-load-without-weights-only]
      report-explicit-false = true
      ```

    `target-torch` in `[tool.torchlint]` (default "2.2"): a call without `weights_only`
    is reported only when the target is below 2.6.
    """

    code = "TL201"
    name = "torch-load-without-weights-only"
    summary = "torch.load runs the full unpickler (weights_only missing before torch 2.6, or a pickle_module)"
    fixable = True
    options = {REPORT_EXPLICIT_FALSE: False}
    triggers = ("load(", "load_state_dict_from_url")

    VALID = (
        "import torch\n\nstate = torch.load('m.pt', weights_only=True)\n",
        "import torch\n\ndef load(path, **kwargs):\n    return torch.load(path, **kwargs)\n",
        "import torch\n\ndef load(path, safe):\n    return torch.load(path, weights_only=safe)\n",
        "import numpy as np\n\ndata = np.load('x.npy')\n",
        "import json\n\nwith open('c.json') as f:\n    cfg = json.load(f)\n",
        # written out: deliberate, reported only with `report-explicit-false`
        "import torch\n\nckpt = torch.load('full.pt', weights_only=False)\n",
        "import torch\n\nsd = torch.hub.load_state_dict_from_url('https://x/m.pt', weights_only=True)\n",
        "import torch\n\ndef load(f):\n    try:\n        return torch.load(f, weights_only=True)\n"
        "    except TypeError:  # torch < 1.13\n        return torch.load(f)\n",
    )
    INVALID = (
        Invalid(
            "import torch\n\nstate = torch.load('m.pt', map_location='cpu')\n",
            unsafe_fixed="import torch\n\nstate = torch.load('m.pt', map_location='cpu', weights_only=True)\n",
            line=3,
            column=9,
        ),
        Invalid(
            "from torch import load\n\nstate = load(\n    'm.pt',\n)\n",
            unsafe_fixed="from torch import load\n\nstate = load(\n    'm.pt',\n    weights_only=True,\n)\n",
            line=3,
            column=9,
        ),
        # written out, with the option: reported without a fix, whatever the target
        Invalid(
            "import torch\n\nckpt = torch.load('full.pt', weights_only=False)\n",
            line=3,
            column=8,
            options=((REPORT_EXPLICIT_FALSE, True),),
        ),
        # a pickle module: the default is False in every version, and no fix
        Invalid("import dill\nimport torch\n\nobj = torch.load('o.pt', pickle_module=dill)\n", line=4, column=7),
        # a path from a parameter: the message names it
        Invalid(
            "import torch\n\ndef resume(path):\n    return torch.load(path, weights_only=False)\n",
            line=4,
            column=12,
            options=((REPORT_EXPLICIT_FALSE, True),),
        ),
        Invalid(
            "import torch.hub\n\nsd = torch.hub.load_state_dict_from_url('https://x/m.pt')\n",
            unsafe_fixed="import torch.hub\n\nsd = torch.hub.load_state_dict_from_url('https://x/m.pt', weights_only=True)\n",
            line=3,
            column=6,
        ),
    )

    def visit_Call(self, node) -> None:
        load = self.read_call(node)
        if load is None or (load.unrestricted == "explicit" and not self.settings[REPORT_EXPLICIT_FALSE]):
            return
        source = self.load_source(node) if load.everywhere else None
        if source is not None and untrusted_load_selected(self.context.config):
            return  # TL209's
        target = self.context.config.target_torch
        message = _MESSAGES[load.unrestricted].format(loader=load.loader, target=target)
        if source is not None:
            message += f"; the file comes from outside the code ({source})"
        fix = None
        if load.fixable:
            def fix(positions, call=node):
                edit = append_keyword(positions, call, "weights_only=True", self.context.newline)
                if edit is None:
                    return None
                return Fix("Pass `weights_only=True`", (edit,), Applicability.UNSAFE)
        self.report(node, message, fix)

