"""The base of the rules that rewrite one torch expression in place (TL301-TL303).

Each finds an expression (`torch.log(1 + x)`, `torch.exp(x) - 1`, `log(sum(exp(x), d))`)
spelled with torch functions or tensor methods under any import spelling, and offers an
unsafe rewrite (a different rounding is a different result); the rewrites of a file share
one torchlint.rule_api.name_rewrites group, so imports they leave unread go with them.

Cost: the sites one pass over the stdlib ast; per expression reported O(the expression)
(`has_comment`, the rewrite).
"""

from __future__ import annotations

import ast
from typing import Callable, ClassVar, Iterator, List, Optional, Tuple

from torchlint.core.config import Config
from torchlint.core.diagnostics import Applicability
from torchlint.rule_api.name_rewrites import RewriteGroup
from torchlint.core.gating import with_context
from torchlint.analysis.source_view import SourceView
from torchlint.rule_api.rule import Rule
from torchlint.analysis.torch_calls import ast_imports_torch, definitions_calling, has_comment


class TorchExpressionRule(Rule):
    fixable = True
    # the torch functions the expression calls (a renamed import of one is a trigger too)
    functions: ClassVar[Tuple[str, ...]] = ()

    @classmethod
    def sites(cls, view: SourceView, config: Config) -> Iterator[ast.AST]:
        """The expressions the stdlib ast finds in a file that imports torch, and the
        definitions that call the functions (the visitor judges each expression again)."""
        if not ast_imports_torch(view.imports):
            return iter(())
        return with_context(cls.ast_expressions(view), lambda: definitions_calling(view, cls.triggers, *cls.functions))

    @classmethod
    def ast_expressions(cls, view: SourceView) -> Iterator[ast.AST]:
        """The stdlib-ast nodes that spell the expression."""
        raise NotImplementedError

    def __init__(self, context) -> None:
        super().__init__(context)
        self._rewrites = RewriteGroup.of(context)
        self._indents: List[str] = []  # the indentation each block around the visited node adds

    def visit_IndentedBlock(self, node) -> None:
        self._indents.append(node.indent if node.indent is not None else self.context.module.default_indent)

    def leave_IndentedBlock(self, node) -> None:
        self._indents.pop()

    @property
    def block_indent(self) -> str:
        """The indentation of the statement around the visited expression, for rewrites that
        span rows (`torch_calls.code_at_indent`)."""
        return "".join(self._indents)

    def report_rewrite(self, node, message: str, rewrite: Callable[[], Optional[str]]) -> None:
        """Report `node`, with the unsafe fix that replaces it by `rewrite()` (none when a
        comment inside would be lost or `rewrite()` is None)."""
        content = None if has_comment(node) else rewrite()
        fix = None
        if content is not None:
            fix = self._rewrites.fix(self.code, node, content, f"Use `{content}`", Applicability.UNSAFE)
        self.report(node, message, fix)
