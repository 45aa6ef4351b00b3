"""The edit that adds an import to a module, after its docstring and `from __future__`
imports.
"""

from __future__ import annotations

from torchlint.analysis.names import cst_dotted_name
from torchlint.analysis.statements import is_docstring
from torchlint.core.lazy import cst


def _is_future_import(statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, cst.ImportFrom) and not small.relative and cst_dotted_name(small.module) == "__future__"
        for small in statement.body
    )


def insert_import(module, positions, newline: str, code: str = "import torch"):
    """The edit that adds an import to a module: before its first import (after the
    docstring and `from __future__` imports), else before its first statement, else at
    its end."""
    anchor = None
    for statement in module.body:
        if is_docstring(statement) or _is_future_import(statement):
            continue
        anchor = anchor or statement
        if isinstance(statement, cst.SimpleStatementLine) and any(
            isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
        ):
            anchor = statement
            break
    if anchor is not None:
        return positions.insert_lines_before(anchor, [code], newline)
    return positions.insert_lines_after(module.body[-1], [code], newline, "")
