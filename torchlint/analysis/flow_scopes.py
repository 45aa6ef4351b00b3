"""The scopes `FileFlow` fills (LibCST): a function's or class's bindings, reads and calls,
what a function reaches, and the reference helpers that read them from expressions and
statements.

Cost: `FileFlow` fills the scopes in O(1) per node of its traversal; `expression_refs`,
`called_name` and `assign_targets` are linear in the expression or target.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Set, Tuple

from torchlint.analysis.names import cst_dotted_name
from torchlint.core.lazy import cst

MODULE_SCOPE = "<module>"
MAX_FLOW_DEPTH = 8


@dataclass(eq=False)
class ClassScope:
    name: str
    node: Any
    top: Set[str]
    # self.<attr> -> (assigned value, the method's scope)
    attrs: Dict[str, List[Tuple[Any, "Scope"]]] = dataclasses.field(default_factory=dict)
    methods: Dict[str, "Scope"] = dataclasses.field(default_factory=dict)
    # calls `self.<attr>(...)`: (attr, method scope, statement line, under cuDNN-off)
    self_calls: List[Tuple[str, "Scope", Any, bool]] = dataclasses.field(default_factory=list)


@dataclass(eq=False)
class Scope:
    """A function (or the module's own statements): what it binds, reads and calls."""

    name: str
    node: Any
    parent: Optional["Scope"]
    cls: Optional[ClassScope]
    params: List[str] = dataclasses.field(default_factory=list)
    defaults: Dict[str, Any] = dataclasses.field(default_factory=dict)
    annotations: Dict[str, Any] = dataclasses.field(default_factory=dict)
    instance: Optional[str] = None  # what a method calls `self`
    assigns: Dict[str, List[Any]] = dataclasses.field(default_factory=dict)
    refs: Set[str] = dataclasses.field(default_factory=set)
    calls: List[Tuple[str, Any]] = dataclasses.field(default_factory=list)
    called: Set[str] = dataclasses.field(default_factory=set)  # names called like a model: `x(...)`, `x.forward(...)`


@dataclass
class Reached:
    local: Set[str] = dataclasses.field(default_factory=set)
    imported: Set[str] = dataclasses.field(default_factory=set)
    # parameters that carry a model in and have no caller in this file: (function, name),
    # the function named as the project pass knows it (None: a method or nested function)
    params: Set[Tuple[Optional[str], str]] = dataclasses.field(default_factory=set)


def expression_refs(node) -> Set[str]:
    """The dotted names an expression reads (`self.rnn`, `models.Critic`, `x`)."""
    found: Set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.Name, cst.Attribute)):
            dotted = cst_dotted_name(current)
            if dotted:
                found.add(dotted)
                continue
            if isinstance(current, cst.Attribute):
                stack.append(current.value)
                continue
        if isinstance(current, cst.Arg):
            stack.append(current.value)
        elif isinstance(current, cst.Lambda):
            stack.append(current.body)
        else:
            stack.extend(current.children)
    return found


def called_name(func) -> Optional[str]:
    """What a call runs like a model: `critic` for `critic(x)` and `critic.forward(x)`,
    `self.heads` for `self.heads[0](x)`."""
    while isinstance(func, cst.Subscript):
        func = func.value
    dotted = cst_dotted_name(func)
    if dotted and dotted.endswith(".forward"):
        dotted = dotted[: -len(".forward")]
    return dotted


def assign_targets(small) -> List[Any]:
    if isinstance(small, cst.Assign):
        return [t.target for t in small.targets]
    return [small.target] if small.value is not None else []
