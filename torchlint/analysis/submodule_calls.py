"""Which arguments a module passes to its own submodules come out of its own layers
(stdlib ast, every file): `b1, b2 = self.encoder(x); return self.decoder(b1, b2)` hands
the decoder tensors whose widths the parent's own constructor fixed. TL002 reads these
facts in its project pass to tell a U-Net decoder's skip (internal to the parent) from
a tensor the caller of the whole model supplies.

Cost: O(file) to find the classes, assignments and `forward`s (classes sorted once by
line, each lookup a bisection), then per `forward` O(size of the method) times the
number of distinct entry states each loop is entered with (a loop runs its body twice
from an entry state; a loop entered again with a state it already ran from replays the
recorded outcome, whose key costs O(names bound) to build): linear when the nested loops
settle, as they do after a round, instead of the 2^depth walks of nested loops."""

from __future__ import annotations

import ast
import bisect
from typing import Dict, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

from torchlint.core.walk import ast_nodes

class SubmoduleCall(NamedTuple):
    """A call of a submodule built as `callee(...)`: whether each positional argument, a
    `*args` (None: none) and each keyword argument is an output of the caller's own layers."""

    callee: str
    positional: Tuple[bool, ...]
    star: Optional[bool]
    keywords: Mapping[str, bool]

    def to_json(self) -> list:
        return [self.callee, list(self.positional), self.star, dict(self.keywords)]

    @classmethod
    def from_json(cls, data: list) -> "SubmoduleCall":
        callee, positional, star, keywords = data
        return cls(callee, tuple(positional), star, keywords)


_BLOCKS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try) + (
    (ast.TryStar,) if hasattr(ast, "TryStar") else ()
)


def submodule_calls(view) -> List[SubmoduleCall]:
    """Every call `self.attr(...)` in a `forward` (or through `self.attr[i]`, or a name
    bound by iterating over `self.attr`) of an attribute built as `Class(...)` (also
    inside `nn.ModuleList([...])` / `nn.Sequential(...)`).
    An argument is internal when it is evidently an output of one of the caller's own
    layers; anything else (a parameter, a constant, an attribute) is not. `view` is a
    `SourceView`: its shared node index spares a walk of the tree per question."""
    if view.tree is None:
        return []
    attributes: Dict[ast.AST, Dict[str, Set[str]]] = {}
    classes = _Classes(view.nodes_of(ast.ClassDef))
    for node in view.nodes_of(ast.Assign):
        if isinstance(node.value, ast.Call):
            owner = classes.innermost(node.lineno)
            if owner is not None:
                for target in node.targets:
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                        built = _class_names(node.value)
                        if built:
                            attributes.setdefault(owner, {}).setdefault(target.attr, set()).update(built)
    found: Dict[tuple, SubmoduleCall] = {}  # in order of first recording, without repeats
    if not attributes:
        return []
    for function in view.nodes_of(ast.FunctionDef):
        if function.name != "forward" or not function.args.args:
            continue
        owner = classes.innermost(function.lineno)
        if owner in attributes:
            for call in _Method(function, attributes[owner]).calls:
                found.setdefault(_call_key(call), call)
    return list(found.values())


def _call_key(call: SubmoduleCall) -> tuple:
    """A hashable key equal for equal calls (`keywords` is a dict)."""
    return (call.callee, call.positional, call.star, tuple(sorted(call.keywords.items())))


class _Classes:
    """The innermost class whose lines hold a line. The classes are sorted by first line
    once, each knowing the nearest earlier-starting class that holds it (line ranges of
    classes nest); a lookup starts at the last class starting at or before the line and
    climbs those: O(log classes + nesting) instead of a scan of every class."""

    def __init__(self, classes) -> None:
        self._classes = sorted(classes, key=lambda node: node.lineno)
        self._starts = [node.lineno for node in self._classes]
        self._around: List[int] = []
        for index, node in enumerate(self._classes):
            around = index - 1
            while around >= 0 and not node.lineno <= _end(self._classes[around]):
                around = self._around[around]
            self._around.append(around)

    def innermost(self, line: int):
        """As a scan for the latest-starting class whose lines hold `line` (the first
        of the node order among those starting on the same line)."""
        index = bisect.bisect_right(self._starts, line) - 1
        while index >= 0 and not line <= _end(self._classes[index]):
            index = self._around[index]
        if index < 0:
            return None
        start = self._starts[index]
        while index > 0 and self._starts[index - 1] == start and line <= _end(self._classes[index - 1]):
            index -= 1
        return self._classes[index]


def _end(node) -> int:
    return node.end_lineno or node.lineno


def _own_expressions(statement) -> List[ast.AST]:
    """A statement's expressions, without those of the statements nested in it."""
    if isinstance(statement, _BLOCKS):
        return [
            getattr(statement, field)
            for field in ("test", "iter")
            if getattr(statement, field, None) is not None
        ] + [item.context_expr for item in getattr(statement, "items", ())]
    return [statement]


def _class_names(value: ast.AST) -> Set[str]:
    """The capitalised classes a constructor expression builds: `Up(...)`,
    `blocks.Up(...)`, `nn.ModuleList([Up(...) for ...])`."""
    names = set()
    for node in ast_nodes(value):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, (ast.Name, ast.Attribute)) and _torch_nn(func.value):
                continue  # nn.Conv2d(...): no class of the project
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name.lstrip("_")[:1].isupper() and name not in ("ModuleList", "Sequential", "ModuleDict"):
                names.add(name)
    return names


def _torch_nn(owner) -> bool:
    return (isinstance(owner, ast.Name) and owner.id == "nn") or (
        isinstance(owner, ast.Attribute) and owner.attr == "nn"
    )


class _Method:
    """Walks one method in source order: which names hold outputs of the instance's own
    layers, and the submodule calls with the internal-ness of their arguments. A name
    bound inside a branch or loop keeps an outside status it had (either path may run)."""

    def __init__(self, function, attributes: Dict[str, Set[str]]) -> None:
        self.instance = function.args.args[0].arg
        self.attributes = attributes
        self.internal: Set[str] = set()
        arguments = function.args
        self.bound: Set[str] = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
        self.layers: Dict[str, Set[str]] = {}  # loop names bound to layers: name -> classes
        self.calls: List[SubmoduleCall] = []
        # (loop, entry state) -> (exit state, the calls its rounds recorded, without repeats)
        self._loops: Dict[tuple, tuple] = {}
        self._block(function.body, nested=False)

    def _block(self, statements, nested: bool) -> None:
        for statement in statements:
            self._statement(statement, nested)

    def _statement(self, statement, nested: bool) -> None:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return
        for part in _own_expressions(statement):
            for node in ast.walk(part):
                if isinstance(node, ast.Call):
                    self._record(node)
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                self._bind(target, statement.value, nested)
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)) and statement.value is not None:
            self._bind(statement.target, statement.value, True)
        elif isinstance(statement, ast.Expr):
            self._grow(statement.value)
        elif isinstance(statement, (ast.For, ast.AsyncFor)):
            self._loop(statement)
        elif isinstance(statement, _BLOCKS):
            for field in ("body", "orelse", "finalbody"):
                self._block(getattr(statement, field, ()), True)
            for handler in getattr(statement, "handlers", ()):
                self._block(handler.body, True)

    def _loop(self, statement) -> None:
        """Two rounds of the body (a second round sees what the first bound), then the
        `else`. What they record and leave depends only on the state the loop is entered
        with: a loop entered again with the same state (a nested loop on the outer loop's
        second round, mostly) replays the outcome instead of walking its body again.

        Cost: O(body) per distinct entry state, plus O(names bound) for the state's key."""
        key = (id(statement), self._state())
        known = self._loops.get(key)
        if known is None:
            start = len(self.calls)
            for _ in range(2):
                self._iterate(statement.target, statement.iter)
                self._block(statement.body, True)
            self._block(statement.orelse, True)
            recorded: Dict[tuple, SubmoduleCall] = {}
            for call in self.calls[start:]:
                recorded.setdefault(_call_key(call), call)
            self.calls[start:] = recorded.values()
            known = self._loops[key] = (self._state(), list(self.calls[start:]))
        else:
            (internal, bound, layers), calls = known
            self.internal, self.bound = set(internal), set(bound)
            self.layers = {name: set(classes) for name, classes in layers}
            self.calls.extend(calls)

    def _state(self) -> tuple:
        return (
            frozenset(self.internal),
            frozenset(self.bound),
            frozenset((name, frozenset(classes)) for name, classes in self.layers.items()),
        )

    def _record(self, call: ast.Call) -> None:
        classes = self._layer_classes(call.func)
        if not classes:
            return
        positional, star = [], None
        for arg in call.args:
            if isinstance(arg, ast.Starred):
                star = self.holds(arg.value)
                break
            positional.append(self.holds(arg))
        keywords = {k.arg: self.holds(k.value) for k in call.keywords if k.arg is not None}
        if any(k.arg is None for k in call.keywords):
            star = False
        for name in sorted(classes):
            self.calls.append(SubmoduleCall(name, tuple(positional), star, keywords))

    def _layer_classes(self, func) -> Set[str]:
        while isinstance(func, ast.Subscript):
            func = func.value
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == self.instance:
            return self.attributes.get(func.attr, set())
        if isinstance(func, ast.Name):
            return self.layers.get(func.id, set())
        return set()

    def _is_layer(self, func) -> bool:
        while isinstance(func, ast.Subscript):
            func = func.value
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == self.instance:
            return True
        return isinstance(func, ast.Name) and func.id in self.layers

    def holds(self, node) -> bool:
        """Whether an expression is evidently built from the instance's own layers'
        outputs alone."""
        if isinstance(node, ast.Name):
            return node.id in self.internal
        if isinstance(node, (ast.Subscript, ast.Starred)):
            return self.holds(node.value)
        if isinstance(node, (ast.Tuple, ast.List)):
            return all(self.holds(element) for element in node.elts)
        if isinstance(node, ast.Call):
            if self._is_layer(node.func):
                return True
            if isinstance(node.func, ast.Attribute) and self.holds(node.func.value):
                return True  # skip.float(), feats[::-1].contiguous()
            operands = [arg for arg in node.args if not isinstance(arg, ast.Constant)]
            return bool(operands) and all(self.holds(arg) for arg in operands)
        return False

    def _bind(self, target, value, nested: bool) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            whole = self.holds(value)
            pairs = (
                zip(target.elts, value.elts)
                if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
                else ((element, None) for element in target.elts)
            )
            for element, part in pairs:
                self._set(element, self.holds(part) if part is not None else whole, nested)
            return
        self._set(target, self.holds(value), nested)

    def _set(self, target, internal: bool, nested: bool) -> None:
        if isinstance(target, ast.Starred):
            target = target.value
        if not isinstance(target, ast.Name):
            return
        name = target.id
        self.layers.pop(name, None)
        if not internal:
            self.internal.discard(name)
        elif not nested or name in self.internal or name not in self.bound:
            self.internal.add(name)
        self.bound.add(name)

    def _grow(self, call) -> None:
        """`skips.append(x)`: `skips` stays internal only if `x` is."""
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
            owner = call.func.value
            if isinstance(owner, ast.Name) and call.func.attr in ("append", "extend", "insert"):
                if not all(self.holds(arg) for arg in call.args if not isinstance(arg, ast.Constant)):
                    self.internal.discard(owner.id)

    def _iterate(self, target, iterable) -> None:
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and isinstance(target, (ast.Tuple, ast.List)):
            sources = iterable.args
            if iterable.func.id == "zip" and len(sources) == len(target.elts):
                for element, source in zip(target.elts, sources):
                    self._iterate(element, source)
                return
            if iterable.func.id == "enumerate" and len(target.elts) == 2 and sources:
                self._set(target.elts[0], False, True)
                self._iterate(target.elts[1], sources[0])
                return
        if isinstance(target, ast.Name):
            if self._is_self_attribute(iterable):  # `for up in self.ups`: a layer
                self.layers[target.id] = self._layer_classes(iterable)
                self.internal.discard(target.id)
                self.bound.add(target.id)
                return
        self._bind(target, iterable, True)

    def _is_self_attribute(self, node) -> bool:
        return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self.instance


def passes_own_outputs(call: SubmoduleCall, parameters: Sequence[Sequence]) -> bool:
    """Whether a recorded submodule call (`submodule_calls`) binds each of the
    callee's `[position, name]` parameters to an output of the caller's own layers (or
    leaves it to its default)."""
    _, positional, star, keywords = call
    for position, name in parameters:
        if position is not None and position < len(positional):
            internal = positional[position]
        elif position is not None and star is not None:
            internal = star
        else:
            internal = keywords.get(name, star is not False)
        if not internal:
            return False
    return True
