"""Compatibility guards: code that picks an API by the installed library's version or
features, so that old releases keep working. What such a guard runs on old releases is
the author's choice, not a finding:

- a branch of an `if` (or a conditional expression) whose test names a version
  (`torch.__version__`, `TORCH_VERSION`, `version.parse(...)`, `is_torch_greater_or_equal(...)`)
  or probes a library module (`hasattr(nn.utils.parametrizations, "weight_norm")`);
- a `try` of imports and assignments only, with a handler for a missing API
  (`ImportError`, `ModuleNotFoundError`, `AttributeError`), and such a handler's body;
- a default that such an `if` then overrides (`norm = nn.utils.weight_norm` followed by
  `if hasattr(nn.utils.parametrizations, "weight_norm"): norm = ...`).
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator, List, Sequence, Set

from torchlint.analysis.names import ImportMap, cst_dotted_name
from torchlint.core.lazy import cst
from torchlint.core.walk import walk

# a name that says "version": `__version__`, `TORCH_VERSION`, `version_info`, `LooseVersion`,
# or a version comparison named for torch (`torch_ge_1_13`, `_TORCH_GREATER_EQUAL_2_0`,
# `is_torch_greater_or_equal`)
_VERSION_NAME = re.compile(r"version|torch_?(?:ge|gt|le|lt|greater|less)(?:_|$)", re.IGNORECASE)
_MISSING_API = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError"})


def compat_test(test, imports: ImportMap, libraries: Sequence[str] = ("torch",)) -> bool:
    """Whether an `if` test picks code by version or by feature: a name in it says
    "version" (or names a version of one of `libraries`: `TORCHVISION_LT_0_13`), or it
    asks `hasattr` of a module of one of `libraries`."""
    for node in walk(test):
        if type(node) is cst.Name and _names_a_version(node.value, libraries):
            return True
        if type(node) is cst.Attribute and _names_a_version(node.attr.value, libraries):
            return True
        if type(node) is cst.Call and _probes(node, imports, libraries):
            return True
    return False


def _names_a_version(name: str, libraries: Sequence[str]) -> bool:
    if _VERSION_NAME.search(name):
        return True
    lowered = name.lower()
    return any(library != "torch" and library in lowered for library in libraries)


def _probes(call, imports: ImportMap, libraries: Sequence[str]) -> bool:
    """`hasattr(<a module of one of libraries>, "name")`."""
    if type(call.func) is not cst.Name or call.func.value != "hasattr" or not call.args:
        return False
    qualified = imports.qualified_name(call.args[0].value) or ""
    return qualified.split(".")[0] in libraries


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


def probe_try(node) -> bool:
    """Whether a `try` only imports or binds names and handles a missing API: it is there
    to find which API the installed release has (the whole statement is a guard)."""
    if not any(catches_missing_api(handler) for handler in node.handlers):
        return False
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else [node.body]
    return all(isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) for statement in body)


def overridden_defaults(statements: Iterable, imports: ImportMap) -> Iterator:
    """The values of the plain assignments (`name = value`) of one block that a later
    `if` of the same block with a compatibility test assigns again: a default for the
    releases the test rules out."""
    pending: List = []  # (name, value) of the assignments seen so far
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                target = _single_name_target(small)
                if target is not None:
                    pending.append((target, small.value))
        elif isinstance(statement, cst.If) and compat_test(statement.test, imports):
            assigned = _assigned_names(statement)
            kept = []
            for name, value in pending:
                if name in assigned:
                    yield value
                else:
                    kept.append((name, value))
            pending = kept


def _single_name_target(small):
    if type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name:
        return small.targets[0].target.value
    return None


def _assigned_names(branch) -> Set[str]:
    """The names a statement assigns with `name = ...` anywhere in it."""
    return {name for node in walk(branch) if type(node) is cst.Assign for name in [_single_name_target(node)] if name}
