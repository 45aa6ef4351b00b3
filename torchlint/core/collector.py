"""The cyclic garbage collector, paused while one file is linted.

A LibCST parse makes tens of thousands of nodes in a moment; each batch of new objects
sets off a collection, and the older generations' collections walk the whole growing
tree again, which costs a quarter of a large file's parse. Nodes are freed by reference
counting; the few cycles a file leaves are collected once the collector runs again.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def collector_paused() -> Iterator[None]:
    """The block runs with the cyclic collector off; it is on again after only if it was
    on before (a caller that turned it off keeps it off)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
