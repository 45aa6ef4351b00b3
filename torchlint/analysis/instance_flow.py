"""Module instances that flow into function parameters, across the files of the linted
tree (TL004), from the stdlib ast.

Per file (`instance_flow`): each call of a function of the linted tree, with what its
arguments carry, and what each module-level function returns. A value is a set of
sources: the absolute dotted name of a class, function or module-level object
(`pkg.models.Critic` for `Critic()`, `critic` after `critic = Critic().cuda()`,
`self.critic` after `self.critic = Critic()`), or `param:NAME`, a parameter of the
function making the call, which the project pass follows on to that function's callers.
The facts are typed in `torchlint.analysis.flow_facts`;
`torchlint.analysis.flow_graph.InstanceFlow.instances_into` then answers, for the whole
tree, which sources reach a parameter.

Cost: `build` is one pass over the file's calls and flow statements (`owned_nodes`) and
one `_collect` per function; a name's sources are expanded once per function (per query
for `bound_sources`), to depth `FLOW_DEPTH`. `bound_sources` collects a function once
and keeps it for the next queries (O(function) once, then O(the names the queried
expression reaches) per query).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Set, Tuple

from torchlint.analysis.classes import ast_class_methods, ast_self_attribute, ast_self_name
from torchlint.analysis.flow_facts import FlowArgument, FlowCall, FlowFacts, FlowFunction
from torchlint.analysis.names import ast_dotted_name, module_level_ast_statements, resolve
from torchlint.analysis.scopes import owned_nodes
from torchlint.analysis.module_names import absolute_import, is_package, module_name

PARAM = "param:"
# methods that hand back their receiver (or a copy of the same model)
_SAME_MODEL_METHODS = frozenset(
    {"to", "cuda", "cpu", "train", "eval", "float", "double", "half", "bfloat16", "requires_grad_", "module"}
)
FLOW_DEPTH = 6
# and the calls that may call the tree
_FLOW_NODES = (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.Return, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)


def instance_flow(view) -> Optional[FlowFacts]:
    """The file's calls of functions of the tree, its module-level functions and, for a
    package `__init__`, its import table; None if the file has none of them. Built once per
    file (`FileAnalysis.instance_flow`) for the rules that record it (TL004, TL003, TL005)."""
    return view.analysis.instance_flow


def build_instance_flow(view) -> Optional[FlowFacts]:
    """`instance_flow`, computed."""
    builder = FlowBuilder(view)
    calls = [node for node in view.nodes_of(ast.Call) if _may_call_tree(node, view)]
    if calls or is_package(view.path):
        facts = builder.build(calls)
    else:  # no call of anything the tree may define: its functions' parameters suffice
        facts = FlowFacts((), builder.parameters(), {})
    return facts if facts.calls or facts.functions or facts.exports else None


def bound_flow(view) -> "FlowBuilder":
    """A flow builder that answers `bound_sources` for the file's every function."""
    builder = FlowBuilder(view)
    builder.owned = owned_nodes(view, view.nodes_of(*_FLOW_NODES))
    return builder


def _parameters(function) -> List[str]:
    arguments = function.args
    return [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]


def _may_call_tree(call: ast.Call, view) -> bool:
    """Whether a call's function may be one the linted tree defines: imported from a
    module outside torch and the standard library, or a name of the file's top level."""
    func = call.func
    while isinstance(func, ast.Attribute):
        func = func.value
    if not isinstance(func, ast.Name):
        return False
    imported = view.imports.get(func.id)
    return not outside_tree(imported) if imported is not None else func.id in view.analysis.top_level_names


def top_level_names(tree: ast.Module) -> Set[str]:
    """The names a module's top-level statements bind."""
    return {name for node in tree.body for name in _ast_bound_names(node)}


class FlowBuilder:
    def __init__(self, view) -> None:
        self.tree = view.tree
        self.table = view.imports
        self.module = module_name(view.path)
        self.package = is_package(view.path)
        self.top = view.analysis.top_level_names
        self.view = view
        self.owned: Dict[Optional[ast.AST], List[ast.AST]] = {}
        self.module_assigns: Dict[str, List[ast.AST]] = {}
        for node in module_level_ast_statements(self.tree):
            pairs = [pair for target in node.targets for pair in bound_values(target, node.value)] if isinstance(
                node, ast.Assign
            ) else loop_and_with_values(node)
            for name, value in pairs:
                self.module_assigns.setdefault(name, []).append(value)
        self.calls: List[FlowCall] = []
        self.functions: Dict[str, FlowFunction] = {}
        self._cache: Dict[Tuple[str, str], Set[str]] = {}  # one function's names
        self._owners: Dict[int, Tuple[ast.ClassDef, Dict[str, List[ast.AST]]]] = {}
        self._module_cache: Dict[Tuple[str, str], Set[str]] = {}
        # (id(function), instance) -> (function, what `_collect` found): a function is
        # collected once, however many `bound_sources` ask about it
        self._collected: Dict[Tuple[int, Optional[str]], Tuple[Any, tuple]] = {}

    def build(self, calls: List[ast.Call]) -> FlowFacts:
        """`calls`: those of the file that may call a function of the tree."""
        exports = dict(self.table) if self.package else {}
        self.owned = owned_nodes(self.view, [*calls, *self.view.nodes_of(*_FLOW_NODES)])
        self._collected = {}
        self._calls([node for node in self.owned.get(None, ()) if type(node) is ast.Call], None, "")
        for node in self.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._function(node, self._collect(node, None), None)
            elif isinstance(node, ast.ClassDef):
                methods, attrs = self._class_methods(node)
                for method, collected in methods:
                    self._function(method, collected, (node, attrs))
        return FlowFacts(tuple(self.calls), self.functions, exports)

    def _class_methods(self, node: ast.ClassDef):
        """Each method with what `_collect` finds in it, and every method's `self.<attr> =
        ...` values together: any method may read any attribute."""
        methods = [(method, self._collect(method, ast_self_name(method))) for method in ast_class_methods(node)]
        attrs: Dict[str, List[ast.AST]] = {}
        for _, collected in methods:
            for name, values in collected[3].items():
                attrs.setdefault(name, []).extend(values)
        return methods, attrs

    def bound_sources(self, expression: ast.AST, function, class_node: Optional[ast.ClassDef]) -> Set[str]:
        """What a name or `self.<attr>` bound in the code of `function` (None: the module's
        own code; a method of `class_node`) holds: the absolute names of the classes and
        functions of the tree it is built by, or `param:NAME@OWNER` for a parameter of the
        module-level function (`OWNER`, whose callers the project pass follows). A class named directly
        (`Focal(...)` is a construction, not a call of an instance) holds nothing here.

        Cost: the function is collected once for all queries (O(function)); a query
        expands each name it reaches once, at most `FLOW_DEPTH` deep."""
        scope = None
        if function is not None:
            collected = self._collect(function, ast_self_name(function) if class_node is not None else None)
            owner = None
            if class_node is not None:
                owner = self._owners.get(id(class_node))
                if owner is None:
                    owner = self._owners[id(class_node)] = (class_node, self._class_methods(class_node)[1])
            scope = _FlowScope(set(_parameters(function)), collected[0], owner, ast_self_name(function) if owner else None)
        head = ast_dotted_name(expression)
        if head is None:
            return set()
        first = head.split(".")[0]
        bound = first in self.module_assigns or (scope is not None and (first in scope.assigns or first == scope.instance))
        if not bound:
            if scope is not None and class_node is None and head == first and first in scope.params:
                return {f"{PARAM}{first}@{self._qualify(function.name)}"}  # the tree's calls of a function
            return set()
        self._cache = {}
        return {source for source in self._sources(expression, scope, 0) if not source.startswith(PARAM)}

    def parameters(self) -> Dict[str, FlowFunction]:
        """`functions` without walking any body: each module-level function's parameters."""
        return {
            self._qualify(node.name): FlowFunction(tuple(_parameters(node)), ())
            for node in self.tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        }

    def _qualify(self, local: str) -> str:
        return f"{self.module}.{local}" if self.module else local

    def _collect(self, function, instance: Optional[str]) -> Tuple[Dict[str, List[ast.AST]], List[ast.AST], List[ast.Call], Dict]:
        """A function's local assignments, returns, calls and (for a method)
        `self.<attr>` assignments: collected once per (function, instance), O(function)."""
        key = (id(function), instance)
        known = self._collected.get(key)
        if known is not None and known[0] is function:
            return known[1]
        collected = self._collect_once(function, instance)
        self._collected[key] = (function, collected)
        return collected

    def _collect_once(self, function, instance: Optional[str]) -> Tuple[Dict[str, List[ast.AST]], List[ast.AST], List[ast.Call], Dict]:
        assigns: Dict[str, List[ast.AST]] = {}
        returns: List[ast.AST] = []
        calls: List[ast.Call] = []
        attrs: Dict[str, List[ast.AST]] = {}
        for node in self.owned.get(function, ()):
            kind = type(node)
            if kind is ast.Call:
                calls.append(node)
            elif kind is ast.Assign:
                for target in node.targets:
                    attribute = ast_self_attribute(target, instance) if instance is not None else None
                    if attribute is not None:
                        attrs.setdefault(attribute, []).append(node.value)
                    for name, value in bound_values(target, node.value):
                        assigns.setdefault(name, []).append(value)
            elif kind in (ast.AnnAssign, ast.NamedExpr) and type(node.target) is ast.Name:
                if node.value is not None:
                    assigns.setdefault(node.target.id, []).append(node.value)
            elif kind is ast.Return and node.value is not None:
                returns.append(node.value)
            elif kind in (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith):
                for name, value in loop_and_with_values(node):
                    assigns.setdefault(name, []).append(value)
        return assigns, returns, calls, attrs

    def _function(self, function, collected, owner) -> None:
        assigns, returns, calls, _ = collected
        params = _parameters(function)
        local = function.name if owner is None else f"{owner[0].name}.{function.name}"
        scope = _FlowScope(set(params), assigns, owner, ast_self_name(function) if owner else None)
        self._cache = {}
        self._calls(calls, scope, local)
        if owner is None:
            sources: Set[str] = set()
            for value in returns:
                sources |= self._sources(value, scope, 0)
            self.functions[self._qualify(local)] = FlowFunction(tuple(params), tuple(sorted(sources)))

    def _calls(self, calls: List[ast.Call], scope, local: str) -> None:
        for node in calls:
            callee = self._name(ast_dotted_name(node.func), scope)
            if callee is None:
                continue
            args = []
            for index, arg in enumerate(node.args):
                if isinstance(arg, ast.Starred):
                    break
                args.append(FlowArgument(index, tuple(sorted(self._sources(arg, scope, 0)))))
            for keyword in node.keywords:
                if keyword.arg:  # an argument with no source still binds its parameter
                    args.append(FlowArgument(keyword.arg, tuple(sorted(self._sources(keyword.value, scope, 0)))))
            if args:
                self.calls.append(FlowCall(callee, self._qualify(local) if local else "", tuple(args)))

    def _name(self, dotted: Optional[str], scope) -> Optional[str]:
        """The absolute name a module-level dotted name stands for, if the tree may define it."""
        if not dotted:
            return None
        head = dotted.split(".")[0]
        if scope is not None and (head in scope.params or head in scope.assigns or head == scope.instance):
            return None
        resolved = resolve(dotted, self.table)
        if resolved is not None and resolved.startswith("."):
            resolved = absolute_import(self.module, self.package, resolved)
        elif resolved is None and head in self.top:
            resolved = self._qualify(dotted)
        if resolved is None or outside_tree(resolved):
            return None
        return resolved

    def _expand(self, key: Tuple[str, str], values, scope, depth: int) -> Set[str]:
        """The sources of a name's assigned values, each name expanded once per function
        (`h = layer(h)` fifty times over must not branch fifty ways at every step)."""
        cache = self._module_cache if key[0] == "module" else self._cache
        found = cache.get(key)
        if found is None:
            cache[key] = set()  # through itself, a name reaches nothing more
            found = set().union(*(self._sources(value, scope, depth + 1) for value in values))
            cache[key] = found
        return found

    def _sources(self, node, scope, depth: int) -> Set[str]:
        if depth > FLOW_DEPTH:
            return set()
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in _SAME_MODEL_METHODS:
                return self._sources(func.value, scope, depth + 1)
            node = func
        if isinstance(node, ast.Subscript):  # `critics[0]`: one of what the container holds
            return self._sources(node.value, scope, depth + 1)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return set().union(*(self._sources(element, scope, depth + 1) for element in node.elts))
        if isinstance(node, ast.Starred):
            return self._sources(node.value, scope, depth + 1)
        if isinstance(node, (ast.Name, ast.Attribute)):
            dotted = ast_dotted_name(node)
            if dotted is None:
                return set()
            head, _, rest = dotted.partition(".")
            if scope is not None:
                if scope.instance is not None and head == scope.instance and rest:
                    attribute = rest.split(".")[0]
                    return self._expand(("self", attribute), scope.owner[1].get(attribute, ()), scope, depth)
                if head in scope.assigns:
                    return self._expand(("local", head), scope.assigns[head], scope, depth)
                if head in scope.params:
                    return {PARAM + head} if not rest else set()
            if head in self.module_assigns:
                return self._expand(("module", head), self.module_assigns[head], None, depth)
            name = self._name(dotted, scope)
            return {name} if name else set()
        return set()


@dataclass
class _FlowScope:
    params: Set[str]
    assigns: Dict[str, List[ast.AST]]
    owner: Any  # (ClassDef, {attribute: assigned values}) for a method
    instance: Optional[str]


def bound_values(target: ast.AST, value: ast.AST) -> List[Tuple[str, ast.AST]]:
    """The names an assignment target binds, each with the expression it receives:
    element by element where the value is a tuple or list of matching shape (`critic, gen
    = Critic(), Gen()`; a starred name gets the rest as a list), else the whole value."""
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if isinstance(target, ast.Starred):
        return bound_values(target.value, value)
    if not isinstance(target, (ast.Tuple, ast.List)):
        return []
    names = target.elts
    stars = [i for i, name in enumerate(names) if isinstance(name, ast.Starred)]
    values = value.elts if isinstance(value, (ast.Tuple, ast.List)) else None
    if values is None or any(isinstance(v, ast.Starred) for v in values) or len(stars) > 1:
        return [pair for name in names for pair in bound_values(name, value)]
    if not stars:
        if len(values) != len(names):
            return [pair for name in names for pair in bound_values(name, value)]
        return [pair for name, item in zip(names, values) for pair in bound_values(name, item)]
    star, after = stars[0], len(names) - stars[0] - 1
    if len(values) < len(names) - 1:
        return [pair for name in names for pair in bound_values(name, value)]
    rest = ast.List(elts=values[star : len(values) - after], ctx=ast.Load())
    pairs = [pair for name, item in zip(names[:star], values[:star]) for pair in bound_values(name, item)]
    pairs += bound_values(names[star], rest)
    pairs += [pair for name, item in zip(names[star + 1 :], values[len(values) - after :]) for pair in bound_values(name, item)]
    return pairs


def loop_and_with_values(node: ast.AST) -> List[Tuple[str, ast.AST]]:
    """What a `for` target (`for critic in critics`, through `enumerate` and `zip`) and a
    `with ... as` name receive: the container (whose sources are its elements') or the
    context expression."""
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [pair for item in node.items if item.optional_vars is not None for pair in bound_values(item.optional_vars, item.context_expr)]
    if not isinstance(node, (ast.For, ast.AsyncFor)):
        return []
    target, iterable = node.target, node.iter
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.args and not iterable.keywords:
        if iterable.func.id == "enumerate" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            return bound_values(target.elts[1], iterable.args[0])
        if iterable.func.id == "zip" and isinstance(target, ast.Tuple) and len(target.elts) == len(iterable.args):
            return [pair for name, item in zip(target.elts, iterable.args) for pair in bound_values(name, item)]
    return bound_values(target, iterable)


def _ast_bound_names(node) -> List[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [name for target in node.targets for name, _ in bound_values(target, node.value)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def outside_tree(dotted: str) -> bool:
    """A name no linted module can define: PyTorch's or the standard library's."""
    head = dotted.split(".")[0]
    return head in ("torch", "functorch", "builtins") or head in getattr(sys, "stdlib_module_names", ())
