"""TL004's cheap gate on the stdlib ast: the strings that may matter, and whether a file builds an RNN
(or subclasses one) or differentiates twice. Cost: one pass over the nodes of the shared
index (`SourceView.nodes_of`) of the kinds it asks for."""

from __future__ import annotations

import ast
from typing import Mapping

from torchlint.analysis.instance_flow import outside_tree
from torchlint.analysis.modules import RNN_LAYERS, canonical
from torchlint.analysis.names import ast_dotted_name, resolve
from torchlint.analysis.second_order import ast_differentiates_twice
from torchlint.analysis.source_view import SourceView

_KINDS = ("LSTM", "GRU", "RNN")  # what an imported RNN subclass's name must say for the gate
STRONG_TRIGGERS = (
    "LSTM", "GRU", "RNN", "create_graph", "hessian", "hvp", "vhp", "jvp", "jacrev", "jacfwd", "gradgradcheck",
)


def ast_has_role(view: SourceView, table: Mapping[str, str]) -> bool:
    """Whether the file builds an RNN (or subclasses one) or differentiates twice."""
    for node in view.nodes_of(ast.ClassDef):
        if any(canonical(resolve(ast_dotted_name(base), table)) in RNN_LAYERS for base in node.bases):
            return True
    calls = [(node, canonical(target)) for node, target in view.call_targets]
    for _, qualified in calls:
        if qualified in RNN_LAYERS:
            return True
        if qualified and not outside_tree(qualified) and any(kind in qualified.rsplit(".", 1)[-1] for kind in _KINDS):
            return True  # an imported `TimeLSTM`: perhaps a subclass of an RNN defined in another file
    return ast_differentiates_twice(calls)
