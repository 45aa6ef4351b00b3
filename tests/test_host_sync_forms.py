"""TL003's explicit syncs on both trees: the stdlib-ast gate keeps every call the LibCST
visitor counts as a sync, and turns away the look-alikes the visitor turns away."""

from __future__ import annotations

import ast

import pytest

from torchlint.analysis.names import ImportMap, ast_import_table
from torchlint.core.lazy import cst
from torchlint.rules.training.host_sync_in_hot_path.syncs import ast_is_sync, is_sync

IMPORTS = "import torch\nfrom torch.cuda import synchronize\nimport torch.cuda as tc\n"

SYNCS = [
    "loss.item()",
    "x.tolist()",
    "x.numpy()",
    "x.numpy(force=True)",
    "self.metric.compute().item()",
    "torch.cuda.synchronize()",
    "synchronize()",
    "tc.synchronize()",
]
LOOK_ALIKES = [
    "arr.item(0)",
    "table.items()",
    "x.tolist(1)",
    "x.numpy(True)",
    "x.itemsize()",
    "other.synchronize()",
    "x.cpu()",
]


def _forms(expression: str):
    source = IMPORTS + expression + "\n"
    tree = ast.parse(source)
    module = cst.parse_module(source)
    ast_call = tree.body[-1].value
    cst_call = module.body[-1].body[0].value
    return ast_call, ast_import_table(tree), cst_call, ImportMap(module)


@pytest.mark.parametrize("expression", SYNCS + LOOK_ALIKES)
def test_gate_and_visitor_agree(expression: str) -> None:
    ast_call, table, cst_call, imports = _forms(expression)
    assert ast_is_sync(ast_call, table) == is_sync(cst_call, imports) == (expression in SYNCS)
