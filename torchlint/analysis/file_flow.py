"""Within one file, from LibCST: each function's scope, what it runs, and who calls it
(TL004).

`FileFlow` is a mixin for a rule's traversal: it records each function's scope (its
parameters, assignments, the names it reads and calls), each class's `self.<attr>`
values and methods, and the names each top-level definition reads; `_reach` then says
which top-level names, imported names and unresolved parameters a function runs.

Cost: recording is O(1) per node of the traversal. The calls are indexed as they are
recorded by the last part of their callee, so `_arguments_for` looks only at the calls
that may run the function asked about (O(k log k) for the k calls of that name); `_reach` expands each
(reference, scope, model) once, to depth `MAX_FLOW_DEPTH`; `_holders` is a worklist over
the top-level names by the names they read (the reverse index built once, after the
traversal).
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

from torchlint.analysis.call_arguments import bound_argument
from torchlint.analysis.classes import self_name
from torchlint.analysis.flow_scopes import (
    MAX_FLOW_DEPTH,
    MODULE_SCOPE,
    ClassScope,
    Reached,
    Scope,
    assign_targets,
    called_name,
    expression_refs,
)
from torchlint.analysis.instance_flow import outside_tree
from torchlint.analysis.names import cst_dotted_name, resolve
from torchlint.analysis.statements import assigned_names, parameter_names
from torchlint.core.lazy import cst
from torchlint.analysis.module_names import module_name


class FileFlow:
    """The in-file data flow, collected in the rule's own traversal (call `_start_flow`
    in `__init__`, `_record_call` in `visit_Call`; override `_assigned` to see every
    assignment target)."""

    def _start_flow(self) -> None:
        self._module = Scope(MODULE_SCOPE, None, None, None)
        self._scopes: List[Scope] = [self._module]
        self._all_scopes: List[Scope] = [self._module]
        self._scope_order: Dict[int, int] = {id(self._module): 0}  # id(scope) -> its index in _all_scopes
        # the last part of a callee (`step` of `self.step`) -> (scope index, call index,
        # caller, callee, call): the calls `_arguments_for` may find, in its order
        self._calls_by_last: Dict[str, List[Tuple[int, int, Scope, str, Any]]] = {}
        self._readers: Optional[Dict[str, List[str]]] = None  # `_holders`' reverse index
        self._classes: List[ClassScope] = []
        self._class_stack: List[ClassScope] = []
        self._kinds: List[Any] = []  # the enclosing classes and functions, innermost last
        self._top_refs: Dict[str, Set[str]] = {MODULE_SCOPE: set()}
        self._top: List[Set[str]] = []  # the top-level names being defined
        self._skip: Set[int] = set()
        self._targets: Dict[int, List[Any]] = {}  # id(assigned value) -> targets
        self._statements: List[Any] = []
        self._statement_top: Optional[Any] = None  # the module-level assignment being visited
        self._in_import = 0

    def _assigned(self, target, value) -> None:
        """Called for every assignment target; for subclasses."""

    def _record_call(self, node) -> None:
        callee = cst_dotted_name(node.func)
        scope = self._scope
        if callee:
            self._calls_by_last.setdefault(callee.rsplit(".", 1)[-1], []).append(
                (self._scope_order[id(scope)], len(scope.calls), scope, callee, node)
            )
            scope.calls.append((callee, node))
        called = called_name(node.func)
        if called:
            scope.called.add(called)

    @property
    def _scope(self) -> Scope:
        return self._scopes[-1]

    def _current_top(self) -> Set[str]:
        return self._top[-1] if self._top else {MODULE_SCOPE}

    def _ref(self, dotted: str) -> None:
        self._scope.refs.add(dotted)
        for top in self._current_top():
            self._top_refs.setdefault(top, set()).add(dotted)

    def visit_ClassDef(self, node) -> None:
        self._skip.add(id(node.name))
        top = self._current_top() if self._top else {node.name.value}
        info = ClassScope(node.name.value, node, set(top))
        self._classes.append(info)
        self._class_stack.append(info)
        self._kinds.append(info)
        self._top.append(info.top)
        self._top_refs.setdefault(node.name.value, set())

    def leave_ClassDef(self, node) -> None:
        self._class_stack.pop()
        self._kinds.pop()
        self._top.pop()

    def visit_FunctionDef(self, node) -> None:
        self._skip.add(id(node.name))
        owner = self._kinds[-1] if self._kinds and isinstance(self._kinds[-1], ClassScope) else None
        parent = self._scope
        scope = Scope(node.name.value, node, parent, owner, parameter_names(node))
        for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
            if param.default is not None:
                scope.defaults[param.name.value] = param.default
            if param.annotation is not None:
                scope.annotations[param.name.value] = param.annotation.annotation
        if owner is not None:
            scope.instance = self_name(node)
            owner.methods[node.name.value] = scope
        if self._top:
            self._top.append(set(self._current_top()))
        else:
            self._top.append({node.name.value})
            self._top_refs.setdefault(node.name.value, set())
        self._scopes.append(scope)
        self._scope_order[id(scope)] = len(self._all_scopes)
        self._all_scopes.append(scope)
        self._kinds.append(scope)

    def leave_FunctionDef(self, node) -> None:
        scope = self._scopes.pop()
        self._kinds.pop()
        self._top.pop()
        parent = self._scopes[-1]
        if parent.node is not None:
            # a closure's reads are its enclosing function's (minus the closure's own names)
            own = set(scope.params) | set(scope.assigns)
            parent.refs.update(ref for ref in scope.refs if ref.split(".")[0] not in own)
            parent.called.update(name for name in scope.called if name.split(".")[0] not in own)

    def visit_Param(self, node) -> None:
        self._skip.add(id(node.name))

    def visit_Arg(self, node) -> None:
        if node.keyword is not None:
            self._skip.add(id(node.keyword))

    def visit_Import(self, node) -> None:
        self._in_import += 1

    def leave_Import(self, node) -> None:
        self._in_import -= 1

    def visit_ImportFrom(self, node) -> None:
        self._in_import += 1

    def leave_ImportFrom(self, node) -> None:
        self._in_import -= 1

    def visit_Name(self, node) -> None:
        if self._in_import or id(node) in self._skip:
            return
        self._ref(node.value)

    def visit_Attribute(self, node) -> None:
        if self._in_import or id(node) in self._skip:
            return
        dotted = cst_dotted_name(node)
        if dotted is None:
            self._skip.add(id(node.attr))
            return
        self._ref(dotted)
        current = node
        while isinstance(current, cst.Attribute):
            self._skip.add(id(current))
            self._skip.add(id(current.attr))
            current = current.value
        self._skip.add(id(current))

    def visit_SimpleStatementLine(self, node) -> None:
        self._statements.append(node)
        if not self._top and not self._class_stack and self._scope is self._module:
            targets = set()
            for small in node.body:
                if isinstance(small, (cst.Assign, cst.AnnAssign)):
                    for target in assign_targets(small):
                        if isinstance(target, cst.Name):
                            targets.add(target.value)
            if targets:
                self._top.append(targets)
                for name in targets:
                    self._top_refs.setdefault(name, set())
                self._statement_top = node

    def leave_SimpleStatementLine(self, node) -> None:
        self._statements.pop()
        if self._statement_top is node:
            self._top.pop()
            self._statement_top = None

    def visit_SimpleStatementSuite(self, node) -> None:
        self._statements.append(node)

    def leave_SimpleStatementSuite(self, node) -> None:
        self._statements.pop()


    def _record_assign(self, targets, value) -> None:
        self._targets[id(value)] = targets
        scope = self._scope
        in_class_body = bool(self._kinds) and isinstance(self._kinds[-1], ClassScope)
        for target in targets:
            if not in_class_body:
                for name in assigned_names(target):
                    scope.assigns.setdefault(name, []).append(value)
            cls = scope.cls
            if (
                cls is not None
                and isinstance(target, cst.Attribute)
                and isinstance(target.value, cst.Name)
                and target.value.value == scope.instance
            ):
                cls.attrs.setdefault(target.attr.value, []).append((value, scope))
            self._assigned(target, value)

    def visit_Assign(self, node) -> None:
        self._record_assign([t.target for t in node.targets], node.value)

    def visit_AnnAssign(self, node) -> None:
        if node.value is not None:
            self._record_assign([node.target], node.value)

    # the other binding forms: what a `for` target, a walrus and a `with ... as` name receive
    def visit_For(self, node) -> None:
        self._record_assign([node.target], node.iter)

    def visit_NamedExpr(self, node) -> None:
        self._record_assign([node.target], node.value)

    def visit_WithItem(self, node) -> None:
        if node.asname is not None:
            self._record_assign([node.asname.name], node.item)


    def _call_offset(self, callee: str, caller: Scope, target: Scope) -> Optional[int]:
        """None if `callee` (called in `caller`) is not `target`; else how many leading
        parameters the call binds implicitly (1 for `self.method(...)`)."""
        if target.node is None:
            return None
        if target.cls is not None:
            if target.name == "__init__" and callee == target.cls.name:
                return 1  # ClassName(...) binds __init__'s parameters after self
            if caller.cls is target.cls and caller.instance and callee == f"{caller.instance}.{target.name}":
                return 1 if target.instance else 0
            return None
        if callee != target.name:
            return None
        scope = caller
        while scope is not None:
            if scope is target.parent:
                return 0
            scope = scope.parent
        return None

    def _arguments_for(self, target: Scope, param: str) -> Iterator[Tuple[Scope, Any]]:
        """(caller, argument expression or None if not passed) for each call of this file
        that runs `target`, whose parameter `param` it binds.

        Cost: O(k log k) for the k calls whose callee ends with the function's name (or
        its class's, for `__init__`), not every call of the file."""
        if param not in target.params or target.node is None:
            return
        index = target.params.index(param)
        # a call that runs `target` is named `target.name` (`f(...)`, `self.f(...)`) or,
        # for `__init__`, after its class: the calls with that last part, in the order of
        # a scan of every scope's calls
        candidates = list(self._calls_by_last.get(target.name, ()))
        if target.cls is not None and target.name == "__init__" and target.cls.name != target.name:
            candidates += self._calls_by_last.get(target.cls.name, ())
        candidates.sort(key=lambda entry: entry[:2])  # recorded in traversal order
        for _, _, caller, callee, call in candidates:
            offset = self._call_offset(callee, caller, target)
            if offset is not None:
                arg = bound_argument(call, param, index - offset)
                yield caller, (arg.value if arg is not None else None)

    def _reach(self, start: Scope, outputs=None, inputs=None) -> Reached:
        """What the code of `start` runs (`outputs`: the differentiated expression, all of
        whose graph counts; `inputs`: where that graph is cut)."""
        reach = Reached()
        seen: Set[Tuple[str, int]] = set()
        table = self.context.imports.table

        def expand(ref: str, scope: Scope, depth: int, model: bool = False) -> None:
            """`model`: the value flows into something called like a model."""
            key = (ref, id(scope), model)
            if key in seen or depth > MAX_FLOW_DEPTH:
                return
            seen.add(key)
            head, _, rest = ref.partition(".")
            if ref.rsplit(".", 1)[-1] in ("data", "detach"):
                return  # detached: no graph flows on
            if head in scope.called:
                model = True
            elif head == scope.instance and ".".join(ref.split(".")[:2]) in scope.called:
                model = True  # `self.disc[0](x)` runs what `self.disc` holds
            cls = scope.cls
            if cls is not None and scope.instance is not None and head == scope.instance:
                attr = rest.split(".")[0] if rest else None
                if attr is None:
                    reach.local.update(cls.top)
                elif attr in cls.attrs:
                    for value, owner in cls.attrs[attr]:
                        for inner in expression_refs(value):
                            expand(inner, owner, depth + 1, model)
                elif attr in cls.methods:
                    method = cls.methods[attr]
                    for inner in method.refs:
                        expand(inner, method, depth + 1)
                return
            if head in scope.params and scope.node is not None:
                # only a model is differentiated twice; the data a caller passes in is
                # differentiated once, whatever computed it
                annotation = self._tree_annotation(scope, head)
                if annotation:  # `critic: Critic` says what arrives
                    for inner in annotation:
                        expand(inner, scope, depth + 1, model)
                elif model and not upward(scope, head, depth, model):
                    reach.params.add((self._exported_name(scope), head))
                return
            if head in scope.assigns:
                if scope is self._module:
                    reach.local.add(head)
                for value in scope.assigns[head]:
                    for inner in expression_refs(value):
                        expand(inner, scope, depth + 1, model)
                return
            if scope.parent is not None:
                expand(ref, scope.parent, depth, model)
                return
            if head in self._top_names:
                reach.local.add(head)
                return
            qualified = resolve(ref, table)
            if qualified is not None:
                reach.imported.add(qualified)

        def upward(target: Scope, param: str, depth: int, model: bool) -> bool:
            found = False
            for caller, value in self._arguments_for(target, param):
                found = True
                for inner in expression_refs(value) if value is not None else ():
                    expand(inner, caller, depth + 1, model)
            return found

        if start is self._module:
            reach.local.add(MODULE_SCOPE)
        for ref in start.refs:
            expand(ref, start, 0)
        if outputs is not None:
            # everything that computed the differentiated tensor, up to `inputs`, is
            # differentiated twice, whether a model or a loss passed in by a caller
            cut = expression_refs(inputs) if inputs is not None else set()
            cut_heads = {ref.split(".")[0] for ref in cut}
            for ref in expression_refs(outputs):
                if ref.split(".")[0] not in cut_heads:
                    expand(ref, start, 0, True)
        return reach

    def _tree_annotation(self, scope: Scope, param: str) -> List[str]:
        """The names in a parameter's annotation that this file or another linted one may
        define (`Critic`, `models.Critic`); none for `nn.Module`, `Any`, `Optional`."""
        annotation = scope.annotations.get(param)
        if isinstance(annotation, cst.SimpleString):  # `critic: "Critic"`
            try:
                annotation = cst.parse_expression(str(annotation.evaluated_value))
            except cst.ParserSyntaxError:
                return []
        if annotation is None:
            return []
        names = []
        for ref in expression_refs(annotation):
            resolved = resolve(ref, self.context.imports.table)
            if (resolved and not outside_tree(resolved)) or (not resolved and ref.split(".")[0] in self._top_names):
                names.append(ref)
        return names

    def _exported_name(self, scope: Scope) -> Optional[str]:
        """A module-level function's absolute name, as the instance flow knows it."""
        if scope.parent is not self._module or scope.cls is not None:
            return None
        module = module_name(self.context.path)
        return f"{module}.{scope.name}" if module else scope.name

    def _holders(self, top: Set[str]) -> Set[str]:
        """The top-level names whose use runs the layer: its definition's, and those of
        everything in the file that (transitively) reads one of them. Asked after the
        traversal: a worklist over the names that read each name (indexed once).

        Cost: O(top-level names and their reads) for the index, once; then O(what the
        holders read) per call."""
        if self._readers is None:
            readers: Dict[str, List[str]] = {}
            for name, refs in self._top_refs.items():
                for head in {ref.split(".")[0] for ref in refs}:
                    readers.setdefault(head, []).append(name)
            self._readers = readers
        holders = set(top)
        queue = list(holders)
        while queue:
            for name in self._readers.get(queue.pop(), ()):
                if name not in holders:
                    holders.add(name)
                    queue.append(name)
        return holders
