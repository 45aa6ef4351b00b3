from __future__ import annotations

import ast
from typing import Iterator

from torchlint.core.config import Config
from torchlint.core.gating import with_context
from torchlint.analysis.source_view import SourceView
from torchlint.rule_api.rule import Invalid, Rule
from torchlint.analysis.torch_calls import TORCH_DATALOADERS, ast_is_dataloader, definitions_calling, split_args

# DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, ...)
_NUM_WORKERS_POSITION = 5


def _ast_without_num_workers(call: ast.Call, table) -> bool:
    if not ast_is_dataloader(call, table) or len(call.args) > _NUM_WORKERS_POSITION:
        return False
    if any(isinstance(arg, ast.Starred) for arg in call.args):
        return False
    return all(keyword.arg not in (None, "num_workers") for keyword in call.keywords)


class DataLoaderWithoutNumWorkers(Rule):
    """
    ## What it does
    Flags `torch.utils.data.DataLoader(...)` built without `num_workers` (under any
    import spelling: `from torch.utils.data import DataLoader as DL`, `import
    torch.utils.data as data`). Off by default: enable it with `extend-select =
    ["TL305"]`.

    ## Why is this bad?
    The default, `num_workers=0`, loads every batch in the training process itself:
    reading files, decoding images and running the transforms happen between steps,
    while the GPU waits. With `num_workers=N` (N > 0) worker processes prepare the next
    batches while the current step runs. The usual starting point is the number of CPU
    cores you can spare per training process (4 to 8 is common), with
    `persistent_workers=True` so the workers survive across epochs.

    It is off by default because `num_workers=0` is right in some places: datasets
    already in memory or on the GPU, tests, notebooks, evaluation of a handful of
    samples, and environments where worker processes cannot start.

    ## Example
    ```python
    from torch.utils.data import DataLoader

    loader = DataLoader(dataset, batch_size=64, shuffle=True)
    ```

    ## Use instead
    ```python
    loader = DataLoader(
        dataset, batch_size=64, shuffle=True, num_workers=8, persistent_workers=True
    )
    ```

    ## Fix safety
    No fix: the right number of workers depends on the machine and the dataset, and
    worker processes change behaviour (the dataset is pickled or forked into them,
    random state is per worker, `__getitem__` side effects happen in the workers).
    A call that unpacks `*args` or `**kwargs` is not reported (it may pass
    `num_workers`), nor is an explicit `num_workers=0`, which is a decision.

    ## Options
    None.

    ## References
    - [`torch.utils.data.DataLoader`: single- and multi-process data loading](https://pytorch.org/docs/stable/data.html#single-and-multi-process-data-loading)
    """

    code = "TL305"
    name = "dataloader-without-num-workers"
    summary = "`DataLoader` without `num_workers` loads batches in the training process"
    default_enabled = False
    triggers = ("DataLoader",)

    VALID = (
        "from torch.utils.data import DataLoader\n\n"
        "a = DataLoader(ds, batch_size=8, num_workers=4)\nb = DataLoader(ds, num_workers=0)\n"
        "c = DataLoader(ds, **loader_kwargs)\nd = DataLoader(ds, 8, True, None, None, 4)\n",
        # not torch's DataLoader
        "from torch_geometric.loader import DataLoader\n\nloader = DataLoader(ds, batch_size=8)\n",
    )
    INVALID = (
        Invalid(
            "from torch.utils.data import DataLoader\n\nloader = DataLoader(ds, batch_size=64, shuffle=True)\n",
            line=3,
            column=10,
        ),
        Invalid("import torch.utils.data as data\n\nloader = data.DataLoader(ds)\n"),
        Invalid("import torch\n\nloader = torch.utils.data.DataLoader(ds, 8, True)\n"),
    )

    @classmethod
    def sites(cls, view: SourceView, config: Config) -> Iterator[ast.AST]:
        """The DataLoaders built without `num_workers`, and the definitions that name one."""
        table = view.imports
        return with_context(
            (call for call in view.nodes_of(ast.Call) if _ast_without_num_workers(call, table)),
            lambda: definitions_calling(view, cls.triggers, *TORCH_DATALOADERS),
        )

    def visit_Call(self, node) -> None:
        if self.context.imports.qualified_name(node.func) not in TORCH_DATALOADERS:
            return
        parts = split_args(node)
        if parts is None or len(parts[0]) > _NUM_WORKERS_POSITION or "num_workers" in parts[1]:
            return
        self.report(
            node,
            "`DataLoader(...)` without `num_workers` loads every batch in the training process "
            "(`num_workers=0`): set `num_workers` to the CPU cores you can spare per process "
            "(e.g. 4-8) and `persistent_workers=True`",
        )
