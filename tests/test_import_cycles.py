"""No import cycle among torchlint's own modules and its rules (`rules/`, imported as
`torchlint.rules`): module-level and function-level imports alike, not those under `if
TYPE_CHECKING:` (never run)."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

from torchlint.analysis.names import ast_is_type_checking

PACKAGE = Path(__file__).resolve().parent.parent / "torchlint"
RULES = PACKAGE.parent / "rules"


def module_names(root: Path = PACKAGE, name: str = "torchlint"):
    """`torchlint.x.y` -> its file, for every module of the package `root` (named `name`)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = [*name.split("."), *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported_modules(name: str, path: Path, known) -> set:
    """The torchlint modules a module imports anywhere in its body (a lazy import inside
    a function still closes a cycle). `from pkg import sub` counts as importing `pkg.sub`
    when that is a module, else `pkg`."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    tree = ast.parse(path.read_bytes())
    never_run = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast_is_type_checking(node.test)
        for statement in node.body
        for inner in ast.walk(statement)
    }
    for node in ast.walk(tree):
        if id(node) in never_run:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph(root: Path = PACKAGE, rules: Path = RULES):
    known = module_names(root)
    if rules.is_dir():
        known.update(module_names(rules, "torchlint.rules"))
    graph = {name: imported_modules(name, path, known) for name, path in known.items()}
    # a package's __init__ runs before any of its submodules: importing `a.b` imports `a`,
    # but that edge never closes a cycle by itself, so only explicit imports are edges
    return graph


def first_cycle(graph):
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as cycle:
        return cycle.args[1]
    return None


def test_torchlint_and_its_rules_have_no_import_cycle():
    graph = import_graph()
    assert any(name.startswith("torchlint.rules.training.") for name in graph)
    cycle = first_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(reversed(cycle))


@pytest.mark.parametrize(
    "files, cyclic",
    [
        ({"a.py": "import torchlint.b\n", "b.py": "def f():\n    from torchlint import a\n"}, True),
        ({"a.py": "from . import b\n", "b.py": "from .c import x\n", "c.py": "from torchlint.a import y\n"}, True),
        ({"a.py": "from torchlint.b import x\n", "b.py": "import os\n"}, False),
        ({"a.py": "import typing\nif typing.TYPE_CHECKING:\n    from torchlint.b import x\n", "b.py": "import torchlint.a\n"}, False),
    ],
)
def test_the_cycle_finder_sees_lazy_and_relative_imports(tmp_path, files, cyclic):
    root = tmp_path / "torchlint"
    root.mkdir()
    (root / "__init__.py").write_text("")
    for name, text in files.items():
        (root / name).write_text(text)
    assert (first_cycle(import_graph(root, tmp_path / "rules")) is not None) is cyclic
