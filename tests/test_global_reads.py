"""torchlint.analysis.global_reads (one stdlib-ast walk) agrees with LibCST's scope analysis
(ScopeProvider, what TL001 used before) on where module-level names are bound and read,
on every scoping form Python has."""

from __future__ import annotations

import ast
import symtable
import textwrap

import libcst as cst
import libcst.metadata as metadata
import pytest

from torchlint.analysis.global_reads import global_reads
from torchlint.core.positions import rows_mentioning

NAMES = ("wandb", "mlflow", "init")

SOURCES = {
    "function, nested function, method": """
        import wandb
        def log(x):
            def inner():
                return wandb.log(x)
            return inner
        class Trainer:
            def fit(self):
                wandb.finish()
    """,
    "at import: call, decorator, attribute chain, class body": """
        import wandb
        from wandb import init
        wandb.init(project="p")
        init()
        wandb.util.generate_id()
        @wandb.watch
        def f(): pass
        @wandb.decorate(1)
        def g(): pass
        class C:
            table = wandb.Table
            @wandb.method_decorator()
            def m(self): pass
    """,
    "lambda and comprehensions at module level": """
        import wandb
        log = lambda x: wandb.log(x)
        tables = [wandb.Table() for _ in range(3)]
        names = {k: wandb for k in "ab"}
        gen = (x for x in wandb.items())
    """,
    "shadowing: parameters, locals, class bodies, comprehension targets": """
        import wandb
        def a(wandb):
            return wandb
        def b():
            wandb = 1
            return wandb
        def c():
            return [wandb for wandb in range(3)]
        def d():
            return [wandb.x for _ in range(3)]
        class E:
            wandb = None
            def m(self):
                return wandb
            x = wandb
        def f():
            for wandb in range(3):
                pass
        def g():
            with open("f") as wandb:
                pass
        def h():
            try:
                pass
            except Exception as wandb:
                pass
        def i():
            import wandb
            return wandb
        def j():
            def wandb():
                pass
    """,
    "global and nonlocal": """
        import wandb
        def a():
            global wandb
            wandb = None
        def b():
            wandb = 1
            def c():
                nonlocal wandb
                return wandb
        def d():
            wandb = 1
            def e():
                return wandb
            return e
    """,
    "annotations, evaluated": """
        import wandb
        def f(run: wandb.Run = wandb.run) -> wandb.Run:
            x: wandb.Local = None
            return x
        class C:
            field: wandb.Field
            def m(self, arg: wandb.Arg) -> "wandb.Str":
                pass
        value: wandb.Value = 1
        other: "wandb.Hint" = 2
    """,
    "annotations, postponed": """
        from __future__ import annotations
        import wandb
        def f(run: wandb.Run) -> wandb.Run:
            pass
        value: wandb.Value = 1
    """,
    "typing.cast and TypeVar with strings": """
        import typing
        import wandb
        from typing import cast, TypeVar
        x = cast("wandb.Run", None)
        T = TypeVar("T", bound="wandb.Run")
        y = typing.cast("wandb.Run", None)
        def f():
            return cast("wandb.Run", None)
    """,
    "several bindings and conditional imports": """
        try:
            import wandb
        except ImportError:
            wandb = None
        if wandb is not None:
            import mlflow
        else:
            mlflow = None
        def f():
            return wandb, mlflow
    """,
    "walrus, with, match, defaults": """
        import wandb
        if (run := wandb.init()):
            pass
        def f(a=wandb.config):
            with wandb.init() as run:
                match run:
                    case wandb.Run():
                        pass
                    case {"k": other}:
                        return other
            return [y for x in [1] if (z := x)]
    """,
    "nested classes and functions in blocks": """
        import mlflow
        if True:
            class A:
                class B:
                    def m(self):
                        return mlflow.log_metric
                def n(self):
                    def inner():
                        return mlflow
                    return inner
        else:
            def g():
                return mlflow
        for _ in range(1):
            def h():
                return mlflow
    """,
}


def _libcst_reads(source: str, names, postponed: bool) -> dict:
    """What TL001 computed with LibCST's ScopeProvider before (the oracle)."""
    module = cst.parse_module(source)
    wrapper = metadata.MetadataWrapper(module, unsafe_skip_copy=True)
    scopes = wrapper.resolve(metadata.ScopeProvider)
    positions = wrapper.resolve(metadata.PositionProvider)
    parents = {}
    stack = [module]
    in_code = set()
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            in_code.add(id(node))
        for child in node.children:
            parents[child] = node
            stack.append(child)
    scope = scopes[module]
    found = {}
    for name in names:
        functions, at_import, calls, annotations = [], False, False, False
        for assignment in scope.assignments[name]:
            for access in assignment.references:
                function, current = None, access.scope
                while current is not None and not isinstance(current, metadata.GlobalScope):
                    if isinstance(current, metadata.FunctionScope) and isinstance(current.node, cst.FunctionDef):
                        function = current.node
                    current = current.parent
                if function is not None:
                    key = (function.name.value, positions[function.name].start.line)
                    if key not in functions:
                        functions.append(key)
                    continue
                evaluated = True
                if access.is_annotation or access.is_type_hint:
                    evaluated = False if access.is_annotation and postponed else id(access.node) in in_code
                if not evaluated:
                    annotations = True
                    continue
                at_import = True
                child, parent = access.node, parents.get(access.node)
                if isinstance(parent, cst.Attribute) and parent.value is child:
                    child, parent = parent, parents.get(parent)
                called = isinstance(parent, cst.Call) and parent.func is child
                while called and parent is not None and not isinstance(parent, cst.SimpleStatementLine):
                    called = not isinstance(parent, cst.Decorator)
                    parent = parents.get(parent)
                calls = calls or called
        found[name] = (len(scope.assignments[name]), sorted(functions), at_import, calls, annotations)
    return found


def _ast_reads(source: str, names, postponed: bool) -> dict:
    found = global_reads(ast.parse(source).body, names, postponed, rows_mentioning(source, names))
    return {
        name: (r.bindings, sorted((f.name, f.lineno) for f in r.functions), r.at_import, r.calls_at_import,
               r.in_annotations)
        for name, r in found.items()
    }


@pytest.mark.parametrize("case", sorted(SOURCES))
def test_ast_reads_agree_with_libcst_scope_analysis(case):
    source = textwrap.dedent(SOURCES[case]).lstrip()
    postponed = "from __future__ import annotations" in source
    assert _ast_reads(source, NAMES, postponed) == _libcst_reads(source, NAMES, postponed)


def test_statements_that_do_not_mention_a_name_are_not_walked():
    source = "import wandb\n\n" + "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(50))
    source += "def last():\n    return wandb\n"
    tree = ast.parse(source)
    visited = []
    original = ast.iter_child_nodes

    def counting(node):
        visited.append(node)
        return original(node)

    ast.iter_child_nodes, saved = counting, ast.iter_child_nodes
    try:
        reads = global_reads(tree.body, ["wandb"], False, rows_mentioning(source, ["wandb"]))
    finally:
        ast.iter_child_nodes = saved
    assert [f.name for f in reads["wandb"].functions] == ["last"]
    assert len(visited) < 20


# Python makes a name local to a function that deletes it, captures it in a match
# pattern, or binds it with `:=` inside a comprehension; LibCST's scope analysis reads
# the module's name there. These follow Python (the function reads no module-level name).
PYTHON_LOCALS = {
    "del": "import wandb\ndef f():\n    wandb.init()\n    del wandb\n",
    "match capture": "import wandb\ndef f(x):\n    wandb.init()\n    match x:\n        case {'k': wandb}:\n            pass\n",
    "walrus in a comprehension": "import wandb\ndef f():\n    wandb.init()\n    return [y for y in [1] if (wandb := y)]\n",
}


@pytest.mark.parametrize("case", sorted(PYTHON_LOCALS))
def test_names_python_makes_local_are_not_module_reads(case):
    source = PYTHON_LOCALS[case]
    function = next(t for t in symtable.symtable(source, "<m>", "exec").get_children() if t.get_name() == "f")
    assert function.lookup("wandb").is_local()
    assert _ast_reads(source, ["wandb"], False)["wandb"][1] == []
