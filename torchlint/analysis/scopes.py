"""A function's own nodes, and which function owns each node of a file.

A function's own nodes are what it runs itself: its body without the bodies of the
defs and classes nested in it (the stdlib-ast form leaves out lambdas' bodies too, as
the instance flow needs). `own_nodes` walks a LibCST body, `ast_own_nodes` a stdlib-ast
one.

Walking every function of a file that way costs about as much as parsing it again, so
`owned_nodes` places nodes taken from the index every rule already shares
(`SourceView.nodes_of`) by position instead: a node belongs to the innermost def, lambda
or class whose extent holds it if it lies in that one's body, to nobody if it lies in
its decorators, defaults, annotations or bases (as `ast_own_nodes` skips those of a
nested scope, and the module's own statements skip those of a top-level one), and to
the module (`None`) if no def, lambda or class holds it.

Cost: `own_nodes`, `ast_own_nodes` and `parents_of` are linear in the body (`own_nodes`
the first time a file asks, O(1) after);
`owned_nodes` builds a `ScopeTable` in O(s log s) for s scopes, then places each node in
O(log s + nesting).
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from torchlint.core.lazy import cst
from torchlint.core.walk import children, walked

# the stdlib-ast nodes whose bodies are scopes of their own
AST_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
Position = Tuple[int, int]


def own_nodes(body) -> Sequence:
    """Nodes of a LibCST function body (or expression, or module), nested functions and
    classes given but not entered, in source order: walked once per file (`walk.walked`),
    as TL003, TL005 and the analyses they share each read a method's."""
    return walked(body, (cst.FunctionDef, cst.ClassDef))


def ast_own_nodes(function) -> Iterator[ast.AST]:
    """The nodes of a stdlib-ast function's body (or a module's), nested functions,
    classes and lambdas given but not entered."""
    stack: List[ast.AST] = list(reversed(function.body))
    node_type = ast.AST
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, AST_SCOPES):
            continue
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, node_type):
                stack.append(value)
            elif type(value) is list:
                stack.extend(item for item in reversed(value) if isinstance(item, node_type))


def parents_of(body) -> Dict:
    """Each LibCST node under `body` mapped to its parent."""
    parents = {}
    stack = [body]
    while stack:
        node = stack.pop()
        for child in children(node):
            parents[child] = node
            stack.append(child)
    return parents


def owned_nodes(view, nodes: Iterable[ast.AST]) -> Dict[Optional[ast.AST], List[ast.AST]]:
    """`nodes` (of the file, none of them a def, lambda or class) grouped by the def,
    lambda or class that owns them (None: the module), each group in source order."""
    table = view.analysis.scope_table
    owned: Dict[Optional[ast.AST], List[ast.AST]] = {}
    for node in sorted(nodes, key=_position):
        owner = table.owner(_position(node))
        if owner is not table:
            owned.setdefault(owner, []).append(node)
    return owned


class ScopeTable:
    """A file's defs, lambdas and classes by start, each with its end, the start of its
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
