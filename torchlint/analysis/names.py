"""Resolve names through a module's own import statements.

`nn.Conv2d` after `import torch.nn as nn` is `torch.nn.Conv2d`; `Conv2d` after
`from torch.nn import Conv2d` is too. Only module-level imports (including those in
module-level `if`/`try`/`with` blocks) are read: one walk over the top of the module,
no scope analysis. The same table is built from LibCST for rules and from the stdlib
`ast` for the cheap gates, so both answer the same question the same way.

Cost: one walk of the module-level statements per import table; `resolve` and the
dotted-name helpers are linear in the name.
"""

from __future__ import annotations

import ast
import bisect
from typing import Dict, Iterable, Iterator, List, Optional, Set

from torchlint.core.lazy import cst
from torchlint.core.walk import blocks

# local name -> the dotted name it stands for
ImportTable = Dict[str, str]

# calls whose first argument names a module they import now: importlib, the builtin, monai
IMPORT_CALLS = frozenset({"import_module", "__import__", "optional_import"})


def resolve(dotted: Optional[str], table: ImportTable) -> Optional[str]:
    """The full dotted name of `dotted` if its head is bound by an import, else None."""
    if not dotted:
        return None
    head, _, rest = dotted.partition(".")
    target = table.get(head)
    if target is None:
        return None
    return f"{target}.{rest}" if rest else target


def _bind_import(table: ImportTable, module: str, alias: Optional[str]) -> None:
    if alias:
        table[alias] = module
    else:
        head = module.split(".")[0]
        table[head] = head


def _bind_from(table: ImportTable, module: str, name: str, alias: Optional[str]) -> None:
    if name != "*":
        table[alias or name] = _from_name(module, name)


def _from_name(module: str, name: str) -> str:
    """What `from module import name` takes: `.x` for `from . import x`, not `..x` (which
    would mean the parent package)."""
    separator = "" if not module or module.endswith(".") else "."
    return f"{module}{separator}{name}"


# ---- stdlib ast ---------------------------------------------------------------


def module_level_ast_statements(tree: ast.Module, type_checking: bool = True) -> Iterator[ast.stmt]:
    """Statements executed at import time: the module body and its if/try/with/for/while
    blocks; without `type_checking`, not the body of an `if TYPE_CHECKING:` (only type
    checkers run it)."""
    stack = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _AST_IMPORT_TIME):
            found = blocks(node)
            if not type_checking and isinstance(node, ast.If) and ast_is_type_checking(node.test):
                found = found[1:]
            for block in found:
                stack.extend(reversed(block))


# the statements whose blocks run at import time (not a def's or a class's body)
_AST_IMPORT_TIME = (ast.If, ast.While, ast.For, ast.With, ast.Try) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def ast_import_table(tree: ast.Module) -> ImportTable:
    table: ImportTable = {}
    for node in module_level_ast_statements(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                _bind_import(table, alias.name, alias.asname)
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                _bind_from(table, module, alias.name, alias.asname)
    return table


class FunctionImports:
    """The imports of the functions that import in their own body (their blocks too, not
    nested definitions), by row: what a name inside such a function may resolve through
    besides the module's imports (`table_at`).

    Cost: one pass over the statements of the functions given, a sort of those that import;
    then O(log k + depth) per question, the merged table of each function made once."""

    def __init__(self, functions: Iterable[ast.AST]) -> None:
        found = []
        for function in functions:
            table = ast_import_table(function)
            if table:
                found.append((function.lineno, function.end_lineno or function.lineno, table))
        found.sort(key=lambda entry: (entry[0], -entry[1]))  # outer functions before the ones they hold
        self._entries = found
        self._starts = [first for first, _, _ in found]
        self._parents: List[int] = []  # the nearest entry around each, or -1
        around: List[int] = []
        for index, (first, _, _) in enumerate(found):
            while around and found[around[-1]][1] < first:
                around.pop()
            self._parents.append(around[-1] if around else -1)
            around.append(index)
        self._merged: Dict[int, ImportTable] = {}

    def table_at(self, row: int, module_table: ImportTable) -> ImportTable:
        """The imports a name on `row` resolves through: the module's, then those of each
        function around it, the innermost last (a local import shadows a global one)."""
        index = bisect.bisect_right(self._starts, row) - 1
        while index >= 0 and self._entries[index][1] < row:  # ends above the row: an entry around it may not
            index = self._parents[index]
        if index < 0:
            return module_table
        return {**module_table, **self._chain(index)}

    def _chain(self, index: int) -> ImportTable:
        merged = self._merged.get(index)
        if merged is None:
            parent = self._parents[index]
            merged = self._merged[index] = {**(self._chain(parent) if parent >= 0 else {}), **self._entries[index][2]}
        return merged


def ast_names_taken(import_froms: Iterable[ast.ImportFrom], attributes: Iterable[ast.Attribute], table: ImportTable) -> List[str]:
    """The names this file takes from other modules, as `module.name` (a relative module
    with its dots): `from pkg import vmap` in any scope, and `m.vmap` read through a
    module-level import that binds `m` (`import pkg as m`, `from pkg import plain`).
    Deeper chains (`pkg.plain.vmap` after `import pkg.plain`) are not followed.

    Cost: O(the given imports and attributes)."""
    found: Set[str] = set()
    for node in import_froms:
        module = "." * node.level + (node.module or "")
        found.update(_from_name(module, alias.name) for alias in node.names if alias.name != "*")
    for node in attributes:
        value = node.value
        if isinstance(value, ast.Name) and value.id in table:
            found.add(f"{table[value.id]}.{node.attr}")
    return sorted(found)


def ast_is_type_checking(test: ast.AST) -> bool:
    """Whether an `if` test is `TYPE_CHECKING` (`typing.TYPE_CHECKING`, or any `x.TYPE_CHECKING`)."""
    name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
    return name == "TYPE_CHECKING"


def ast_called_import(statement: ast.stmt) -> Optional[str]:
    """The module a statement such as `mlflow, _ = optional_import("mlflow")` imports."""
    value = getattr(statement, "value", None) if isinstance(statement, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
    if not isinstance(value, ast.Call) or not value.args:
        return None
    func, first = value.func, value.args[0]
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if name in IMPORT_CALLS and isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return None


def ast_last_name(node: ast.AST) -> Optional[str]:
    """`cst_last_name` of a stdlib-ast expression."""
    while isinstance(node, (ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def ast_dotted_name(node: ast.AST) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


# ---- LibCST -------------------------------------------------------------------


def cst_dotted_name(node) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def cst_last_name(node) -> Optional[str]:
    """The last name of an expression, through calls and subscripts: `opt` for
    `self.opts["actor"]().opt`, `optimizers` for `optimizers["actor"]`; None for other expressions."""
    while isinstance(node, (cst.Call, cst.Subscript)):
        node = node.func if isinstance(node, cst.Call) else node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return node.value if isinstance(node, cst.Name) else None


def cst_module_name(node) -> str:
    """The dotted text of an import's module expression (Name or Attribute)."""
    return cst_dotted_name(node) or ""


def module_level_cst_statements(module) -> Iterator:
    stack = list(reversed(module.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            stack.extend(reversed(node.body))
        elif isinstance(node, (cst.If, cst.With, cst.For, cst.While, cst.Try, cst.TryStar)):
            for block in blocks(node):
                stack.extend(reversed(block))


def is_type_checking(test) -> bool:
    """Whether an `if` test is `TYPE_CHECKING` (`typing.TYPE_CHECKING`, or a dotted
    `x.TYPE_CHECKING`)."""
    return (cst_dotted_name(test) or "").split(".")[-1] == "TYPE_CHECKING"


def called_import(statement) -> Optional[str]:
    """The module a small statement such as `mlflow, _ = optional_import("mlflow")` imports."""
    value = getattr(statement, "value", None) if isinstance(statement, (cst.Expr, cst.Assign, cst.AnnAssign)) else None
    if not isinstance(value, cst.Call) or not value.args or value.args[0].keyword is not None:
        return None
    first = value.args[0].value
    if (cst_dotted_name(value.func) or "").split(".")[-1] in IMPORT_CALLS and isinstance(first, cst.SimpleString):
        module = first.evaluated_value
        return module if isinstance(module, str) else None
    return None


def import_module_name(node) -> str:
    """The dotted module of a `from ... import` (with leading dots for relative)."""
    dots = "." * len(node.relative)
    return dots + (cst_module_name(node.module) if node.module is not None else "")


def cst_import_table(module) -> ImportTable:
    table: ImportTable = {}
    for node in module_level_cst_statements(module):
        if isinstance(node, cst.Import):
            for alias in node.names:
                asname = alias.asname.name.value if alias.asname else None
                _bind_import(table, cst_module_name(alias.name), asname)
        elif isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
            source = import_module_name(node)
            for alias in node.names:
                asname = alias.asname.name.value if alias.asname else None
                _bind_from(table, source, cst_module_name(alias.name), asname)
    return table


class ImportMap:
    """The import table of one LibCST module, with resolution helpers."""

    def __init__(self, module) -> None:
        self.table = cst_import_table(module)

    def qualified_name(self, node) -> Optional[str]:
        return resolve(cst_dotted_name(node), self.table)

    def matches(self, node, *names: str) -> bool:
        return self.qualified_name(node) in names
