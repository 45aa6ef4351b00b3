"""Which function owns each node of a file, from the shared stdlib-ast node index.

`reach.ast_own_nodes(function)` walks one function's body for what the function itself
runs (nested defs, lambdas and classes left out); walking every function of a file that
way costs about as much as parsing it again. Here nodes taken from the index every rule
already shares (`SourceView.nodes_of`) are placed by position: a node belongs to the
innermost def, lambda or class whose extent holds it if it lies in that one's body, to
nobody if it lies in its decorators, defaults, annotations or bases (as `ast_own_nodes`
skips those of a nested scope, and the module's own statements skip those of a
top-level one), and to the module (`None`) if no def, lambda or class holds it.
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from typing import Dict, Iterable, List, Optional, Tuple

from torchlint.core.rule import SourceView

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
Position = Tuple[int, int]


def owned_nodes(view: SourceView, nodes: Iterable[ast.AST]) -> Dict[Optional[ast.AST], List[ast.AST]]:
    """`nodes` (of the file, none of them a def, lambda or class) grouped by the def,
    lambda or class that owns them (None: the module), each group in source order."""
    table = view.__dict__.get("_torchlint_scope_table")
    if table is None:
        table = view.__dict__["_torchlint_scope_table"] = _ScopeTable(view.nodes_of(*_SCOPES))
    owned: Dict[Optional[ast.AST], List[ast.AST]] = {}
    for node in sorted(nodes, key=_position):
        owner = table.owner(_position(node))
        if owner is not table:
            owned.setdefault(owner, []).append(node)
    return owned


class _ScopeTable:
    """The file's defs, lambdas and classes by start, each with its end, the start of its
    body and the innermost one around it."""

    def __init__(self, scopes: List[ast.AST]) -> None:
        # by start; of two that start together (a decorator that is a lambda), the outer first
        self.scopes = sorted(scopes, key=lambda scope: (_start(scope), -scope.end_lineno, -scope.end_col_offset))
        self.starts = [_start(scope) for scope in self.scopes]
        self.ends = [(scope.end_lineno, scope.end_col_offset) for scope in self.scopes]
        self.bodies = [_position(scope.body if isinstance(scope, ast.Lambda) else scope.body[0]) for scope in self.scopes]
        self.parents: List[int] = []  # -1: none
        around: List[int] = []
        for start in self.starts:
            while around and self.ends[around[-1]] <= start:
                around.pop()
            self.parents.append(around[-1] if around else -1)
            around.append(len(self.parents) - 1)

    def owner(self, where: Position):
        """The scope that owns a node starting at `where`, None for the module, or the
        table itself for nobody."""
        index = bisect_right(self.starts, where) - 1
        while index >= 0 and not where < self.ends[index]:
            index = self.parents[index]
        if index < 0:
            return None
        return self.scopes[index] if where >= self.bodies[index] else self


def _position(node: ast.AST) -> Position:
    return node.lineno, node.col_offset


def _start(scope: ast.AST) -> Position:
    return min([_position(scope), *(_position(decorator) for decorator in getattr(scope, "decorator_list", ()))])
