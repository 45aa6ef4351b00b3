"""The guard in training frameworks: a Lightning callback and an Accelerate helper.

Neither framework is required. `GuardCallback` subclasses Lightning's `Callback` when
Lightning is installed (`lightning` or `pytorch_lightning`), and is a plain class with the
same hook methods otherwise, so any loop that calls them works.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any, Optional

from torchlint.runtime.guards import Guard, guard


def _lightning_callback_base() -> type:
    for package in ("lightning.pytorch", "pytorch_lightning"):
        root = package.split(".")[0]
        if importlib.util.find_spec(root) is not None:
            try:
                return importlib.import_module(package).Callback
            except ImportError:
                continue
    return object


class GuardCallback(_lightning_callback_base()):  # type: ignore[misc]
    """`Trainer(callbacks=[GuardCallback()])`: guard the LightningModule for the whole fit.

    Each training and validation batch is one guard step (value checks on the first
    `first` batches, then every `every`-th), whatever the module's forward calls.
    """

    def __init__(self, **options: Any) -> None:
        super().__init__()
        self.options = options
        self.guard: Optional[Guard] = None

    def setup(self, trainer: Any, pl_module: Any, stage: Optional[str] = None) -> None:
        if self.guard is None:
            self.guard = guard(pl_module, **self.options)

    def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int, *args: Any) -> None:
        if self.guard is not None:
            self.guard.begin_step()

    def on_validation_batch_start(self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int,
                                  *args: Any) -> None:
        if self.guard is not None:
            self.guard.begin_step()

    def teardown(self, trainer: Any, pl_module: Any, stage: Optional[str] = None) -> None:
        self._remove()

    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        # a failed fit does not always reach teardown: nothing of the guard may outlive it
        self._remove()

    def _remove(self) -> None:
        if self.guard is not None:
            self.guard.remove()
            self.guard = None


def guard_accelerator(accelerator: Any, model: Any, **options: Any) -> Guard:
    """Guard a model prepared by Hugging Face Accelerate (`accelerator.prepare(model)`).

    The guard goes on the unwrapped model, so paths read as in your code (no `module.`
    from DistributedDataParallel); with several processes each error names its rank.
    Use it as `with guard_accelerator(accelerator, model): ...` or keep the handle.
    """
    return guard(accelerator.unwrap_model(model), **options)
