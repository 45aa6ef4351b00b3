"""A read-only, source-ordered walk over a LibCST tree, and the one batched traversal.

LibCST's own visitors rebuild every node they pass (`_visit_and_replace_children`) and
visit every piece of whitespace and punctuation. Rules only read the tree, so walking
the dataclass fields directly, skipping whitespace, is several times cheaper and gives
the same `visit_X` / `leave_X` calls in the same order for everything a rule can see.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Callable, Dict, Iterator, List, Sequence, Tuple

from torchlint.core.lazy import cst

_SKIPPED_FIELDS = ("whitespace", "lpar", "rpar", "comma", "semicolon", "header", "footer", "leading_lines", "lines_after")

# Node types whose dataclass field order is not their order in the source.
_SOURCE_ORDER: Dict[str, Tuple[str, ...]] = {
    "FunctionDef": ("decorators", "name", "type_parameters", "params", "returns", "body"),
    "ClassDef": ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    "IfExp": ("body", "test", "orelse"),
    "ExceptHandler": ("type", "name", "body"),
    "ExceptStarHandler": ("type", "name", "body"),
    "Parameters": ("posonly_params", "posonly_ind", "params", "star_arg", "kwonly_params", "star_kwarg"),
    "ImportFrom": ("relative", "module", "names"),
    "MatchCase": ("pattern", "guard", "body"),
}
_CHILD_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _child_fields(kind: type) -> Tuple[str, ...]:
    names = _SOURCE_ORDER.get(kind.__name__)
    if names is None:
        names = tuple(
            f.name for f in dataclasses.fields(kind) if not any(skip in f.name for skip in _SKIPPED_FIELDS)
        )
    _CHILD_FIELDS[kind] = names
    return names


# node id -> (node, its children), and (node id, pruned types) -> (node, its `pruned_walk`):
# analyses walk the same subtrees several times (a method for each of TL003's and TL005's
# questions), and LibCST trees never change. An entry keeps its node alive, so its id
# cannot be reused while it is here. The engine empties both after each file
# (`forget_trees`); the bounds cap them for other callers.
_KNOWN: Dict[int, Tuple[object, Tuple]] = {}
KNOWN_BOUND = 500_000
_WALKED: Dict[Tuple[int, Tuple[type, ...]], Tuple[object, Tuple]] = {}
WALKED_BOUND = 20_000


def children(node) -> Tuple:
    """The child nodes of a LibCST node in source order, without whitespace and punctuation.
    Cost: the node's fields the first time it is asked, O(1) after that."""
    known = _KNOWN.get(id(node))
    if known is not None:
        return known[1]
    found = _children(node)
    if len(_KNOWN) >= KNOWN_BOUND:
        _KNOWN.clear()
    _KNOWN[id(node)] = (node, found)
    return found


def forget_trees() -> None:
    """Drop the children and walks kept for the trees walked so far (and the trees with them)."""
    _KNOWN.clear()
    _WALKED.clear()


def _children(node) -> Tuple:
    kind = type(node)
    names = _CHILD_FIELDS.get(kind)
    if names is None:
        names = _child_fields(kind)
    found = []
    # what a value is, by its type: LibCST's node classes are ABCs, and an isinstance
    # against one costs a Python-level call
    shapes = _SHAPES
    for name in names:
        value = getattr(node, name)
        shape = shapes.get(type(value))
        if shape is None:
            shape = _shape(type(value))
        if shape is _NODE:
            found.append(value)
        elif shape is _SEQUENCE:
            for item in value:
                if (shapes.get(type(item)) or _shape(type(item))) is _NODE:
                    found.append(item)
    return tuple(found)


_NODE, _SEQUENCE, _OTHER = "node", "sequence", "other"
_SHAPES: Dict[type, str] = {}


def _shape(kind: type) -> str:
    """Whether values of this type are LibCST nodes, sequences (of them) or neither."""
    if issubclass(kind, cst.CSTNode):
        shape = _NODE
    elif issubclass(kind, (tuple, list)):
        shape = _SEQUENCE
    else:
        shape = _OTHER
    _SHAPES[kind] = shape
    return shape


def ast_nodes(node: ast.AST) -> List[ast.AST]:
    """Every stdlib ast node under `node` (itself included), in no set order: what
    `ast.walk` gives, three times faster (no generators, no deque)."""
    found, stack, node_type = [], [node], ast.AST
    while stack:
        current = stack.pop()
        found.append(current)
        for name in current._fields:
            value = getattr(current, name, None)
            if isinstance(value, node_type):
                stack.append(value)
            elif type(value) is list:
                stack.extend(item for item in value if isinstance(item, node_type))
    return found


def ast_children(node: ast.AST) -> List[ast.AST]:
    """The child nodes of a stdlib ast node in `ast.iter_child_nodes`' order, as a list
    (no generators: a walk that asks for every node's children pays them per node)."""
    found, node_type = [], ast.AST
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, node_type):
            found.append(value)
        elif type(value) is list:
            found.extend([item for item in value if isinstance(item, node_type)])
    return found


def walk(node, into_functions: bool = True) -> Iterator:
    """Every node under `node` (itself included), in source order. With
    `into_functions=False`, nested function, class and lambda bodies are not entered."""
    if into_functions:
        return pruned_walk(node, ())
    return pruned_walk(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda), enter_root=True)


def pruned_walk(node, pruned: Tuple[type, ...], enter_root: bool = False) -> Iterator:
    """Every node under `node` (itself included), in source order; a node of one of the
    `pruned` LibCST types (concrete classes: compared by exact type) is given but not
    entered, `node` itself too unless `enter_root`."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if type(current) not in pruned or (enter_root and current is node):
            stack.extend(reversed(children(current)))


def walked(node, pruned: Tuple[type, ...]) -> Tuple:
    """`pruned_walk(node, pruned)` as a tuple. Cost: the walk the first time a file asks
    for it, O(1) after that."""
    key = (id(node), pruned)
    known = _WALKED.get(key)
    if known is not None:
        return known[1]
    found = tuple(pruned_walk(node, pruned))
    if len(_WALKED) >= WALKED_BOUND:
        _WALKED.clear()
    _WALKED[key] = (node, found)
    return found


def statements(block) -> Iterator:
    """Every statement in a block and the blocks nested in it (if/for/while/with/try/
    match), small statements included, in source order; not those of nested function
    or class definitions. Expressions are not walked, which makes this cheap."""
    stack = [block]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.SimpleStatementLine):
            yield current
            yield from current.body
        elif isinstance(current, cst.SimpleStatementSuite):
            yield from current.body
        elif isinstance(current, (cst.IndentedBlock, cst.Module)):
            stack.extend(reversed(current.body))
        elif isinstance(current, cst.BaseCompoundStatement):
            yield current
            if not isinstance(current, (cst.FunctionDef, cst.ClassDef)):
                stack.extend(statement for block in reversed(blocks(current)) for statement in reversed(block))


def ast_statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """`statements` of a stdlib ast block: every statement in it and in the blocks nested
    in it, in source order; not those of nested function or class definitions."""
    stack = list(reversed(body))
    while stack:
        current = stack.pop()
        yield current
        if not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(statement for block in reversed(blocks(current)) for statement in reversed(block))


def blocks(statement) -> List[Sequence]:
    """The statement lists of a compound statement's blocks, in source order: its body,
    then each `except`/`except*`, `else`, `finally` and `case` block; `[]` for a simple
    statement. For a LibCST and a stdlib `ast` statement alike, and shaped as the stdlib
    ast shapes them: an `elif` is an `else` block holding one `If`; a one-line LibCST
    block (`if x: y`) is a list holding its `SimpleStatementSuite`. Function and class
    bodies are blocks too: a walk that stays in one scope skips those statements."""
    if isinstance(statement, ast.AST):
        found = [statement.body] if isinstance(getattr(statement, "body", None), list) else []
        found.extend(handler.body for handler in getattr(statement, "handlers", ()))
        found.extend(getattr(statement, name) for name in ("orelse", "finalbody") if getattr(statement, name, None))
        found.extend(case.body for case in getattr(statement, "cases", ()))
        return found
    if not isinstance(statement, (cst.BaseCompoundStatement, cst.ExceptHandler, cst.ExceptStarHandler, cst.MatchCase)):
        return []
    found = []
    for part in (statement, *getattr(statement, "handlers", ())):
        if hasattr(part, "body"):  # a `match` has only its cases
            found.append(_suite(part.body))
    for name in ("orelse", "finalbody"):
        extra = getattr(statement, name, None)
        if extra is not None:
            found.append([extra] if isinstance(extra, cst.If) else _suite(extra.body))
    found.extend(_suite(case.body) for case in getattr(statement, "cases", ()))
    return found


def _suite(suite) -> Sequence:
    return suite.body if isinstance(suite, cst.IndentedBlock) else [suite]


Handler = Callable[[object], None]


def visit_batched(root, visitors: Sequence[Tuple[str, Handler]]) -> None:
    """Call each `(method name, function)` — `visit_Call`, `leave_FunctionDef`, ... — on
    every node of that type, in one pre-order walk (leave after the node's children).
    Iterative, so deeply nested expressions cannot exhaust the stack."""
    on_visit: Dict[str, List[Handler]] = {}
    on_leave: Dict[str, List[Handler]] = {}
    for name, function in visitors:
        phase, _, kind = name.partition("_")
        (on_visit if phase == "visit" else on_leave).setdefault(kind, []).append(function)
    stack: List[Tuple[object, bool]] = [(root, False)]
    pop, push = stack.pop, stack.append
    while stack:
        node, leaving = pop()
        kind = type(node).__name__
        if leaving:
            for function in on_leave[kind]:
                function(node)
            continue
        for function in on_visit.get(kind, ()):
            function(node)
        if kind in on_leave:
            push((node, True))
        stack.extend((child, False) for child in reversed(children(node)))
