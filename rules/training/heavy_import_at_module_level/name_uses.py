"""Where each name a module imports is read: in function bodies, at import time (calls or other uses),
in annotations (evaluated or postponed). Cost: linear in the statements that mention the
names (torchlint.analysis.global_reads) and in the top-level statements (the LibCST nodes of
the functions that read them)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Collection, List

from torchlint.analysis.global_reads import global_reads
from torchlint.analysis.names import cst_dotted_name, import_module_name
from torchlint.core.lazy import cst
from torchlint.core.positions import cst_counterparts, rows_mentioning


@dataclass
class Reads:
    """Where a module-level name is read."""

    functions: List  # the outermost functions (LibCST) whose bodies read it
    at_import: bool = False  # read when the module is imported
    calls_at_import: bool = False  # called into when the module is imported (`wandb.init()`), not as a decorator
    in_annotations: bool = False  # named in annotations outside function bodies that never run


class NameUses:
    """Where the names bound by the module's heavy imports are bound and read: from the
    stdlib ast (torchlint.analysis.global_reads) of the statements that mention them, the
    functions that read them given as the LibCST nodes the fix edits. Linear in those
    statements."""

    def __init__(self, module, tree: ast.Module, text: str, names: Collection[str], postponed: bool) -> None:
        found = global_reads(tree.body, names, postponed, rows_mentioning(text, names))
        functions = cst_counterparts(module, tree, {f for reads in found.values() for f in reads.functions})
        self._found = found
        self._functions = functions

    def binding_count(self, name: str) -> int:
        return self._found[name].bindings

    def reads(self, name: str) -> Reads:
        found = self._found[name]
        functions = [self._functions[function] for function in found.functions if function in self._functions]
        return Reads(functions, found.at_import, found.calls_at_import, found.in_annotations)


def postpones_annotations(module) -> bool:
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom) and import_module_name(small) == "__future__":
                names = small.names if not isinstance(small.names, cst.ImportStar) else ()
                if any(cst_dotted_name(alias.name) == "annotations" for alias in names):
                    return True
    return False
