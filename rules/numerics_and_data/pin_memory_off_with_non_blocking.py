from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Set, Tuple

from torchlint.core.config import Config
from torchlint.core.diagnostics import Applicability, Fix
from torchlint.core.lazy import cst
from torchlint.analysis.names import cst_dotted_name
from torchlint.analysis.source_view import SourceView
from torchlint.rule_api.rule import Invalid, Positions, Rule
from torchlint.analysis.torch_calls import (
    TORCH_DATALOADERS,
    ast_is_dataloader,
    ast_keyword_is,
    ast_method_receiver,
    definitions_calling,
    is_name,
    method_receiver,
)
from torchlint.analysis.call_arguments import keyword_argument

_COPIES = ("to", "cuda")


def _ast_copies_non_blocking(call: ast.Call) -> bool:
    return any(ast_method_receiver(call, name) is not None for name in _COPIES) and ast_keyword_is(
        call, "non_blocking", True
    )


def _collate_names(loader) -> Set[str]:
    """The function a DataLoader's `collate_fn=` names (`self._collate`, `partial(collate,
    ...)`), as its last name; empty if none or not a name."""
    arg = keyword_argument(loader, "collate_fn")
    value = arg.value if arg is not None else None
    if isinstance(value, cst.Call) and (cst_dotted_name(value.func) or "").split(".")[-1] == "partial" and value.args:
        value = value.args[0].value
    dotted = cst_dotted_name(value) if value is not None else None
    return {dotted.split(".")[-1]} if dotted else set()


def _non_blocking_copy(call) -> bool:
    """`x.to(..., non_blocking=True)` or `x.cuda(non_blocking=True)`."""
    if not any(method_receiver(call, name) is not None for name in _COPIES):
        return False
    arg = keyword_argument(call, "non_blocking")
    return arg is not None and is_name(arg.value, "True")


class PinMemoryOffWithNonBlocking(Rule):
    """
    ## What it does
    Flags `DataLoader(..., pin_memory=False)` in a module that also copies tensors to
    the GPU with `non_blocking=True` (`x.to(device, non_blocking=True)`,
    `x.cuda(non_blocking=True)`).

    ## Why is this bad?
    A host-to-device copy can overlap with GPU work only from pinned (page-locked) host
    memory. From ordinary pageable memory, CUDA first copies into a pinned staging
    buffer, and the call returns only when that is done: `non_blocking=True` then
    changes nothing. The module asks for asynchronous copies and turns off the one
    thing that makes them asynchronous; `pin_memory=True` makes the DataLoader's
    workers hand over batches in pinned memory.

    Only an explicit `pin_memory=False` is reported (leaving it out, the default, is
    the same thing but is often an oversight in code that never meant to be fast;
    TL305 covers loaders without workers). The copy must be in the same module: a
    loader built in one file and consumed in another is not seen. A loader whose own
    `collate_fn` (named directly or through `functools.partial`) makes such copies is
    not reported: it hands the loader device tensors, which cannot be pinned (pinning
    fails), and its copies run before pinning would anyway.

    ## Example
    ```python
    loader = DataLoader(dataset, batch_size=64, num_workers=8, pin_memory=False)
    for images, labels in loader:
        images = images.to(device, non_blocking=True)
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, batch_size=64, num_workers=8, pin_memory=True)
    ```

    ## Fix safety
    Unsafe (applied with `--unsafe-fixes`): `pin_memory=True` changes behaviour. Pinned
    memory is locked in RAM (a large batch queue can exhaust a container's memory
    limit), a dataset that already yields CUDA tensors makes the pin thread fail
    ("cannot pin ... only dense CPU tensors can be pinned"), and on a machine with no
    GPU torch warns on every loader. A `pin_memory=False` chosen for one of these
    reasons should stay, with a `# noqa: TL306`.

    ## Options
    None.

    ## References
    - [Memory pinning](https://pytorch.org/docs/stable/data.html#memory-pinning)
    - [A guide on good usage of `non_blocking` and `pin_memory()`](https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html)
    """

    code = "TL306"
    name = "pin-memory-off-with-non-blocking"
    summary = "`DataLoader(pin_memory=False)` makes the module's `non_blocking=True` copies synchronous"
    fixable = True
    triggers = ("pin_memory",)

    VALID = (
        # the only copies are in the loader's collate_fn: pinning cannot help them
        "import torch\nfrom functools import partial\n\nclass Diarizer:\n"
        "    def _collate(self, items, device):\n        return [x.to(device, non_blocking=True) for x in items]\n\n"
        "    def loader(self, ds, device):\n"
        "        return torch.utils.data.DataLoader(ds, pin_memory=False, collate_fn=partial(self._collate, device=device))\n",
        # no asynchronous copy in the module
        "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, pin_memory=False)\n"
        "x = batch.to(device)\n",
        "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, pin_memory=True)\n"
        "x = batch.to(device, non_blocking=True)\n",
        "from mylib import DataLoader\n\nloader = DataLoader(ds, pin_memory=False)\n"
        "x = batch.cuda(non_blocking=True)\n",
    )
    INVALID = (
        Invalid(
            "from torch.utils.data import DataLoader\n\n"
            "loader = DataLoader(ds, batch_size=8, pin_memory=False)\n"
            "for x in loader:\n    x = x.to(device, non_blocking=True)\n",
            unsafe_fixed="from torch.utils.data import DataLoader\n\n"
            "loader = DataLoader(ds, batch_size=8, pin_memory=True)\n"
            "for x in loader:\n    x = x.to(device, non_blocking=True)\n",
            line=3,
            column=39,
        ),
        # a collate_fn that does not copy
        Invalid(
            "import functools\nimport torch\n\ndef collate(items, device):\n    return torch.stack(items)\n\n"
            "def evaluate(model, batch):\n    return model(batch.cuda(non_blocking=True))\n\n"
            "loader = torch.utils.data.DataLoader(ds, pin_memory=False, collate_fn=functools.partial(collate, device=d))\n",
            unsafe_fixed="import functools\nimport torch\n\ndef collate(items, device):\n    return torch.stack(items)\n\n"
            "def evaluate(model, batch):\n    return model(batch.cuda(non_blocking=True))\n\n"
            "loader = torch.utils.data.DataLoader(ds, pin_memory=True, collate_fn=functools.partial(collate, device=d))\n",
            line=10,
        ),
        Invalid(
            "import torch\n\ndef step(batch):\n    return batch.cuda(non_blocking=True)\n\n"
            "loader = torch.utils.data.DataLoader(ds, pin_memory=False)\n",
            unsafe_fixed="import torch\n\ndef step(batch):\n    return batch.cuda(non_blocking=True)\n\n"
            "loader = torch.utils.data.DataLoader(ds, pin_memory=True)\n",
        ),
    )

    @classmethod
    def sites(cls, view: SourceView, config: Config) -> Iterator[ast.AST]:
        """A non-blocking copy and an unpinned DataLoader, then the definitions that
        mention either (the copies may sit in a function that never mentions pin_memory)."""
        if "non_blocking" not in view.text:
            return
        calls = view.nodes_of(ast.Call)
        table = view.imports
        copy = next((call for call in calls if _ast_copies_non_blocking(call)), None)
        if copy is None:
            return
        loader = next((c for c in calls if ast_is_dataloader(c, table) and ast_keyword_is(c, "pin_memory", False)), None)
        if loader is None:
            return
        yield from (copy, loader)
        yield from definitions_calling(view, cls.triggers + ("non_blocking",))

    def __init__(self, context) -> None:
        super().__init__(context)
        # the `pin_memory=False` arguments of DataLoaders, with the names of their collate_fn
        self._unpinned: List[Tuple[object, Set[str]]] = []
        self._functions: List[str] = []  # the enclosing defs
        self._copiers: Set[Optional[str]] = set()  # the innermost def of each copy (None: top level)

    def visit_FunctionDef(self, node) -> None:
        self._functions.append(node.name.value)

    def leave_FunctionDef(self, node) -> None:
        self._functions.pop()

    def visit_Call(self, node) -> None:
        if _non_blocking_copy(node):
            self._copiers.add(self._functions[-1] if self._functions else None)
        elif self.context.imports.qualified_name(node.func) in TORCH_DATALOADERS:
            arg = keyword_argument(node, "pin_memory")
            if arg is not None and is_name(arg.value, "False"):
                self._unpinned.append((arg, _collate_names(node)))

    def leave_Module(self, node) -> None:
        for arg, collate in self._unpinned:
            # a collate_fn that copies to the device returns device tensors, which the
            # loader cannot pin (it fails), and runs before pinning would anyway
            if not self._copiers or collate & self._copiers:
                continue
            self.report(
                arg,
                "`pin_memory=False` makes this module's `non_blocking=True` copies synchronous "
                "(only pinned memory copies asynchronously): set `pin_memory=True`",
                self._fix(arg.value),
            )

    @staticmethod
    def _fix(value):
        def fix(positions: Positions) -> Fix:
            return Fix("Set `pin_memory=True`", (positions.replace(value, "True"),), Applicability.UNSAFE)

        return fix
