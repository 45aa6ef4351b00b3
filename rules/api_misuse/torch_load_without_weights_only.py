from __future__ import annotations

import ast
from functools import cached_property
from typing import Dict, Iterator, List, Optional

from torchlint.analysis.loaded_objects import (
    FunctionCheckpoints, ast_object_saves, function_checkpoints, module_strings, numpy_saved_keys, object_read,
    returned_as_module, saves_own_instance, source_key,
)
from torchlint.analysis.call_arguments import append_keyword, bound_argument
from torchlint.core.diagnostics import Applicability, Fix
from torchlint.core.gating import with_context
from torchlint.rule_api.rule import Invalid, Report
from torchlint.analysis.torch_calls import definitions_calling
from torchlint.core.lazy import cst
from torchlint.analysis.torch_load import (
    DEFAULT_FLIPPED_IN, LOAD_TRIGGERS, UNTRUSTED_CODE, read_load, refuses_objects_by_default,
)
from torchlint.rule_api.bases.torch_load import TorchLoadRule
from torchlint.core.walk import walk
from torchlint.analysis.pending import SourceLoadedUnrestricted

REPORT_EXPLICIT_FALSE = "report-explicit-false"
# how a load says it means to unpickle objects: reported only with the option
DELIBERATE = ("explicit", "pickle-module")

_MESSAGES = {
    "explicit": "`{loader}(..., weights_only=False)` unpickles arbitrary objects: a crafted file runs code when loaded",
    "pickle-module": "`{loader}` with a `pickle_module` unpickles arbitrary objects in every torch version "
    "(`weights_only=True` cannot be combined with it)",
    "hub-default": "`{loader}` without `weights_only` unpickles arbitrary objects in every torch version "
    "(its default is False)",
    "old-default": "`{loader}` without `weights_only` unpickles arbitrary objects before torch 2.6 "
    "(target-torch is {target})",
}
_PASS_TRUE = "; pass `weights_only=True`"  # the advice where `weights_only` is missing
# the checkpoint holds objects: `weights_only=True` would fail to load it
_HOLDS_OBJECTS = (
    "; the checkpoint holds objects ({evidence}) that `weights_only=True` refuses: pass "
    "`weights_only=False` if the file is trusted, or allow-list them with "
    "`torch.serialization.add_safe_globals`"
)

# from torch 2.6, where `weights_only=False` written out is the finding
_ALLOW_LIST = (
    "; from torch 2.6 the default refuses objects: allow-list the types the file holds with "
    "`torch.serialization.add_safe_globals([...])` (or `with torch.serialization.safe_globals([...]):`) and drop "
    "`weights_only=False`, or say in a comment that the file is trusted"
)
_FAILS = (
    "`{loader}` without `weights_only` refuses objects from torch 2.6 (target-torch is {target}), and this "
    "checkpoint likely holds some ({evidence}): then the load fails with `UnpicklingError`. If the file is trusted, pass "
    "`weights_only=False` with a comment saying so; otherwise allow-list the types with "
    "`torch.serialization.add_safe_globals([...])` (or `with torch.serialization.safe_globals([...]):`)"
)


class TorchLoadWithoutWeightsOnly(TorchLoadRule):
    """
    ## What it does
    Flags loads that run Python's full unpickler on a checkpoint:

    - `torch.load(path)` without `weights_only` when `target-torch` is below 2.6 (torch
      1.13 added `weights_only`; 2.6 made `True` its default);
    - `torch.hub.load_state_dict_from_url(url)` (also spelt `torch.utils.model_zoo.load_url`)
      without `weights_only`: its default is `False` in every version;
    - with `report-explicit-false`, also `torch.load(..., weights_only=False)` and
      `torch.load(path, pickle_module=...)` (the default is then `False` in every version),
      whatever the target. Written out, either is mostly deliberate.

    From torch 2.6 (`target-torch` 2.6 or newer) a `torch.load` without `weights_only`
    refuses objects: it is reported only where the code shows the checkpoint holds some
    (as below, within the file), as a load that fails, and nothing inserts
    `weights_only=True` there.

    Not reported: calls passing `**kwargs` or a non-literal `weights_only`, and the fallback
    for torch < 1.13 in `try: torch.load(f, weights_only=True) except TypeError:
    torch.load(f)`. When the path comes from outside the code (a parameter, a configuration
    or command-line value) and the load is unrestricted in every version, the message says
    so; while TL209 (`untrusted-torch-load`, off by default) is selected, those loads are
    TL209's findings instead.

    ## Why is this bad?
    Unpickling runs code: a checkpoint can hold an object whose unpickling calls
    `os.system`. With `weights_only=True`, `torch.load` accepts only tensors, primitive
    types, dicts, lists and types allow-listed with `torch.serialization.add_safe_globals`.

    ## Example
    ```python
    state = torch.load("model.pt", map_location="cpu")
    ```

    ## Use instead
    ```python
    state = torch.load("model.pt", map_location="cpu", weights_only=True)
    ```

    ## Fix safety
    Unsafe: adds `weights_only=True` where it is missing (not with a `pickle_module`, which
    it rejects; not below the version that has the argument: 1.13 for `torch.load`, 2.1 for
    `load_state_dict_from_url`). A file holding more than tensors and plain containers (an
    `argparse.Namespace`, a numpy array, a pickled `nn.Module`) then fails with an
    `UnpicklingError` naming the type: allow-list it, or save a `state_dict` instead.

    No fix, and the message says to pass `weights_only=False` for a trusted file or to
    allow-list the types, where the code shows the checkpoint holds objects: it reads it
    as one (a key such as `args`, `opt`, `cfg`, `config` or `hparams`, an attribute that no
    dict or tensor has: `.clone()` or `.shape` read a tensor, or a key under which the same
    file saves a NumPy value); it reads the keys of a training checkpoint (`message_hub`,
    `meta`, or `optimizer`/`scheduler`/`scaler` with `epoch`/`iter`/`state_dict`); the same
    source is loaded with `weights_only=False` elsewhere (a literal file name in the same
    file, a configured path such as `args.resume` anywhere in the linted project, the same
    name in the same function: a fallback after `weights_only=True` fails); the
    project saves a whole object there (`torch.save(model, "x.pt")`, or a dict holding a
    model, to the same file name, module constant or configured path); or the load is in
    a class that saves its own instance (`torch.save(self, path)`). From torch 2.6,
    `weights_only=False` written out gets the advice to allow-list the types with
    `torch.serialization.add_safe_globals` / `safe_globals`, or to say in a comment that
    the file is trusted. `weights_only=False` and `pickle_module=` written out are
    reported without a fix.

    ## Options
    - `report-explicit-false` (default `false`): report `weights_only=False` and
      `pickle_module=` written out (TL209 reports those whose path comes from outside the
      code, the ones that matter for security).

    ```toml
    [tool.torchlint.torch-load-without-weights-only]
    report-explicit-false = true
    ```

    `target-torch` in `[tool.torchlint]` (default: the lower bound of `torch` in `[project]
    dependencies`, else "2.2"): a call without `weights_only` is reported only when the target
    is below 2.6, and gets no fix below 1.13, which has no `weights_only`.
    """

    code = "TL201"
    name = "torch-load-without-weights-only"
    summary = "torch.load runs the full unpickler (weights_only missing before torch 2.6, or a pickle_module)"
    fixable = True
    options = {REPORT_EXPLICIT_FALSE: False}
    triggers = LOAD_TRIGGERS
    project_rule = True  # another file's `weights_only=False` load of the same source decides the fix

    VALID = (
        "import torch\n\nstate = torch.load('m.pt', weights_only=True)\n",
        "import torch\n\ndef load(path, **kwargs):\n    return torch.load(path, **kwargs)\n",
        "import torch\n\ndef load(path, safe):\n    return torch.load(path, weights_only=safe)\n",
        "import numpy as np\n\ndata = np.load('x.npy')\n",
        "import json\n\nwith open('c.json') as f:\n    cfg = json.load(f)\n",
        # written out: deliberate, reported only with `report-explicit-false`
        "import torch\n\nckpt = torch.load('full.pt', weights_only=False)\n",
        "import dill\nimport torch\n\nobj = torch.load('o.pt', pickle_module=dill)\n",
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
        # a pickle module, with the option: the default is False in every version, and no fix
        Invalid(
            "import dill\nimport torch\n\nobj = torch.load('o.pt', pickle_module=dill)\n",
            line=4,
            column=7,
            options=((REPORT_EXPLICIT_FALSE, True),),
        ),
        # a path from a parameter: the message names it
        Invalid(
            "import torch\n\ndef resume(path):\n    return torch.load(path, weights_only=False)\n",
            line=4,
            column=12,
            options=((REPORT_EXPLICIT_FALSE, True),),
        ),
        # the file saves a NumPy value under a key the load reads: no fix
        Invalid(
            "import numpy as np\nimport torch\n\n\ndef save(model, accs, path):\n"
            "    torch.save({'model': model.state_dict(), 'best_acc': np.mean(accs)}, path)\n\n\n"
            "def resume(model, path):\n    ckpt = torch.load(path)\n    model.load_state_dict(ckpt['model'])\n"
            "    return ckpt['best_acc']\n",
            line=10,
            column=12,
        ),
        # the same function under its old name
        Invalid(
            "from torch.utils import model_zoo\n\nsd = model_zoo.load_url('https://x/m.pt')\n",
            unsafe_fixed="from torch.utils import model_zoo\n\nsd = model_zoo.load_url('https://x/m.pt', weights_only=True)\n",
            line=3,
            column=6,
        ),
        # read as an object: `weights_only=True` would refuse the Namespace, so no fix
        Invalid(
            "import torch\n\ndef show(path):\n    ckpt = torch.load(path)\n    return ckpt['args'].lr\n",
            line=4,
            column=12,
        ),
        # the same file is loaded with weights_only=False elsewhere in the file
        Invalid(
            "import torch\n\nfull = torch.load('last.pth', weights_only=False)\nsd = torch.load('last.pth')\n",
            line=4,
            column=6,
        ),
        # the same project saves a whole model there: `weights_only=True` would refuse it
        Invalid(
            "import torch\n\ndef export(model):\n    torch.save(model, 'whole.pt')\n\n"
            "def restore():\n    return torch.load('whole.pt')\n",
            line=7,
            column=12,
        ),
        # the class saves its own instance whole: its loads read such files
        Invalid(
            "import torch\n\nclass Data:\n    @classmethod\n    def load(cls, fname):\n"
            "        return torch.load(fname)\n\n    def save(self, fname):\n        torch.save(self, fname)\n",
            line=6,
            column=16,
        ),
        # a round trip of an object through a buffer in one function: it loads what it saved
        Invalid(
            "import io\nimport torch\n\ndef clone(obj):\n    buffer = io.BytesIO()\n    torch.save(obj, buffer)\n"
            "    buffer.seek(0)\n    return torch.load(buffer)\n",
            line=8,
            column=12,
        ),
        # a config object under a compound key (`xp.cfg`)
        Invalid(
            "import torch\n\ndef export(path):\n    pkg = torch.load(path)\n    return pkg['xp.cfg']\n",
            line=4,
            column=11,
        ),
        # the checkpoint goes to fairseq, whose checkpoints keep an argparse.Namespace
        Invalid(
            "import fairseq\nimport torch\n\ndef load(path):\n    checkpoint = torch.load(path)\n"
            "    return fairseq.checkpoint_utils.load_model_ensemble_and_task({path: checkpoint})\n",
            line=5,
            column=18,
        ),
        # returned as a whole module by a function annotated so
        Invalid(
            "import torch\nfrom torch import nn\n\ndef load_model(path) -> nn.Module:\n"
            "    return torch.load(path, map_location='cpu').to(torch.float64)\n",
            line=5,
            column=12,
        ),
        # the keys of a training checkpoint
        Invalid(
            "import torch\n\ndef resume(path, optimizer):\n    ckpt = torch.load(path)\n"
            "    optimizer.load_state_dict(ckpt['optimizer'])\n    return ckpt['epoch']\n",
            line=4,
            column=12,
        ),
        Invalid(
            "import torch.hub\n\nsd = torch.hub.load_state_dict_from_url('https://x/m.pt')\n",
            unsafe_fixed="import torch.hub\n\nsd = torch.hub.load_state_dict_from_url('https://x/m.pt', weights_only=True)\n",
            line=3,
            column=6,
        ),
    )

    def __init__(self, context) -> None:
        super().__init__(context)
        self._classes: List = []  # the classes around the visited node, innermost last
        self._saves_itself: Dict[int, bool] = {}  # id(class) -> `saves_own_instance`
        self._function_facts: Dict[int, FunctionCheckpoints] = {}  # id(function) -> `function_checkpoints`
        self._function_unrestricted: Dict[int, set] = {}  # id(function) -> `_unrestricted_in`

    def visit_ClassDef(self, node) -> None:
        self._classes.append(node)

    def leave_ClassDef(self, node) -> None:
        self._classes.pop()

    def visit_Call(self, node) -> None:
        load = self.read_call(node)
        if load is not None and load.unrestricted in DELIBERATE:
            self._note_unrestricted_source(node)
        if load is None:
            if refuses_objects_by_default(node, self.context.imports.qualified_name(node.func), self.context.config):
                self._report_failing_load(node)
            return
        if load.unrestricted in DELIBERATE and not self.settings[REPORT_EXPLICIT_FALSE]:
            return
        source = self.load_source(node) if load.everywhere else None
        # TL209 reports a load of a file from outside the code, unrestricted in every version
        superseded_by = UNTRUSTED_CODE if source is not None else None
        target = self.context.config.target_torch
        message = _MESSAGES[load.unrestricted].format(loader=load.loader, target=target)
        if source is not None:
            message += f"; the file comes from outside the code ({source})"
        if load.unrestricted == "explicit" and self.context.config.targets_at_least(DEFAULT_FLIPPED_IN):
            message += _ALLOW_LIST
        if load.unrestricted in ("hub-default", "old-default") and not load.fixable:
            message += _PASS_TRUE  # once the target has the argument
        if not load.fixable:
            self.report(node, message, superseded_by=superseded_by)
            return
        evidence = self._evidence_here(node)
        if evidence is not None:
            self.report(node, message + _HOLDS_OBJECTS.format(evidence=evidence), superseded_by=superseded_by)
            return
        key = source_key(node, self._module_strings)
        if key is None:
            self.report(node, message + _PASS_TRUE, self._fix(node), superseded_by)
            return
        # decided in the project pass: without a fix if another file loads the source
        # with `weights_only=False` or saves a whole object to it
        fixed, objects = self._reports(node, message, key, superseded_by)
        loaded_elsewhere = self.context.diagnostic(objects)
        if loaded_elsewhere is not None:
            self.context.defer(fixed, SourceLoadedUnrestricted(key, loaded_elsewhere))

    def _evidence_here(self, call) -> Optional[str]:
        """What this file shows of the checkpoint holding objects: how the loaded value is
        read (`object_read`), or its source is loaded with `weights_only=False` or saved to
        as a whole object in this file; None if nothing."""
        numpy_keys = self._numpy_saved_keys
        read = object_read(call, self._functions[-1] if self._functions else self.context.module, numpy_keys)
        if read is not None and read.training:
            return f"{read.text}: a training checkpoint, which usually keeps objects beside its tensors"
        if read is not None:
            saved = next((value for key, value in numpy_keys.items() if f'"{key}"' in read.text), None)
            return f"`{read.text}` is read" if saved is None else f"`{read.text}` is saved as a NumPy value, `{saved}`"
        if self._functions:
            function = self._functions[-1]
            facts = self._function_facts.get(id(function))
            if facts is None:
                facts = self._function_facts[id(function)] = function_checkpoints(function, self.context.imports)
            if facts.saved_object is not None:
                saved = self.context.module.code_for_node(facts.saved_object)
                return f"this function saves `{saved}` with `torch.save` and loads what it saved"
            if facts.calls_fairseq:
                return ("the checkpoint goes to fairseq, whose checkpoints keep an `argparse.Namespace` or a config "
                        "and a `Dictionary` beside the weights")
            module = returned_as_module(function, call, facts)
            if module is not None:
                return f"`{function.name.value}` returns it as `{module}`: a whole module"
            source = self._first_argument(call)
            if source is not None and source in self._unrestricted_in(function):
                return f"`{source}` is loaded with `weights_only=False` in `{function.name.value}` too"
        key = source_key(call, self._module_strings)
        if key is not None and key in self._unrestricted_here:
            return f"`{key}` is loaded with `weights_only=False` in this file"
        if key is not None and key in self.context.record.object_saves:
            return f"`{key}` is where this file saves a whole object with `torch.save`"
        owner = self._classes[-1] if self._classes else None
        if owner is not None:
            saves = self._saves_itself.get(id(owner))
            if saves is None:
                saves = self._saves_itself[id(owner)] = saves_own_instance(owner, self.context.imports)
            if saves:
                return f"`{owner.name.value}` saves its own instance whole with `torch.save(self, ...)`"
        return None

    def _report_failing_load(self, call) -> None:
        """From torch 2.6 a load without `weights_only` refuses objects: reported where the
        file shows the checkpoint holds some, without a fix (only the user knows whether
        the file is trusted)."""
        evidence = self._evidence_here(call)
        if evidence is not None:
            loader = self.context.module.code_for_node(call.func)
            target = self.context.config.target_torch
            self.report(call, _FAILS.format(loader=loader, target=target, evidence=evidence))

    def _reports(self, node, message: str, key: str, superseded_by: Optional[str]):
        """The finding with its fix, and the one for a source another file shows holds objects."""
        evidence = f"`{key}` {{where}}"
        return (Report(self, node, message + _PASS_TRUE, self._fix(node), superseded_by),
                Report(self, node, message + _HOLDS_OBJECTS.format(evidence=evidence), superseded_by=superseded_by))

    def _fix(self, call):
        def fix(positions):
            edit = append_keyword(positions, call, "weights_only=True", self.context.newline)
            if edit is None:
                return None
            return Fix("Pass `weights_only=True`", (edit,), Applicability.UNSAFE)

        return fix

    @classmethod
    def sites(cls, view, config) -> Iterator[ast.AST]:
        """The loads, and the definitions that call `torch.save` (what the file saves tells
        what its loads read: see `numpy_saved_keys`)."""
        return with_context(super().sites(view, config), lambda: definitions_calling(view, ("save(",), "torch.save"))

    @classmethod
    def ast_facts(cls, view, config, record) -> None:
        if view.tree is not None and "save(" in view.text:
            record.object_saves = tuple(ast_object_saves(view.nodes_of(ast.Call), view.nodes_of(ast.Assign), view.tree, view.imports))

    @cached_property
    def _module_strings(self) -> Dict[str, str]:
        return module_strings(self.context.module)

    @cached_property
    def _numpy_saved_keys(self) -> Dict[str, str]:
        """The keys under which this file saves NumPy values into checkpoints."""
        return numpy_saved_keys(self.context.module, self.context.imports)

    def _note_unrestricted_source(self, call) -> None:
        key = source_key(call, self._module_strings)
        if key is not None and not key.startswith('"'):
            record = self.context.record
            if key not in record.unrestricted_loads:
                record.unrestricted_loads += (key,)

    @cached_property
    def _unrestricted_here(self) -> set:
        """The sources this file loads with `weights_only=False` or a `pickle_module` (anywhere in it)."""
        return {source_key(call, self._module_strings) for call in self._unrestricted_loads(self.context.module)}

    def _unrestricted_in(self, function) -> set:
        """The first arguments, as written, of the loads `function` makes with `weights_only=False`
        or a `pickle_module` (a fallback: `except UnpicklingError: torch.load(f, weights_only=False)`).
        Cost: one walk of the function, the first time it is asked."""
        found = self._function_unrestricted.get(id(function))
        if found is None:
            loads = self._unrestricted_loads(function)
            found = self._function_unrestricted[id(function)] = {self._first_argument(call) for call in loads}
        return found

    def _unrestricted_loads(self, node) -> Iterator:
        for call in walk(node):
            if isinstance(call, cst.Call):
                load = read_load(call, self.context.imports.qualified_name(call.func), self.context.config)
                if load is not None and load.unrestricted in DELIBERATE:
                    yield call

    def _first_argument(self, call) -> Optional[str]:
        """The file argument as written (`torch.load(f, ...)`, `torch.load(f=f)`), or None."""
        argument = bound_argument(call, "f", 0)
        return None if argument is None else self.context.module.code_for_node(argument.value)
