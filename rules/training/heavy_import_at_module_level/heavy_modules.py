"""The modules TL001 imports lazily (its options and their defaults), and on the stdlib ast the imports a file
runs when it is imported: the gate (heavy imports) and the facts (imported modules) of the project pass. Cost: one pass
over the module-level statements."""

from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Sequence, Set

from torchlint.analysis.names import ast_called_import, module_level_ast_statements

REPORT_IMPORT_TIME_USE = "report-import-time-use"
LAZY_IMPORTS = "lazy-imports"
EXTEND_LAZY_IMPORTS = "extend-lazy-imports"
DEFAULT_LAZY_IMPORTS = (
    "wandb",
    "tensorboard",
    "tensorboardX",
    "torch.utils.tensorboard",
    "numba",
    "mlflow",
    "comet_ml",
    "neptune",
    # measured like wandb (python -X importtime, median of 3): clearml 5.5 s, aim 5.2 s,
    # dvclive 2.8 s, against wandb 3.0 s and mlflow 8.4 s on the same machine
    "clearml",
    "aim",
    "dvclive",
)


def lazy_module_of(module: str, name: Optional[str], lazy: Sequence[str]) -> Optional[str]:
    """The configured lazy module that `import module` / `from module import name` loads."""
    candidates = [module] if name is None else [module, f"{module}.{name}"]
    for candidate in candidates:
        for target in lazy:
            if candidate == target or candidate.startswith(target + "."):
                return target
    return None


def ast_heavy_imports(tree: ast.Module, lazy: Sequence[str]) -> Iterator[ast.stmt]:
    """The statements that import a configured lazy module when this module is imported."""
    for node in module_level_ast_statements(tree, type_checking=False):
        if isinstance(node, ast.Import):
            found = [lazy_module_of(a.name, None, lazy) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            relative = node.level or not node.module
            found = [] if relative else [lazy_module_of(node.module, a.name, lazy) for a in node.names]
        else:
            called = ast_called_import(node)
            found = [lazy_module_of(called, None, lazy)] if called else []
        if any(found):
            yield node


def ast_imported_modules(tree: ast.Module) -> List[str]:
    """Every module an import at import time may load, as written (relative ones with
    their dots): `from .a import b` may load `.a` and `.a.b`."""
    found: Set[str] = set()
    for node in module_level_ast_statements(tree, type_checking=False):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            found.add(base)
            joint = "" if base.endswith(".") else "."
            found.update(base + joint + a.name for a in node.names if a.name != "*")
    return sorted(found)


def may_be_project_import(imported: str, path: str) -> bool:
    """Whether an import may load a module of the project being linted: a relative one,
    or one whose top package names a folder on the file's path (`espnet2.asr.x` from
    `.../espnet2/asr/y.py`). Others are decided in the file; these in the project pass."""
    if imported.startswith("."):
        return True
    folders = path.replace("\\", "/").split("/")[:-1]
    return imported.split(".")[0] in folders
