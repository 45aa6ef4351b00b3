"""Where each name a module imports is read: in function bodies, at import time (calls or other uses),
in annotations (evaluated or postponed)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Dict, List, Optional

from torchlint.analysis.names import cst_dotted_name, import_module_name
from torchlint.analysis.scopes import parents_of
from torchlint.core.lazy import cst
from torchlint.core.walk import walk


@dataclass
class Reads:
    """Where a module-level name is read."""

    functions: List  # the outermost functions whose bodies read it
    at_import: bool = False  # read when the module is imported
    calls_at_import: bool = False  # called into when the module is imported (`wandb.init()`), not as a decorator
    in_annotations: bool = False  # named in annotations outside function bodies that never run


class NameUses:
    """Where the module-level names are read, from LibCST's scope analysis (only computed
    for files that have a candidate import, so its cost is paid rarely)."""

    def __init__(self, module, postponed: bool) -> None:
        metadata = importlib.import_module("libcst.metadata")
        wrapper = metadata.MetadataWrapper(module, unsafe_skip_copy=True)
        scopes = wrapper.resolve(metadata.ScopeProvider)
        self._metadata = metadata
        self._module = module
        self._global = scopes[module]
        self._postponed = postponed  # `from __future__ import annotations`
        self._names_in_code: Optional[set] = None
        self._parents: Optional[Dict] = None

    def binding_count(self, name: str) -> int:
        return len(self._global.assignments[name])

    def reads(self, name: str) -> Reads:
        found = Reads([])
        for assignment in self._global.assignments[name]:
            for access in assignment.references:
                function = self._outermost_function(access.scope)
                if function is not None:  # a local annotation is never evaluated, but it names the import
                    if function not in found.functions:
                        found.functions.append(function)
                elif self._evaluated(access):
                    found.at_import = True
                    found.calls_at_import = found.calls_at_import or self._called_into(access.node)
                else:
                    found.in_annotations = True
        return found

    def _evaluated(self, access) -> bool:
        """Whether a read outside function bodies runs at import time: all do except
        annotations under `from __future__ import annotations` and names in strings
        (string annotations, `cast("T", x)`), which LibCST parses into nodes of their own."""
        if not (access.is_annotation or access.is_type_hint):
            return True
        if access.is_annotation and self._postponed:
            return False
        if self._names_in_code is None:
            self._names_in_code = {id(node) for node in walk(self._module) if isinstance(node, cst.Name)}
        return id(access.node) in self._names_in_code

    def _called_into(self, name) -> bool:
        """Whether a read is the head of a call of the module's own API (`wandb.finish()`,
        `mlflow.start_run(...)`, `init()` after `from wandb import init`) outside a
        decorator (`@numba.njit`, `@numba.jit(...)`)."""
        if self._parents is None:
            self._parents = parents_of(self._module)
        child, parent = name, self._parents.get(name)
        if isinstance(parent, cst.Attribute) and parent.value is child:
            child, parent = parent, self._parents.get(parent)
        if not (isinstance(parent, cst.Call) and parent.func is child):
            return False  # `wb.util.generate_id()`: a helper deeper in the package
        while parent is not None and not isinstance(parent, cst.SimpleStatementLine):
            if isinstance(parent, cst.Decorator):
                return False
            parent = self._parents.get(parent)
        return True

    def _outermost_function(self, scope):
        found = None
        metadata = self._metadata
        while scope is not None and not isinstance(scope, metadata.GlobalScope):
            if isinstance(scope, metadata.FunctionScope) and isinstance(scope.node, cst.FunctionDef):
                found = scope.node
            scope = scope.parent
        return found


def postpones_annotations(module) -> bool:
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom) and import_module_name(small) == "__future__":
                names = small.names if not isinstance(small.names, cst.ImportStar) else ()
                if any(cst_dotted_name(alias.name) == "annotations" for alias in names):
                    return True
    return False
