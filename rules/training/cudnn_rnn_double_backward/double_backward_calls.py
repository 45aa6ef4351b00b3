"""A second-order call as TL004's traversal collects it: where it is, what it differentiates, whether
cuDNN is off around it. Cost: constant per call collected."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from torchlint.analysis.flow_scopes import Scope


@dataclass(eq=False)
class DoubleBackwardCall:
    node: Any
    scope: Scope
    what: str
    value: Any  # the create_graph expression (None: always second order)
    disabled: bool  # inside `with torch.backends.cudnn.flags(enabled=False)`
    outputs: Any = None  # what is differentiated: grad's `outputs`, the receiver of `.backward`
    inputs: Any = None  # grad's `inputs`: the graph above them is differentiated once only


def flat_code(module, node) -> str:
    return " ".join(module.code_for_node(node).split())
