"""The edits of TL001's fix: the text of a moved import and its insertion at the top of a function body. Cost: the size of the import and of the
function's first statements."""

from __future__ import annotations

from typing import List

from torchlint.analysis.statements import is_docstring
from torchlint.analysis.names import cst_dotted_name, import_module_name
from torchlint.core.diagnostics import Edit, Location
from torchlint.core.lazy import cst
from torchlint.rule_api.rule import Positions


def bound_name(alias) -> str:
    if alias.asname is not None:
        return alias.asname.name.value
    return (cst_dotted_name(alias.name) or "").split(".")[0]


def import_code(module, statement, aliases) -> str:
    names = ", ".join(
        module.code_for_node(a.name) + (f" as {a.asname.name.value}" if a.asname else "")
        for a in aliases
    )
    if isinstance(statement, cst.Import):
        return f"import {names}"
    return f"from {import_module_name(statement)} import {names}"


def insert_first(function, code: List[str], positions: Positions, newline: str):
    """The import as the function's first statement: after its docstring, and above the
    comment lines that describe the statement it goes before."""
    body = function.body.body
    first = body[0]
    if is_docstring(first):
        if len(body) == 1:
            return positions.insert_lines_after(first, code, newline, positions.indent_of(first))
        first = body[1]
    edit = positions.insert_lines_before(first, _import_lines(code, first), newline)
    row = edit.start.row - _comment_lines_above(first)
    return Edit(Location(row, 1), Location(row, 1), edit.content)


def _comment_lines_above(statement) -> int:
    return len(comments_above(statement))


def comments_above(statement) -> List[str]:
    """The comment lines right above a statement (no blank line between)."""
    comments: List[str] = []
    for line in reversed(statement.leading_lines):
        if line.comment is None:
            break
        comments.insert(0, line.comment.value)
    return comments


def _import_lines(code: List[str], following) -> List[str]:
    """The import, then the blank line a formatter puts between imports and other code."""
    imports = (cst.Import, cst.ImportFrom)
    if isinstance(following, cst.SimpleStatementLine) and isinstance(following.body[0], imports):
        return code
    return [*code, ""]
