"""Modules that are imported only when first used.

LibCST costs a quarter of a second to import; a run in which no file passes a rule's
gate never pays it. Rules write `from torchlint.core.lazy import cst` and use it as usual.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_import(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ImportError(f"No module named {name!r}")
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    # what importlib sets on a spec once its module is loaded; without it, each later
    # `import` of the module raises and swallows an AttributeError looking for it (LibCST's
    # native parser imports `libcst` again for the nodes it builds: a seventh of a parse)
    spec._initializing = False
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


def load(module: ModuleType) -> ModuleType:
    """The module, executed now if `lazy_import` deferred it (its first attribute does that)."""
    getattr(module, "__dict__")
    return module


cst = lazy_import("libcst")
