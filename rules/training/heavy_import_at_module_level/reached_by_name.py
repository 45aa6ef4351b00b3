"""The ways a module's attribute is reached by name, so that an import cannot move: `__all__`, `getattr`,
`globals()[...]`, `sys.modules[__name__]`, and dotted strings. Cost: one walk of the
statements that mention the names or `__all__`."""

from __future__ import annotations

import ast
from typing import Dict, Optional, Sequence

from torchlint.analysis.names import module_level_ast_statements
from torchlint.core.walk import ast_nodes

_LOOKUPS = frozenset({"getattr", "hasattr", "setattr", "delattr"})
_NAMESPACES = frozenset({"globals", "vars", "locals"})


def _literal_strings(node) -> Optional[set]:
    """The strings of a literal list/tuple/set (or a sum of them); None if not literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        found: set = set()
        for element in node.elts:
            strings = _literal_strings(element.value if isinstance(element, ast.Starred) else element)
            if strings is None:
                return None
            found |= strings
        return found
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal_strings(node.left), _literal_strings(node.right)
        return None if left is None or right is None else left | right
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple"):
        if not node.args and not node.keywords:
            return set()
        if len(node.args) == 1 and not node.keywords:
            return _literal_strings(node.args[0])
    return None


def _is_all(node) -> bool:
    return isinstance(node, ast.Name) and node.id == "__all__"


class ReachedByName:
    """The module's names that this file reaches as attributes of the module rather than
    by reading them: exported in `__all__`, looked up with `getattr(...)`,
    `globals()[...]`, `sys.modules[__name__].x`, or named by a dotted string. Moving
    their import into functions would make those lookups fail."""

    def __init__(
        self, tree: Optional[ast.Module], mentioning: Sequence[ast.stmt], exporting: Sequence[ast.stmt]
    ) -> None:
        """`mentioning`: the top-level statements whose text holds a name asked about
        (a lookup by name spells the name, so no other statement can hold one);
        `exporting`: those whose text holds `__all__`."""
        self.exported: set = set()
        self.computed_all = False
        self.looked_up: Dict[str, str] = {}
        if tree is None:  # cannot happen after a LibCST parse; no claim either way
            self.computed_all = True
            return
        for statement in module_level_ast_statements(ast.Module(body=list(exporting), type_ignores=[])):
            self._read_all(statement)
        for statement in mentioning:
            for node in ast.walk(statement):
                self._read_lookup(node)

    def reason(self, name: str) -> Optional[str]:
        if name in self.exported:
            return f"`{name}` is exported in `__all__`, which `from ... import *` follows"
        if self.computed_all:
            return f"`__all__` is computed and may export `{name}`"
        how = self.looked_up.get(name)
        if how:
            return f"`{name}` is looked up on the module by name ({how})"
        return None

    def _read_all(self, statement) -> None:
        value = None
        if isinstance(statement, ast.Assign) and any(_is_all(t) for t in statement.targets):
            value = statement.value
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)) and _is_all(statement.target):
            value = statement.value
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            call = statement.value
            func = call.func
            if isinstance(func, ast.Attribute) and _is_all(func.value) and call.args:
                if func.attr in ("append", "insert"):  # the added name is the last argument
                    value = ast.List([call.args[-1]], ast.Load())
                elif func.attr == "extend":
                    value = call.args[0]
        if value is None:
            if any(_is_all(node) for node in ast_nodes(statement) if isinstance(getattr(node, "ctx", None), ast.Store)):
                self.computed_all = True  # `for __all__ in ...`, `__all__[:] = ...`
            return
        strings = _literal_strings(value)
        if strings is None:
            self.computed_all = True
        else:
            self.exported |= strings

    def _read_lookup(self, node) -> None:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _LOOKUPS:
            if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                self.looked_up.setdefault(node.args[1].value, f"`{node.func.id}`")
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(
            node.slice.value, str
        ):
            holder = node.value
            namespace = (
                isinstance(holder, ast.Call) and isinstance(holder.func, ast.Name) and holder.func.id in _NAMESPACES
            )
            if namespace or (isinstance(holder, ast.Attribute) and holder.attr == "__dict__"):
                self.looked_up.setdefault(node.slice.value, "a namespace subscript")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Subscript):
            modules = node.value.value
            if isinstance(modules, ast.Attribute) and modules.attr == "modules":
                self.looked_up.setdefault(node.attr, "`sys.modules[...]`")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "." in node.value:
            parts = node.value.split(".")
            if len(parts) > 1 and all(part.isidentifier() for part in parts):
                self.looked_up.setdefault(parts[-1], f"the dotted string {node.value!r}")
