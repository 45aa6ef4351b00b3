"""Whether the callers of a function only record, sum or drop the number it returns: then a step
function's `return loss.item()` syncs for nothing a tensor could not do (`total += train_step(b)`).

Only the calls this file shows are read: a module function called by name, a method called on `self`
or `cls`; a function none of them calls here is not known (its callers may need the number). A call's
result qualifies when it is dropped (an expression statement), summed (`total += f(x)`, also through
arithmetic), handed to a logging call or `print` (also in an f-string or a dict literal there), or bound
to a name bound once in its function whose every read is one of those.

Cost: `called_here` and `only_recorded` read the view's calls, indexed once; `only_recorded` per name
O(its calls and the reads of the names they are bound to), with one walk (for the parents) of each function
holding such a call (of the whole file for a call outside any function), each function's names indexed
once. Linear in the file.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple

from torchlint.analysis.scopes import ast_own_nodes, owned_nodes
from torchlint.core.walk import ast_children, ast_nodes
from torchlint.rules.training.host_sync_in_hot_path.value_uses import sink_function, sink_method

_ACCUMULATING = (ast.Add, ast.Sub)
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv)
_RECEIVERS = ("self", "cls")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class ReturnedUses:
    """One file's answer, per function name, to "do its callers here only record, sum or drop what it
    returns?" (`only_recorded`); built on the first question."""

    def __init__(self, view) -> None:
        self.tree = view.tree
        self._view = view
        self._parents: Dict[int, ast.AST] = {}
        self._walked: Set[int] = set()  # ids of the functions (or the module) whose parents are known
        self._calls: Optional[Dict[str, List[ast.Call]]] = None
        # every name called, also as a method of another object (`agent.learn()`)
        self._called: Optional[Set[str]] = None
        self._verdicts: Dict[str, bool] = {}
        self._names: Dict[int, Dict[str, Tuple[int, List[ast.Name]]]] = {}

    def only_recorded(self, name: str) -> bool:
        if name not in self._verdicts:
            calls = self._calls_by_callee().get(name, [])
            self._know_parents(calls)
            self._verdicts[name] = bool(calls) and all(self._qualifies(call, bound=True) for call in calls)
        return self._verdicts[name]

    def called_here(self, name: str) -> bool:
        """Whether this file calls a function or method of that name, on any object (from
        the view's calls, indexed once: no walk of its own)."""
        if self._called is None:
            self._called = {
                func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                for func in (call.func for call in self._view.nodes_of(ast.Call))
            }
        return name in self._called

    def _calls_by_callee(self) -> Dict[str, List[ast.Call]]:
        if self._calls is None:
            self._calls = {}
            for node in self._view.nodes_of(ast.Call):
                callee = _callee(node.func)
                if callee is not None:
                    self._calls.setdefault(callee, []).append(node)
        return self._calls

    def _know_parents(self, calls: List[ast.Call]) -> None:
        """The parents of everything in the functions that hold `calls` (in the whole file
        where one lies outside a function's body): what `_qualifies` climbs, and the
        scope its bindings are read in."""
        owners = owned_nodes(self._view, calls)
        regions = [owner for owner in owners if isinstance(owner, _FUNCTIONS)]
        if sum(len(owners[owner]) for owner in regions) < len(calls):
            regions = [self.tree]  # module code, a lambda, a class body, a default: climb from anywhere
        for region in regions:
            if id(region) in self._walked or id(region) in self._parents:  # walked, or inside one walked
                continue
            self._walked.add(id(region))
            for node in ast_nodes(region):
                for child in ast_children(node):
                    self._parents[id(child)] = node

    def _qualifies(self, expression: ast.AST, bound: bool) -> bool:
        """Whether the value of `expression` is only dropped, summed or recorded; `bound`: a name it is
        bound to is followed (one level: a call's result, not a name read)."""
        node, parent = self._climb(expression)
        if isinstance(parent, ast.Expr):
            return node is expression
        if isinstance(parent, ast.AugAssign):
            return parent.value is node and isinstance(parent.op, _ACCUMULATING)
        if isinstance(parent, (ast.keyword, ast.FormattedValue, ast.Dict)) or _argument_of(node, parent):
            return self._in_sink(node, parent)
        if bound and isinstance(parent, ast.Assign) and len(parent.targets) == 1 and parent.value is node:
            target = parent.targets[0]
            return isinstance(target, ast.Name) and self._reads_qualify(parent, target.id)
        return False

    def _climb(self, node: ast.AST) -> Tuple[ast.AST, Optional[ast.AST]]:
        parent = self._parents.get(id(node))
        while isinstance(parent, ast.UnaryOp) or (isinstance(parent, ast.BinOp) and isinstance(parent.op, _ARITHMETIC)):
            node, parent = parent, self._parents.get(id(parent))
        return node, parent

    def _in_sink(self, node: ast.AST, parent: ast.AST) -> bool:
        """A value inside a logging call's arguments: directly, as a keyword, in an f-string or a dict literal."""
        while isinstance(parent, (ast.keyword, ast.FormattedValue, ast.JoinedStr, ast.Dict)):
            node, parent = parent, self._parents.get(id(parent))
        return _argument_of(node, parent) and _is_sink(parent)

    def _reads_qualify(self, assignment: ast.Assign, name: str) -> bool:
        scope = self._scope_of(assignment)
        names = self._names.get(id(scope))
        if names is None:
            names = self._names[id(scope)] = _names_in(scope)
        bindings, reads = names.get(name, (0, []))
        return bindings == 1 and bool(reads) and all(self._qualifies(read, bound=False) for read in reads)

    def _scope_of(self, node: ast.AST) -> ast.AST:
        parent = self._parents.get(id(node))
        while parent is not None and not isinstance(parent, (*_FUNCTIONS, ast.Module)):
            parent = self._parents.get(id(parent))
        return parent if parent is not None else self.tree


def _callee(func: ast.AST) -> Optional[str]:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in _RECEIVERS:
        return func.attr
    return None


def _argument_of(node: ast.AST, parent: Optional[ast.AST]) -> bool:
    return isinstance(parent, ast.Call) and node is not parent.func


def _is_sink(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Name):
        return sink_function(func.id)
    if not isinstance(func, ast.Attribute):
        return False
    held = func.value
    receiver = held.id if isinstance(held, ast.Name) else held.attr if isinstance(held, ast.Attribute) else None
    return sink_method(func.attr, receiver)


def _names_in(scope: ast.AST) -> Dict[str, Tuple[int, List[ast.Name]]]:
    """Each name of a function's own code (nested scopes left out): how often it is bound, and its reads."""
    found: Dict[str, Tuple[int, List[ast.Name]]] = {}
    for node in ast_own_nodes(scope):
        if isinstance(node, ast.Name):
            bindings, reads = found.get(node.id, (0, []))
            if isinstance(node.ctx, ast.Load):
                reads.append(node)
            else:
                bindings += 1
            found[node.id] = (bindings, reads)
    return found
