"""`scopes.owned_nodes` (TL004's instance flow) places nodes by position; it must
give each def, lambda, class and the module exactly the nodes a walk of its own body
(`scopes.ast_own_nodes`) finds."""

from __future__ import annotations

import ast
import textwrap

from hypothesis import HealthCheck, given, settings, strategies as st

from fuzz_strategies import salted_hypothesmith, torch_programs
from torchlint.analysis.scopes import ast_own_nodes, owned_nodes
from torchlint.analysis.source_view import SourceView

KINDS = (ast.Call, ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.Return, ast.Name)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


class _Body:
    def __init__(self, body) -> None:
        self.body = body


def walked(tree: ast.Module) -> dict:
    """What each scope owns, by walking its body as the instance flow used to."""
    found = {None: [node for node in ast_own_nodes(tree) if isinstance(node, KINDS)]}
    for scope in ast.walk(tree):
        if isinstance(scope, SCOPES):
            body = _Body([ast.Expr(scope.body)]) if isinstance(scope, ast.Lambda) else scope
            found[scope] = [node for node in ast_own_nodes(body) if isinstance(node, KINDS)]
    return {owner: sorted(map(id, nodes)) for owner, nodes in found.items() if nodes}


def placed(view: SourceView) -> dict:
    owned = owned_nodes(view, view.nodes_of(*KINDS))
    return {owner: sorted(map(id, nodes)) for owner, nodes in owned.items()}


def assert_same_owners(text: str) -> None:
    view = SourceView(text)
    if view.tree is None:
        return
    assert placed(view) == walked(view.tree)


def test_decorators_defaults_annotations_and_bases_belong_to_nobody():
    assert_same_owners(
        textwrap.dedent(
            """
            import torch
            x = make(a := 1)

            @decorate(lambda f: wrap(f))
            def outer(critic=build(), *, flag: hint() = False) -> ret():
                \"\"\"Doc.\"\"\"
                y = [critic(z) for z in range(3)]

                @inner_decorator(1)
                def inner(d=default()):
                    return d(x)

                class Local(Base(y)):
                    attr = field()

                    def method(self):
                        self.value = compute()

                return inner(lambda q=late(): q(y)), Local

            @(lambda cls: cls)
            class Model(torch.nn.Module, metaclass=meta()):
                size = 3

                if flag():
                    def forward(self, x): return self.net(x); other(x)
                else:
                    async def forward(self, x):
                        return await go(x)

            if ready():
                def late_def(): return run()
                value = late_def()
            f = lambda a, b=default(): (a(b), lambda: deep())
            """
        )
    )


def test_the_nodes_of_one_line_and_of_semicolon_statements():
    assert_same_owners("def f(): a = g(); return h(a)\nclass C: x = k(); y = lambda: m()\nz = f()\n")


@settings(max_examples=40, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(torch_programs(), salted_hypothesmith()))
def test_placed_by_position_equals_walked(program):
    assert_same_owners(program.text)
