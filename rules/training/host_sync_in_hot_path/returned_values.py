"""Whether the callers of a function only record, sum or drop the number it returns: then a step
function's `return loss.item()` syncs for nothing a tensor could not do (`total += train_step(b)`).

Only the calls this file shows are read: a module function called by name, a method called on `self`
or `cls`, or on an instance of its class the file builds (`self.trainer = Trainer(...)`, then
`self.trainer.update(batch)`; `agent = Agent(...)`, then `agent.learn()`); a function none of them calls
here is not known (its callers may need the number). A call's result qualifies when it is dropped (an
expression statement), summed (`total += f(x)`, also through arithmetic), handed to a logging call or
`print` (also in an f-string or a dict literal there), stored in an item or an attribute (`losses[i] = f(x)`,
`self.last = f(x)`), or bound to a name, or unpacked to names
(`loss, acc = step(b)`), each bound once in its function and every read of each one of those.

Cost: `called_here` and `only_recorded` read the view's calls and assignments, indexed once; `only_recorded`
per name O(its calls and the reads of the names they are bound to), with one walk (for the parents) of each
function holding such a call (of the whole file for a call outside any function), each function's names
indexed once. Linear in the file.
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from torchlint.analysis.names import ast_last_name
from torchlint.analysis.scopes import ast_own_nodes, owned_nodes
from torchlint.core.walk import ast_children, ast_nodes
from torchlint.rules.training.host_sync_in_hot_path.reporting_routines import reporting_routines, reports
from torchlint.rules.training.host_sync_in_hot_path.value_uses import SELF_RECEIVERS

_ACCUMULATING = (ast.Add, ast.Sub)
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv)
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
        # (method name, holder) -> its calls on the object kept there (`self.trainer.update(b)`: ("attribute",
        # "trainer")); class name -> the holders of the instances the file builds of it (`n = Class(...)`: ("name",
        # "n"); `self.a = Class(...)`: ("attribute", "a"))
        self._held_calls: Optional[Dict[Tuple[str, Tuple[str, str]], List[ast.Call]]] = None
        self._instances: Optional[Dict[str, Set[Tuple[str, str]]]] = None
        # (name, holder or None for the calls by name and on `self` / `cls`) -> (any call, each one qualifies)
        self._calls_verdicts: Dict[Tuple[str, Optional[Tuple[str, str]]], Tuple[bool, bool]] = {}
        self._verdicts: Dict[Tuple[str, Optional[str]], bool] = {}
        self._names: Dict[int, Dict[str, Tuple[int, List[ast.Name]]]] = {}
        self._routines: Optional[FrozenSet[str]] = None

    @property
    def routines(self) -> FrozenSet[str]:
        """The file's own functions and methods that only report what they are given (`reporting_routines`)."""
        if self._routines is None:
            definitions = self._view.nodes_of(*_FUNCTIONS) if self.tree is not None else ()
            self._routines = reporting_routines(definitions)
        return self._routines

    def only_recorded(self, name: str, class_name: Optional[str] = None) -> bool:
        """Whether the function (or, with `class_name`, the method of that class) `name` has calls here
        and each of them only records, sums or drops what it returns. Each group of calls (by name and on
        `self`, on one holder of instances) is judged once, whatever the classes that ask."""
        key = (name, class_name)
        if key not in self._verdicts:
            called, qualify = self._calls_verdict(name, None)
            for holder in self._holders(class_name):
                held_called, held_qualify = self._calls_verdict(name, holder)
                called, qualify = called or held_called, qualify and held_qualify
            self._verdicts[key] = called and qualify
        return self._verdicts[key]

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

    def _calls_verdict(self, name: str, holder: Optional[Tuple[str, str]]) -> Tuple[bool, bool]:
        """For the calls of `name` by name and on `self` / `cls` (`holder` None), or on the instance kept at
        `holder`: whether there are some, and whether each one qualifies."""
        key = (name, holder)
        if key not in self._calls_verdicts:
            calls = self._calls_by_callee().get(name, []) if holder is None else self._held_calls.get(key, [])
            self._know_parents(calls)
            self._calls_verdicts[key] = (bool(calls), all(self._qualifies(call, bound=True) for call in calls))
        return self._calls_verdicts[key]

    def _holders(self, class_name: Optional[str]) -> Set[Tuple[str, str]]:
        """Where the file keeps the instances of `class_name` it builds, indexed (with the method calls on
        such holders) on the first question."""
        if class_name is None:
            return set()
        if self._instances is None:
            self._held_calls, self._instances = {}, {}
            for node in self._view.nodes_of(ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute) and not (
                    isinstance(func.value, ast.Name) and func.value.id in SELF_RECEIVERS
                ):
                    holder = _holder(func.value)
                    if holder is not None:
                        self._held_calls.setdefault((func.attr, holder), []).append(node)
            for assignment in self._view.nodes_of(ast.Assign):
                built = _built_class(assignment.value)
                if built is not None:
                    self._instances.setdefault(built, set()).update(filter(None, map(_holder, assignment.targets)))
        return self._instances.get(class_name, set())

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
        if isinstance(parent, ast.Assign) and parent.value is node and all(map(_kept, parent.targets)):
            return True  # stored for a record: `iter_losses[i] = loss`, `self.last_loss = loss`
        if bound and isinstance(parent, ast.Assign) and len(parent.targets) == 1 and parent.value is node:
            target = parent.targets[0]
            if isinstance(target, (ast.Tuple, ast.List)):  # `loss, acc = step(b)`: a name read nowhere drops its part
                return all(isinstance(part, ast.Name) for part in target.elts) and all(
                    self._reads_qualify(parent, part.id, read=False) for part in target.elts
                )
            return isinstance(target, ast.Name) and self._reads_qualify(parent, target.id)
        return False

    def _climb(self, node: ast.AST) -> Tuple[ast.AST, Optional[ast.AST]]:
        parent = self._parents.get(id(node))
        while isinstance(parent, ast.UnaryOp) or (isinstance(parent, ast.BinOp) and isinstance(parent.op, _ARITHMETIC)):
            node, parent = parent, self._parents.get(id(parent))
        return node, parent

    def _in_sink(self, node: ast.AST, parent: ast.AST) -> bool:
        """A value inside a logging call's arguments: directly, as a keyword, in an f-string, a dict literal or
        the arguments of a string's `format` (`logger.info(fmt.format(step, loss))`)."""
        while True:
            while isinstance(parent, (ast.keyword, ast.FormattedValue, ast.JoinedStr, ast.Dict)):
                node, parent = parent, self._parents.get(id(parent))
            if not _argument_of(node, parent):
                return False
            if not _string_format(parent):
                return reports(parent, self.routines)
            node, parent = parent, self._parents.get(id(parent))

    def _reads_qualify(self, assignment: ast.Assign, name: str, read: bool = True) -> bool:
        """Whether `name`, bound once in its function (here), is only read where a value qualifies;
        `read`: and is read somewhere."""
        scope = self._scope_of(assignment)
        names = self._names.get(id(scope))
        if names is None:
            names = self._names[id(scope)] = _names_in(scope)
        bindings, reads = names.get(name, (0, []))
        return bindings == 1 and (bool(reads) or not read) and all(self._qualifies(use, bound=False) for use in reads)

    def _scope_of(self, node: ast.AST) -> ast.AST:
        parent = self._parents.get(id(node))
        while parent is not None and not isinstance(parent, (*_FUNCTIONS, ast.Module)):
            parent = self._parents.get(id(parent))
        return parent if parent is not None else self.tree


def _callee(func: ast.AST) -> Optional[str]:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in SELF_RECEIVERS:
        return func.attr
    return None


def _built_class(value: ast.AST) -> Optional[str]:
    """The name of the class `value` calls (`Trainer(...)`, `models.Trainer(...)`), if capitalised as classes are."""
    name = ast_last_name(value.func) if isinstance(value, ast.Call) else None
    return name if name is not None and name.lstrip("_")[:1].isupper() else None


def _holder(target: ast.AST) -> Optional[Tuple[str, str]]:
    """Where an assignment target (or a call's receiver) keeps a value: a name, or an attribute (of any object)."""
    if isinstance(target, ast.Name):
        return ("name", target.id)
    if isinstance(target, ast.Attribute):
        return ("attribute", target.attr)
    return None


def _kept(target: ast.AST) -> bool:
    """An assignment target where a value is kept for a record (`value_uses._kept` of the stdlib ast): an item,
    or an attribute of a name."""
    return isinstance(target, ast.Subscript) or (
        isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
    )


def _argument_of(node: ast.AST, parent: Optional[ast.AST]) -> bool:
    return isinstance(parent, ast.Call) and node is not parent.func


def _string_format(call: ast.Call) -> bool:
    """`text.format(...)` of a string literal or a name (a format string kept in a variable)."""
    func = call.func
    return (
        isinstance(func, ast.Attribute) and func.attr == "format" and isinstance(func.value, (ast.Constant, ast.Name))
    )


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
