"""The statements of a module that import a lazy module when it is imported (TL001's candidates, on LibCST),
and the names they bind. Cost: one pass over the module's top-level statements (and the
blocks under module-level `if`/`try`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, List, Optional, Sequence

from torchlint.analysis.names import called_import, cst_dotted_name, import_module_name, is_type_checking
from torchlint.core.lazy import cst
from torchlint.core.walk import blocks
from torchlint.rules.training.heavy_import_at_module_level.heavy_modules import lazy_module_of
from torchlint.rules.training.heavy_import_at_module_level.import_edits import bound_name


@dataclass
class Candidate:
    """A module-level statement that imports a lazy module."""

    statement: object  # cst.Import | cst.ImportFrom
    line: object  # the SimpleStatementLine holding it
    lazy_module: str
    conditional: bool
    called: bool = False  # spelled as a call: `importlib.import_module("mlflow")`


def find_candidates(body, lazy: Sequence[str], conditional: bool) -> Iterator[Candidate]:
    """The import-time imports of a lazy module in `body`, in nested blocks too (not under `if TYPE_CHECKING:`)."""
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                target = lazy_target(small, lazy)
                if target:
                    yield Candidate(small, statement, target, conditional)
                    continue
                called = called_import(small)
                target = lazy_module_of(called, None, lazy) if called else None
                if target:
                    yield Candidate(small, statement, target, conditional, called=True)
        elif isinstance(statement, (cst.If, cst.Try, cst.TryStar, cst.With, cst.For, cst.While)):
            found = blocks(statement)
            if isinstance(statement, cst.If) and is_type_checking(statement.test):
                found = found[1:]  # only type checkers run that body
            for block in found:
                yield from find_candidates(block, lazy, True)


def lazy_target(statement, lazy: Sequence[str]) -> Optional[str]:
    if isinstance(statement, cst.Import):
        for alias in statement.names:
            target = lazy_module_of(cst_dotted_name(alias.name) or "", None, lazy)
            if target:
                return target
    elif isinstance(statement, cst.ImportFrom) and not statement.relative:
        module = import_module_name(statement)
        if isinstance(statement.names, cst.ImportStar):
            return lazy_module_of(module, None, lazy)
        for alias in statement.names:
            target = lazy_module_of(module, cst_dotted_name(alias.name), lazy)
            if target:
                return target
    return None


def aliases_loading_lazy(statement, lazy: Sequence[str]) -> List:
    """The names of an import statement that load a lazy module."""
    if isinstance(statement, cst.Import):
        return [a for a in statement.names if lazy_module_of(cst_dotted_name(a.name) or "", None, lazy)]
    module = import_module_name(statement)
    return [a for a in statement.names if lazy_module_of(module, cst_dotted_name(a.name), lazy)]


def bound_names(candidate: Candidate, lazy: Sequence[str]) -> List[str]:
    """The names a candidate binds to the lazy module."""
    statement = candidate.statement
    if candidate.called:
        targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else []
        if isinstance(statement, cst.AnnAssign):
            targets = [statement.target]
        names = []
        for target in targets:
            elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
            names += [e.value for e in elements if isinstance(e, cst.Name)]
        return names
    if isinstance(statement.names, cst.ImportStar):
        return []
    return [bound_name(alias) for alias in aliases_loading_lazy(statement, lazy)]
