"""The `torchlint.rules` package: installed, it is the repository's `rules/` folder under
that name; run from a checkout (`python -m torchlint` with the repository on `sys.path`),
the same folder is loaded under the same name."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

NAME = "torchlint.rules"


def rules_package() -> ModuleType:
    if NAME in sys.modules or importlib.util.find_spec(NAME) is not None:
        return importlib.import_module(NAME)
    repository = Path(__file__).resolve().parents[2]
    checkout = repository / "rules"
    spec = importlib.util.spec_from_file_location(
        NAME, checkout / "__init__.py", submodule_search_locations=[str(checkout)]
    )
    # only torchlint's own checkout: beside an installed torchlint (site-packages) a `rules`
    # package is another distribution's
    if spec is None or spec.loader is None or not _is_torchlint_checkout(repository):
        raise ModuleNotFoundError(f"No module named {NAME!r} (and no rules/ beside {Path(__file__).parents[1]})")
    package = importlib.util.module_from_spec(spec)
    sys.modules[NAME] = package
    spec.loader.exec_module(package)
    return package


def _is_torchlint_checkout(repository: Path) -> bool:
    """Whether `repository` holds torchlint's sources: its `rules/` and a pyproject naming it."""
    try:
        project = (repository / "pyproject.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return (repository / "rules" / "__init__.py").is_file() and 'name = "torchlint"' in project
