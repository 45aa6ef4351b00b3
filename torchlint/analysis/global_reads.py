"""Where a module's global names are bound and read, from the stdlib ast in one walk.

For each name asked about: how many times the module binds it, the outermost functions
whose bodies read it, whether it is read when the module is imported (and whether such a
read calls into it outside a decorator), and whether it is named in annotations that
never run. What a name refers to follows Python's scoping: in a function, a parameter,
an assignment, an import, a nested `def` or `class`, a `for`/`with`/`except` target or a
match capture makes the name local unless the function declares it `global`; functions
skip the class bodies they are nested in; comprehensions are scopes of their own (the
walrus binds in the function around them); decorators, defaults, annotations and bases
run in the scope around the definition. Lambdas are scopes but not functions here: a
read in a module-level lambda counts as a read at import, as LibCST's scope analysis
counts it. Names in string annotations count as annotations.

Cost: one walk of the given statements; each function's own statements are read once
more to find which of the names it binds. Linear in the size of the statements.
"""

from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass, field
from typing import Collection, Dict, Iterator, List, Optional, Sequence, Set

from torchlint.core.positions import statement_rows

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_NESTED_SCOPES = (*_FUNCTIONS, ast.ClassDef, ast.Lambda, *_COMPREHENSIONS)
_TYPING_CALLS = frozenset({"cast", "TypeVar"})


@dataclass
class GlobalReads:
    """Where one module-level name is bound and read."""

    functions: List[ast.AST] = field(default_factory=list)  # outermost defs whose bodies read it
    at_import: bool = False  # read when the module is imported
    calls_at_import: bool = False  # called into at import (`wandb.init()`), not as a decorator
    in_annotations: bool = False  # named in annotations outside function bodies that never run
    bindings: int = 0  # module-level bindings (a function's `global` assignments included)


@dataclass
class _Scope:
    kind: str  # "function", "lambda", "class" or "comprehension"
    local: Set[str]
    declared_global: Set[str]


def global_reads(
    statements: Sequence[ast.stmt], names: Collection[str], postponed: bool, rows: Optional[Sequence[int]] = None
) -> Dict[str, GlobalReads]:
    """Bindings and reads of `names` in a module's top-level `statements` (`postponed`: the
    module has `from __future__ import annotations`). With `rows`, the rows whose text
    holds one of the names (`torchlint.core.positions.rows_mentioning`), a statement on
    none of them is skipped whole."""
    walker = _Walker(frozenset(names), postponed, rows)
    for statement in statements:
        walker.statement(statement, [], None)
    return walker.found


class _Walker:
    def __init__(self, names: frozenset, postponed: bool, rows: Optional[Sequence[int]]) -> None:
        self.names = names
        self.postponed = postponed
        self.rows = rows
        self.found: Dict[str, GlobalReads] = {name: GlobalReads() for name in names}
        self._call_heads: Set[int] = set()  # ids of the names that head a call outside decorators

    # ---- statements and scopes --------------------------------------------------------

    def statement(self, node: ast.AST, chain: List[_Scope], outermost: Optional[ast.AST]) -> None:
        if self.rows is not None and not self._mentions(node):
            return
        if isinstance(node, _FUNCTIONS):
            self._definition_header(node, chain, outermost)
            self._bind(node.name, chain)
            scope = _scope("function", node, self.names)
            inner = outermost if outermost is not None else node
            for child in node.body:
                self.statement(child, [*chain, scope], inner)
        elif isinstance(node, ast.ClassDef):
            for expression in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
                self.expression(expression, chain, outermost, decorator=any(expression is d for d in node.decorator_list))
            self._bind(node.name, chain)
            scope = _scope("class", node, self.names)
            for child in node.body:
                self.statement(child, [*chain, scope], outermost)
        else:
            self._simple(node, chain, outermost)

    def _mentions(self, node: ast.AST) -> bool:
        if not hasattr(node, "lineno"):  # a match case
            return True
        first, last = statement_rows(node)
        index = bisect.bisect_left(self.rows, first)
        return index < len(self.rows) and self.rows[index] <= last

    def _definition_header(self, node, chain: List[_Scope], outermost: Optional[ast.AST]) -> None:
        """Decorators, defaults and annotations: evaluated where the `def` runs."""
        for decorator in node.decorator_list:
            self.expression(decorator, chain, outermost, decorator=True)
        for default in _defaults(node.args):
            self.expression(default, chain, outermost)
        for argument in _parameters(node.args):
            if argument.annotation is not None:
                self.annotation(argument.annotation, chain, outermost)
        if node.returns is not None:
            self.annotation(node.returns, chain, outermost)

    def _simple(self, node: ast.AST, chain: List[_Scope], outermost: Optional[ast.AST]) -> None:
        """A statement other than a definition: its expressions, its nested statements."""
        if isinstance(node, ast.AnnAssign):
            if chain and chain[-1].kind == "function":
                self.annotation(node.annotation, chain, outermost, evaluated=False)
            else:
                self.annotation(node.annotation, chain, outermost)
            self.expression(node.target, chain, outermost)
            if node.value is not None:
                self.expression(node.value, chain, outermost)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    self._bind(alias.asname or alias.name.split(".")[0], chain)
            return
        if isinstance(node, ast.ExceptHandler) and node.name:
            self._bind(node.name, chain)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.stmt, ast.ExceptHandler, ast.match_case)):
                self.statement(child, chain, outermost)
            elif isinstance(child, ast.pattern):
                self._pattern(child, chain, outermost)
            else:  # an expression, or a `with` item
                self.expression(child, chain, outermost)

    def _pattern(self, node: ast.AST, chain: List[_Scope], outermost: Optional[ast.AST]) -> None:
        for inner in ast.walk(node):
            for name in _pattern_names(inner):
                self._bind(name, chain)
            if isinstance(inner, (ast.MatchValue, ast.MatchClass)):
                self.expression(inner.value if isinstance(inner, ast.MatchValue) else inner.cls, chain, outermost)
            elif isinstance(inner, ast.MatchMapping):
                for key in inner.keys:
                    self.expression(key, chain, outermost)

    # ---- expressions --------------------------------------------------------------------

    def expression(self, node: ast.AST, chain: List[_Scope], outermost: Optional[ast.AST], decorator: bool = False) -> None:
        kind = type(node)
        if kind is ast.Name:
            if node.id in self.names:
                if isinstance(node.ctx, ast.Load):
                    self._read(node.id, chain, outermost, called=id(node) in self._call_heads)
                elif isinstance(node.ctx, ast.Store):
                    self._bind(node.id, chain)
            return
        if kind is ast.Lambda:
            for default in _defaults(node.args):
                self.expression(default, chain, outermost, decorator)
            scope = _Scope("lambda", {argument.arg for argument in _parameters(node.args)} & self.names, set())
            self.expression(node.body, [*chain, scope], outermost, decorator)
            return
        if kind in _COMPREHENSIONS:
            self._comprehension(node, chain, outermost, decorator)
            return
        if kind is ast.NamedExpr:
            self._bind_walrus(node.target.id, chain)
            self.expression(node.value, chain, outermost, decorator)
            return
        if kind is ast.Call:
            head = _call_head(node)
            if head is not None and not decorator:
                self._call_heads.add(id(head))
            if _typing_call(node.func):
                self.expression(node.func, chain, outermost, decorator)
                for argument in (*node.args, *(k.value for k in node.keywords)):
                    if _is_string(argument):
                        self._string_hint(argument, chain, outermost)
                    else:
                        self.expression(argument, chain, outermost, decorator)
                return
        for child in ast.iter_child_nodes(node):
            self.expression(child, chain, outermost, decorator)

    def _comprehension(self, node, chain: List[_Scope], outermost: Optional[ast.AST], decorator: bool) -> None:
        generators = node.generators
        # the first iterable runs in the enclosing scope; targets are the comprehension's own
        self.expression(generators[0].iter, chain, outermost, decorator)
        bound = {n.id for g in generators for n in ast.walk(g.target) if isinstance(n, ast.Name)} & self.names
        scope = _Scope("comprehension", bound, set())
        inner = [*chain, scope]
        for index, generator in enumerate(generators):
            if index:
                self.expression(generator.iter, inner, outermost, decorator)
            for condition in generator.ifs:
                self.expression(condition, inner, outermost, decorator)
        parts = (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,)
        for part in parts:
            self.expression(part, inner, outermost, decorator)

    def annotation(self, node: ast.AST, chain: List[_Scope], outermost: Optional[ast.AST],
                   evaluated: Optional[bool] = None) -> None:
        """An annotation: evaluated unless postponed (or a local variable's), strings in it
        are hints that never run."""
        runs = (not self.postponed) if evaluated is None else evaluated
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name) and inner.id in self.names and isinstance(inner.ctx, ast.Load):
                self._read(inner.id, chain, outermost, called=False, evaluated=runs)
            elif _is_string(inner):
                self._string_hint(inner, chain, outermost)
            elif isinstance(inner, ast.NamedExpr) and runs:
                self._bind_walrus(inner.target.id, chain)

    def _string_hint(self, node: ast.AST, chain: List[_Scope], outermost: Optional[ast.AST]) -> None:
        if not _is_string(node) or not any(name in node.value for name in self.names):
            return
        try:
            hint = ast.parse(node.value.strip(), mode="eval")
        except (SyntaxError, ValueError):
            return
        for inner in ast.walk(hint):
            if isinstance(inner, ast.Name) and inner.id in self.names:
                self._read(inner.id, chain, outermost, called=False, evaluated=False)

    # ---- what a name refers to ------------------------------------------------------------

    def _read(self, name: str, chain: List[_Scope], outermost: Optional[ast.AST], called: bool,
              evaluated: bool = True) -> None:
        if not _refers_to_global(name, chain):
            return
        found = self.found[name]
        if outermost is not None:
            if outermost not in found.functions:
                found.functions.append(outermost)
        elif evaluated:
            found.at_import = True
            found.calls_at_import = found.calls_at_import or called
        else:
            found.in_annotations = True

    def _bind(self, name: str, chain: List[_Scope]) -> None:
        if name in self.names and _binds_global(name, chain):
            self.found[name].bindings += 1

    def _bind_walrus(self, name: str, chain: List[_Scope]) -> None:
        """`(name := ...)` binds in the innermost scope that is not a comprehension."""
        scopes = list(chain)
        while scopes and scopes[-1].kind == "comprehension":
            scopes.pop()
        self._bind(name, scopes)


def _refers_to_global(name: str, chain: List[_Scope]) -> bool:
    for depth in range(len(chain) - 1, -1, -1):
        scope = chain[depth]
        if name in scope.declared_global:
            return True
        if scope.kind == "class" and depth != len(chain) - 1:
            continue  # a class body is not a scope for the functions nested in it
        if name in scope.local:
            return False
    return True


def _binds_global(name: str, chain: List[_Scope]) -> bool:
    return not chain or name in chain[-1].declared_global


def _own_statements(node) -> Iterator[ast.AST]:
    """The nodes a def or class runs itself: its body without nested scopes' bodies (their
    names, decorators, defaults and bases are its own)."""
    stack = list(reversed(node.body))
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, (*_FUNCTIONS, ast.ClassDef)):
            stack.extend(current.decorator_list)
            if isinstance(current, ast.ClassDef):
                stack.extend((*current.bases, *(k.value for k in current.keywords)))
            else:
                stack.extend(_defaults(current.args))
            continue
        if isinstance(current, ast.Lambda):
            stack.extend(_defaults(current.args))
            continue
        if isinstance(current, _COMPREHENSIONS):
            stack.append(current.generators[0].iter)
            stack.extend(n for n in ast.walk(current) if isinstance(n, ast.NamedExpr))
            continue
        stack.extend(ast.iter_child_nodes(current))


def _scope(kind: str, node, names: frozenset) -> _Scope:
    """The scope of a def or class: which of `names` it binds in its own scope, and which
    it declares `global`, from one walk of its own statements."""
    bound: Set[str] = set()
    declared: Set[str] = set()
    if isinstance(node, _FUNCTIONS):
        bound.update(argument.arg for argument in _parameters(node.args))
    for inner in _own_statements(node):
        if isinstance(inner, ast.Name) and not isinstance(inner.ctx, ast.Load):
            bound.add(inner.id)
        elif isinstance(inner, (*_FUNCTIONS, ast.ClassDef)):
            bound.add(inner.name)
        elif isinstance(inner, (ast.Import, ast.ImportFrom)):
            bound.update(alias.asname or alias.name.split(".")[0] for alias in inner.names if alias.name != "*")
        elif isinstance(inner, ast.ExceptHandler) and inner.name:
            bound.add(inner.name)
        elif isinstance(inner, ast.Nonlocal):
            bound.update(inner.names)
        elif isinstance(inner, ast.Global):
            declared.update(inner.names)
        else:
            bound.update(_pattern_names(inner))
    declared &= names
    return _Scope(kind, (bound & names) - declared, declared)


def _parameters(arguments: ast.arguments) -> Iterator[ast.arg]:
    for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg):
        if argument is not None:
            yield argument


def _defaults(arguments: ast.arguments) -> List[ast.expr]:
    return [*arguments.defaults, *(default for default in arguments.kw_defaults if default is not None)]


def _pattern_names(node: ast.AST) -> List[str]:
    if isinstance(node, ast.MatchAs) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchStar) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


def _call_head(call: ast.Call) -> Optional[ast.Name]:
    """The name a call goes into the module's own API through: `wandb` in `wandb.init()`,
    `init` in `init()`; not in `wb.util.generate_id()` (a helper deeper in the package)."""
    func = call.func
    if isinstance(func, ast.Attribute):
        func = func.value
    return func if isinstance(func, ast.Name) else None


def _typing_call(func: ast.AST) -> bool:
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    return name in _TYPING_CALLS


def _is_string(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)
