"""Edits to a module's imports for fixes that change which names a file uses.

A fix that writes `torch.linalg.qr` must spell it through the file's own imports
(`T.linalg.qr` after `import torch as T`) or add the import it needs; a fix that rewrites
the last use of `from torch.cuda.amp import autocast` must take that import away, or
flake8 reports F401. Name resolution itself is torchlint.analysis.names'.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Sequence, Tuple

from torchlint.core.diagnostics import Edit
from torchlint.fixing.layout import tidy_line_deletion
from torchlint.core.lazy import cst
from torchlint.fixing.import_insertion import insert_import
from torchlint.analysis.names import ImportTable, module_level_cst_statements
from torchlint.core.walk import ast_nodes, blocks


def spell(qualified: str, table: ImportTable, prefer: Optional[str] = None) -> Tuple[str, Optional[str]]:
    """How this file can write `qualified`, and the module to import first (None: none).

    The local name bound to the longest module above `qualified` wins: `F.interpolate`
    after `import torch.nn.functional as F`, `T.linalg.qr` after `import torch as T`.
    Only names bound to a module prefix count, so `from torch import qr` is no way to
    write `torch.linalg.qr`. Between names bound to the same module, `prefer` (the
    name the rewritten code used) wins."""
    parts = qualified.split(".")
    best: Optional[Tuple[int, str]] = None
    for local, target in table.items():
        target_parts = target.split(".")
        depth = len(target_parts)
        if depth < len(parts) and parts[:depth] == target_parts:
            if best is None or depth > best[0] or (depth == best[0] and local == prefer):
                best = (depth, local)
    if best is not None:
        depth, local = best
        return ".".join([local, *parts[depth:]]), None
    return qualified, parts[0]


def import_edit(module, positions, newline: str, module_name: str) -> Edit:
    """The edit that adds `import module_name` beside the file's other imports."""
    return insert_import(module, positions, newline, f"import {module_name}")


def name_reads(view, local: str) -> int:
    """How often the file names `local` outside imports (stdlib-ast `Name` nodes, in any
    scope, so a same-named local elsewhere counts too). A quoted `"local"` in a file with
    `__all__` (a re-export) and `local.` inside a string (an annotation such as
    `"torch.Tensor"`, which pyflakes reads) count as one more read."""
    count = sum(1 for node in view.nodes_of(ast.Name) if node.id == local)
    name = re.escape(local)
    if "__all__" in view.text and re.search(r"[\'\"]" + name + r"[\'\"]", view.text):
        count += 1
    if re.search(r"[\'\"][^\'\"\n]*(?<![.\w])" + name + r"\.", view.text):
        count += 1
    return count


def reads(expression: str, local: str) -> bool:
    """Whether code (an expression) names `local`; True if it cannot be parsed."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        return True
    return any(isinstance(node, ast.Name) and node.id == local for node in ast_nodes(tree))


def alias_name(alias) -> str:
    return (alias.asname.name.value if alias.asname else cst.Module([]).code_for_node(alias.name)).strip()


def block_lengths(module) -> Dict[int, int]:
    """id(statement) -> how many statements share its block, for every statement of the
    module's import-time blocks (a block of one cannot lose its statement)."""
    lengths: Dict[int, int] = {}
    pending: List[Sequence] = [module.body]
    while pending:
        block = pending.pop()
        for statement in block:
            lengths[id(statement)] = len(block)
            if isinstance(statement, (cst.If, cst.Try, cst.TryStar, cst.With, cst.For, cst.While)):
                pending.extend(blocks(statement))
    return lengths


def module_level_binding(module, local: str):
    """(statement line, import node, alias) of the module-level import that binds `local`,
    or None (bound otherwise, more than once, or not at all)."""
    found = None
    for line in module_level_cst_statements(module):
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for node in line.body:
            if isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    if _binds(alias, node) == local:
                        if found is not None:
                            return None
                        found = (line, node, alias)
    return found


def _binds(alias, node) -> str:
    """The local name an import alias binds (`import a.b` binds `a`)."""
    if alias.asname is not None or isinstance(node, cst.ImportFrom):
        return alias_name(alias)
    return alias_name(alias).split(".")[0]


def remove_alias(
    line, node, alias, positions, lines: Sequence[str], block_length: int, tidy: bool = True
) -> Optional[Edit]:
    """The edit that takes `alias` out of the import `node` (see `remove_aliases`)."""
    return remove_aliases(line, node, (alias,), positions, lines, block_length, tidy)


def remove_aliases(
    line, node, aliases, positions, lines: Sequence[str], block_length: int, tidy: bool = True
) -> Optional[Edit]:
    """The edit that takes `aliases` out of the import `node` (in the statement `line`):
    the whole line if no name is left, else the import without them. None when the
    line holds other statements or is the only statement of its block."""
    kept = [name for name in node.names if not any(name is gone for gone in aliases)]
    if kept:
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        changes = {"names": kept}
        if isinstance(node, cst.ImportFrom) and node.lpar is not None and len(kept) == 1:
            changes.update(lpar=None, rpar=None)
        return positions.replace(node, cst.Module([]).code_for_node(node.with_changes(**changes)))
    if len(line.body) != 1 or block_length <= 1:
        return None
    deletion = positions.delete_lines(line)
    return tidy_line_deletion(deletion, lines) if tidy else deletion


def replace_line(line, positions, new_lines: Sequence[str], newline: str) -> Edit:
    """Replace the physical lines of statement `line` with `new_lines` at its indentation."""
    indent = positions.indent_of(line)
    comment = line.trailing_whitespace.comment
    if comment is not None:  # kept on the last new line
        new_lines = [*new_lines[:-1], f"{new_lines[-1]}  {comment.value}"]
    deletion = positions.delete_lines(line)
    text = ""
    after_import = bool(not indent and _follows_an_import(positions, deletion.start.row))
    for new in new_lines:
        is_import = new.startswith(("import ", "from "))
        if after_import and not is_import:
            text += newline  # a formatter separates module-level code from the imports above it
        text += f"{indent}{new}{newline}"
        after_import = not indent and is_import
    return Edit(deletion.start, deletion.end, text)


def _follows_an_import(positions, row: int) -> bool:
    above = positions.line_text(row - 1)
    return above.startswith(("import ", "from ")) or (above.startswith(")") and _in_import(positions, row - 1))


def _in_import(positions, row: int) -> bool:
    """Whether row `row` closes a parenthesised `from ... import (` at the module's top level."""
    while row > 1:
        row -= 1
        text = positions.line_text(row)
        if not text.startswith((" ", "\t")):
            return text.startswith("from ") and text.rstrip().endswith("(")
    return False


def rebind_module(node, module_name: str, positions) -> Edit:
    """`from old import name` -> `from module_name import name` (the names kept)."""
    new_module = cst.parse_expression(module_name)
    return positions.replace(node, cst.Module([]).code_for_node(node.with_changes(module=new_module)))
