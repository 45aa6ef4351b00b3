"""Run-time help for a training script: `verify()` checks the machine, `guard(model)` the batches.

```python
import torchlint.runtime
torchlint.runtime.verify()               # the doctor's checks; with TORCHLINT_GUARD=1 also a guard
with torchlint.runtime.guard(model):     # checks each layer's input before the call
    train(model)
```

Importing this package does not import torch; the guard imports it when it is used.
"""

from __future__ import annotations

from typing import Any

from torchlint.runtime.environment import EnvironmentMismatch, InvalidRequirements, verify

__all__ = ["EnvironmentMismatch", "InvalidRequirements", "verify",
           "guard", "Guard", "GuardError", "GuardWarning", "GuardOptions", "GuardCallback", "guard_accelerator"]

_LAZY = {
    "guard": "torchlint.runtime.guards",
    "Guard": "torchlint.runtime.guards",
    "GuardOptions": "torchlint.runtime.options",
    "GuardError": "torchlint.runtime.errors",
    "GuardWarning": "torchlint.runtime.errors",
    "GuardCallback": "torchlint.runtime.callbacks",
    "guard_accelerator": "torchlint.runtime.callbacks",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'torchlint.runtime' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(_LAZY[name]), name)
