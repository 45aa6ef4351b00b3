"""The classes of one file as the stdlib ast shows them, for every file, parsed by LibCST
or not: each class's bases, methods and the evidence its body gives of being a module
or a LightningModule, and the methods each method calls on `self`. The project pass
resolves bases across files from these facts: they are the `classes` and `self_calls`
of each file's record (`torchlint.index.record`), and the project pass builds one
`torchlint.analysis.hot_paths.Reach` from all of them
(`torchlint.index.project.ProjectIndex.reach`).

Cost: linear in the file: one pass over each class body and one `ast_own_nodes` walk per
method (a method name's self-calls are kept as a list with a membership test, O(k²) in
the k distinct `self.` calls made under one method name: small). A method (and a
function, for the classes it holds) kept from the text's previous version is not walked
again (`SourceView.memo`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple

from torchlint.analysis.classes import ast_class_methods, ast_self_attribute, ast_self_name
from torchlint.analysis.modules import ClassFacts, Kind, ast_bases, resolve_base, root_kind
from torchlint.analysis.names import ast_dotted_name, resolve
from torchlint.analysis.periodic_calls import ast_defaulting_to_one
from torchlint.analysis.scopes import ast_own_nodes
from torchlint.analysis.training_loops import ast_training_call
from torchlint.core.walk import blocks
from torchlint.analysis.module_names import is_package, module_name

# calls on `self` that only a LightningModule has (a LightningDataModule has `self.trainer` too)
_LIGHTNING_SELF_CALLS = frozenset({"log", "log_dict", "manual_backward", "optimizers", "lr_schedulers", "toggle_optimizer"})
# calls on `self` that only an nn.Module has
_MODULE_SELF_CALLS = frozenset({"register_buffer", "register_parameter", "register_module", "add_module"})


SUBMODULE_CALL = ":"  # `pkg.heads.ActionHead:loss_fn`, a method called on an attribute built in `__init__`


def submodule_call(class_name: str, method: str) -> str:
    """How `self_calls` records a method called on an attribute holding an instance of
    `class_name`: the walk goes on in that class."""
    return f"{class_name}{SUBMODULE_CALL}{method}"


@dataclass(frozen=True)
class ClassGraph:
    """One file's classes (with the evidence of what a class's body shows it to be) and
    `self_calls` (class -> method -> the methods it calls on `self` or hands to a call as
    `self.method`, and `Class:method` for a
    method called on an attribute `__init__` builds as `Class(...)`)."""

    classes: Tuple[ClassFacts, ...]
    self_calls: Mapping[str, Mapping[str, List[str]]]
    # class -> attribute -> the classes `__init__` builds there (`self.head = ActionHead(...)`)
    held: Mapping[str, Mapping[str, List[str]]] = field(default_factory=dict)
    # class -> method -> those of its `self_calls` it makes only now and then (`periodic_calls`)
    periodic_calls: Mapping[str, Mapping[str, List[str]]] = field(default_factory=dict)


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _classes_within(body: Sequence[ast.stmt]) -> List[ast.ClassDef]:
    """The classes in these statements' blocks (a function's, at any depth, in order), not
    those in the classes found."""
    found: List[ast.ClassDef] = []
    for statement in body:
        if isinstance(statement, ast.ClassDef):
            found.append(statement)
        else:
            for block in blocks(statement):
                found.extend(_classes_within(block))
    return found


def class_graph(view) -> ClassGraph:
    """The class graph of one file, from its stdlib ast. Computed once per file
    (`FileAnalysis.class_graph`) and shared by rules."""
    return view.analysis.class_graph


class ClassGraphBuilder:
    """Builds `class_graph` from a file's view."""

    def __init__(self, view) -> None:
        self.tree = view.tree
        self.table = view.imports
        self.module = module_name(view.path)
        self.package = is_package(view.path)
        self.top_level = {node.name for node in self.tree.body if isinstance(node, ast.ClassDef)}
        self.classes: List[ClassFacts] = []
        self.calls: Dict[str, Dict[str, List[str]]] = {}
        self.held: Dict[str, Dict[str, List[str]]] = {}
        self.periodic: Dict[str, Dict[str, List[str]]] = {}
        self.memo = view.memo
        self.analysis = view.analysis
        # what a method's facts read besides its own code and its class's `__init__`
        self.context = (self.module, self.package, frozenset(self.top_level), tuple(self.table.items()))

    def build(self) -> ClassGraph:
        self._collect(self.tree.body, "")
        return ClassGraph(tuple(self.classes), self.calls, self.held, self.periodic)

    def _collect(self, body: Sequence[ast.stmt], prefix: str) -> None:
        # classes in functions and blocks are named as if at this level (as FileClasses does)
        for statement in body:
            if isinstance(statement, ast.ClassDef):
                self._class(statement, prefix)
            elif isinstance(statement, _FUNCTIONS):
                function = statement
                for klass in self.memo.result(function, "classes", None, lambda: _classes_within(function.body)):
                    self._class(klass, prefix)
            else:
                for block in blocks(statement):
                    self._collect(block, prefix)

    def _class(self, node: ast.ClassDef, prefix: str) -> None:
        qualname = prefix + node.name
        self._add(node, f"{self.module}.{qualname}" if self.module else qualname)
        self._collect(node.body, qualname + ".")

    def _add(self, node: ast.ClassDef, name: str) -> None:
        bases = ast_bases(node, self.table, self.module, self.package, self.top_level)
        functions = ast_class_methods(node)
        calls: Dict[str, List[str]] = {}
        steady: Dict[str, Set[str]] = {}  # method name -> what it calls somewhere outside a periodic branch
        self_calls: Set[str] = set()
        layers = False
        held, bound = self._init_attributes(functions)
        for function in functions:
            instance = ast_self_name(function)
            if instance is None:
                continue
            called, periodic, builds_layers = self.memo.result(
                function, "self_calls", (instance, held, bound, self.context),
                lambda: self._self_calls(function, instance, held, bound),
            )
            layers = layers or builds_layers
            self_calls.update(called)
            if called:
                calls.setdefault(function.name, [])
                calls[function.name].extend(c for c in dict.fromkeys(called) if c not in calls[function.name])
                steady.setdefault(function.name, set()).update(c for c in called if c not in periodic)
        evidence = []
        if layers or self_calls & _MODULE_SELF_CALLS:
            evidence.append("module")
        if self_calls & _LIGHTNING_SELF_CALLS:
            evidence.append("lightning")
        facts = ClassFacts(name, tuple(bases), tuple(f.name for f in functions), tuple(evidence))
        self.classes.append(facts)
        if held:
            self.held[name] = held
        if calls:
            self.calls[name] = calls
        periodic_calls = {
            method: now_and_then for method, callees in calls.items()
            if (now_and_then := [callee for callee in callees if callee not in steady[method]])
        }
        if periodic_calls:
            self.periodic[name] = periodic_calls

    def _self_calls(self, function, instance: str, held, bound) -> Tuple[List[str], FrozenSet[str], bool]:
        """The methods `function` calls on `self` (`_add`), those of them it calls only in periodic
        branches (`periodic_call_ids`), and whether, an `__init__`, it sets a torch.nn layer on `self`.
        Cost: one walk of the function's own code, and `FileAnalysis.periodic_sites`' if it calls any."""
        called = []
        steady: Set[str] = set()
        periodic_sites: Optional[FrozenSet[int]] = None
        layers = False
        for inner in ast_own_nodes(function):
            if isinstance(inner, ast.Call):
                before = len(called)
                attribute = ast_self_attribute(inner.func, instance)
                if attribute is not None:
                    called.append(attribute)
                    called.extend(bound.get(attribute, ()))  # `self.loss_method(...)` set to `self.mat_loss`
                elif isinstance(inner.func, ast.Attribute):  # `self.head.loss_fn(...)`
                    holder = ast_self_attribute(inner.func.value, instance)
                    called.extend(submodule_call(built, inner.func.attr) for built in held.get(holder, ()))
                # a method handed to a call runs there (`redirect(model, self._compute_loss, batch)`)
                for argument in (*inner.args, *(keyword.value for keyword in inner.keywords)):
                    passed = ast_self_attribute(argument, instance)
                    if passed is not None:
                        called.append(passed)
                if len(called) > before:
                    if periodic_sites is None:
                        periodic_sites = self.analysis.periodic_sites(
                            function, function.body, self.trains, ast_defaulting_to_one(function)
                        )
                    if id(inner) not in periodic_sites:
                        steady.update(called[before:])
            elif isinstance(inner, ast.Assign) and function.name == "__init__" and not layers:
                layers = any(ast_self_attribute(t, instance) for t in inner.targets) and self._builds_layer(inner.value)
        return called, frozenset(callee for callee in called if callee not in steady), layers

    def trains(self, call: ast.Call) -> bool:
        return ast_training_call(call, self.table)

    def _init_attributes(self, functions) -> Tuple[Dict[str, List[str]], Dict[str, List[str]]]:
        """What `__init__` sets on `self`: `self.attr = Class(...)`, attr -> the absolute names of
        the classes built there (resolved as bases are); and `self.attr = self.method` (also
        `self.a if flag else self.b`), attr -> the methods it may hold. Cost: one walk of `__init__`."""
        held: Dict[str, List[str]] = {}
        bound: Dict[str, List[str]] = {}
        for function in functions:
            instance = ast_self_name(function)
            if function.name != "__init__" or instance is None:
                continue
            own_held, own_bound = self.memo.result(
                function, "init_attributes", (instance, self.context),
                lambda: self._set_in_init(function, instance),
            )
            for attribute, built in own_held.items():
                held.setdefault(attribute, []).extend(built)
            for attribute, methods in own_bound.items():
                bound.setdefault(attribute, []).extend(methods)
        return held, bound

    def _set_in_init(self, function, instance: str) -> Tuple[Dict[str, List[str]], Dict[str, List[str]]]:
        """`_init_attributes` of one `__init__`."""
        held: Dict[str, List[str]] = {}
        bound: Dict[str, List[str]] = {}
        for inner in ast_own_nodes(function):
            if not isinstance(inner, ast.Assign):
                continue
            attributes = [ast_self_attribute(target, instance) for target in inner.targets]
            if isinstance(inner.value, ast.Call):
                built = resolve_base(
                    ast_dotted_name(inner.value.func), self.table, self.module, self.package, self.top_level
                )
                for attribute in attributes:
                    if attribute is not None and built is not None:
                        held.setdefault(attribute, []).append(built)
                continue
            choices = [inner.value.body, inner.value.orelse] if isinstance(inner.value, ast.IfExp) else [inner.value]
            methods = [method for method in (ast_self_attribute(c, instance) for c in choices) if method is not None]
            for attribute in attributes:
                if attribute is not None and methods:
                    bound.setdefault(attribute, []).extend(methods)
        return held, bound

    def _builds_layer(self, value: ast.AST) -> bool:
        """`nn.Linear(...)`, `nn.Parameter(...)`, `nn.ModuleList([...])`: a torch.nn class."""
        if not isinstance(value, ast.Call):
            return False
        qualified = resolve(ast_dotted_name(value.func), self.table)
        if qualified is None:
            return False
        is_parameter = qualified.startswith("torch.nn") and qualified.endswith(".Parameter")
        return is_parameter or root_kind(qualified) is Kind.MODULE
