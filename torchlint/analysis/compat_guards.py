"""Compatibility guards: code that picks an API by the installed release of a library, so
that older releases keep working. Each branch of such a choice is the author's, not a
finding (`torchlint.rule_api.bases.compat_guarded` keeps track of them in a traversal):

- the branches of an `if` (or a conditional expression) whose test reads the library's
  version (`torch.__version__`, or Python's, `sys.version_info`), names one
  (`TORCH_VERSION`, `torch_version_ge(1, 13)`, `_TORCH_GREATER_EQUAL_1_13`,
  `is_torch_greater_or_equal("2.1")`, `TORCHVISION_LT_0_13`), or asks `hasattr` of one of
  its modules for an API the rule knows (`hasattr(nn.utils.parametrizations, "weight_norm")`);
- a `try` that only imports or binds names and reaches the library, with a handler for a
  missing API (`ImportError`, `ModuleNotFoundError`, `AttributeError`): the whole statement;
  otherwise, such a handler of a `try` that reaches the library;
- a default that such an `if` overrides (`norm = nn.utils.weight_norm`, then
  `if hasattr(nn.utils.parametrizations, "weight_norm"): norm = ...`).

Cost: `compat_test` O(the test); `probe_try` and `fallback_handlers` O(the `try`'s own
statements and handlers) plus whether its body reaches the library, which with a `memo`
(one per traversal, `subtree_any`) is decided once per node however deep `try`s nest;
`overridden_defaults` O(the block) plus the names each guard binds, memoized per statement
the same way (the Python work is linear; the sets of names are merged per nesting level).
"""

from __future__ import annotations

import re
from typing import AbstractSet, Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from torchlint.analysis.names import ImportMap, cst_dotted_name, cst_module_name
from torchlint.analysis.statements import assigned_names
from torchlint.core.lazy import cst
from torchlint.core.walk import children, walk

# what a name made of a library's name says about its version: `TORCH_VERSION`,
# `torch_ge_1_13`, `_TORCH_GREATER_EQUAL_2_0`, `is_torch_less_than`, `TORCHVISION_0_13`
_COMPARISON_WORDS = frozenset(
    {"version", "ver", "ge", "gt", "le", "lt", "eq", "greater", "less", "newer", "older", "before", "after", "since"}
)
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_MISSING_API = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError"})
_PROBE_STATEMENTS = ("Import", "ImportFrom", "Assign", "AnnAssign", "Pass")


def compat_test(test, imports: ImportMap, libraries: Sequence[str], probes: AbstractSet[str]) -> bool:
    """Whether an `if` test picks code by a release of one of `libraries`: it reads a
    version, names one, or asks `hasattr(<a module of the library>, <one of probes>)`."""
    for node in walk(test):
        kind = type(node)
        if kind is cst.Name and _names_a_version(node.value, libraries):
            return True
        if kind is cst.Attribute and _reads_a_version(node, imports, libraries):
            return True
        if kind is cst.Call and _probes(node, imports, libraries, probes):
            return True
    return False


def _names_a_version(name: str, libraries: Sequence[str]) -> bool:
    words = [word.lower() for word in _WORDS.findall(name)]
    if not any(library in words for library in libraries):
        return False
    return any(word in _COMPARISON_WORDS or word.isdigit() for word in words)


def _reads_a_version(attribute, imports: ImportMap, libraries: Sequence[str]) -> bool:
    name = attribute.attr.value
    if name == "version_info":
        return imports.qualified_name(attribute.value) == "sys"
    if name == "__version__":
        return _in_libraries(imports.qualified_name(attribute.value), libraries)
    return _names_a_version(name, libraries)


def _probes(call, imports: ImportMap, libraries: Sequence[str], probes: AbstractSet[str]) -> bool:
    """`hasattr(<a module of one of libraries>, "<one of probes>")`."""
    if type(call.func) is not cst.Name or call.func.value != "hasattr" or len(call.args) != 2:
        return False
    probed = call.args[1].value
    if type(probed) is not cst.SimpleString or probed.evaluated_value not in probes:
        return False
    return _in_libraries(imports.qualified_name(call.args[0].value), libraries)


def _in_libraries(qualified, libraries: Sequence[str]) -> bool:
    return qualified is not None and qualified.split(".")[0] in libraries


def catches_missing_api(handler) -> bool:
    """Whether an `except` clause catches a missing module or attribute."""
    kind = handler.type
    caught = kind.elements if type(kind) is cst.Tuple else [kind] if kind is not None else []
    for element in caught:
        value = element.value if isinstance(element, cst.Element) else element
        name = cst_dotted_name(value)
        if name is not None and name.rpartition(".")[2] in _MISSING_API:
            return True
    return False


def subtree_any(root, own: Callable[[object], bool], memo: Dict[int, bool], pruned: Tuple[type, ...] = ()) -> bool:
    """Whether `own` holds for a node under `root` (itself included; a node of a `pruned`
    type below `root` is asked but not entered). `memo` keeps the answer of every subtree
    decided (one memo per `own` and `pruned`), so nested questions cost nothing more.
    Cost: O(the nodes under `root` not decided before), iterative."""
    return _post_order(
        root, memo, lambda node, answers: own(node) or any(answers),
        lambda node: [] if node is not root and type(node) in pruned else children(node),
    )


def _post_order(root, memo: Dict[int, object], value: Callable, kids_of: Callable = children):
    """`value(node, the values of its kids)` for `root`, each subtree's value kept in `memo`
    (by node id) and computed once. Cost: O(the nodes not in `memo`), iterative."""
    if id(root) in memo:
        return memo[id(root)]
    kids: Dict[int, List] = {}
    stack: List[Tuple[object, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            memo[key] = value(node, [memo[id(kid)] for kid in kids.pop(key)])
            continue
        if key in memo:
            continue
        found = kids_of(node)
        kids[key] = found
        stack.append((node, True))
        stack.extend((kid, False) for kid in reversed(found) if id(kid) not in memo)
    return memo[id(root)]


def probe_try(node, imports: ImportMap, libraries: Sequence[str], memo: Optional[Dict[int, bool]] = None) -> bool:
    """Whether a `try` is there to find which API the installed release has: it only
    imports or binds names, reaches one of `libraries`, and handles a missing API.
    `memo`: `_reaches`'s, one per traversal and `libraries`."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else [node.body]
    if not all(
        isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite))
        and all(type(small).__name__ in _PROBE_STATEMENTS for small in statement.body)
        for statement in body
    ):
        return False
    return any(catches_missing_api(handler) for handler in node.handlers) and _reaches(node.body, imports, libraries, memo)


def fallback_handlers(node, imports: ImportMap, libraries: Sequence[str], memo: Optional[Dict[int, bool]] = None) -> List:
    """The handlers of a `try` that catch a missing API of one of `libraries` (the `try`
    reaches the library): what runs where the release lacks it. `memo`: as `probe_try`'s."""
    handlers = [handler for handler in node.handlers if catches_missing_api(handler)]
    return handlers if handlers and _reaches(node.body, imports, libraries, memo) else []


def _reaches(body, imports: ImportMap, libraries: Sequence[str], memo: Optional[Dict[int, bool]] = None) -> bool:
    """Whether code imports or names a module of one of `libraries`. Cost: O(body) at
    most; with a `memo`, each node is decided once across all the bodies asked about."""
    if memo is None:
        return any(_names_library(node, imports, libraries) for node in walk(body))
    return subtree_any(body, lambda node: _names_library(node, imports, libraries), memo)


def _names_library(node, imports: ImportMap, libraries: Sequence[str]) -> bool:
    kind = type(node)
    if kind is cst.ImportAlias:
        return _in_libraries(cst_module_name(node.name), libraries)
    if kind is cst.ImportFrom:
        return node.module is not None and not node.relative and _in_libraries(cst_module_name(node.module), libraries)
    if kind is cst.Name or kind is cst.Attribute:
        return _in_libraries(imports.qualified_name(node), libraries)
    return False


def overridden_defaults(
    statements: Iterable, is_guard: Callable[[object], bool], memo: Optional[Dict[int, FrozenSet[str]]] = None
) -> Iterator:
    """The values of the plain assignments (`name = value`) of one block that a later `if`
    of the same block for which `is_guard` holds assigns again: a default for the releases
    its test rules out. `memo`: the names bound under each node, one per traversal (nested
    guards are then walked once in all)."""
    pending: List = []  # (name, value) of the assignments seen so far
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                target = _single_name_target(small)
                if target is not None:
                    pending.append((target, small.value))
        elif isinstance(statement, cst.If) and is_guard(statement):
            bound = _names_bound_in(statement) if memo is None else _names_bound_under(statement, memo)
            yield from (value for name, value in pending if name in bound)
            pending = [(name, value) for name, value in pending if name not in bound]


def _single_name_target(small):
    if type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name:
        return small.targets[0].target.value
    if type(small) is cst.AnnAssign and small.value is not None and type(small.target) is cst.Name:
        return small.target.value
    return None


def _names_bound_in(statement) -> Set[str]:
    """The names the assignments anywhere in a statement bind."""
    bound: Set[str] = set()
    for node in walk(statement):
        if type(node) is cst.Assign:
            for target in node.targets:
                bound.update(assigned_names(target.target))
        elif type(node) is cst.AnnAssign:
            bound.update(assigned_names(node.target))
    return bound


def _names_bound_under(root, memo: Dict[int, FrozenSet[str]]) -> FrozenSet[str]:
    """What `_names_bound_in` gives, with the names bound under every node kept in `memo`.
    Cost: O(the nodes not asked about before), plus the merging of their name sets."""
    return _post_order(root, memo, _names_bound_here)


def _names_bound_here(node, below: List[FrozenSet[str]]) -> FrozenSet[str]:
    own: Set[str] = set()
    if type(node) is cst.Assign:
        for target in node.targets:
            own.update(assigned_names(target.target))
    elif type(node) is cst.AnnAssign:
        own.update(assigned_names(node.target))
    for names in below:
        own |= names
    return frozenset(own) if own else _EMPTY


_EMPTY: FrozenSet[str] = frozenset()
