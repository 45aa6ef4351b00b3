"""The base of the rules that rewrite one torch expression in place (TL301-TL303).

Each finds an expression (`torch.log(1 + x)`, `torch.exp(x) - 1`, `log(sum(exp(x), d))`)
spelled with torch functions or tensor methods under any import spelling, and offers an
unsafe rewrite (a different rounding is a different result); the rewrites of a file share
one torchlint.fixing.name_rewrites group, so imports they leave unread go with them.
"""

from __future__ import annotations

from typing import AbstractSet, Callable, ClassVar, Optional, Tuple

from torchlint.core.config import Config
from torchlint.core.diagnostics import Applicability
from torchlint.fixing.name_rewrites import RewriteGroup
from torchlint.core.rule import Rule, SourceView
from torchlint.analysis.torch_calls import ast_imports_torch, call_definitions, has_comment


class TorchExpressionRule(Rule):
    fixable = True
    # the torch functions the expression calls (a renamed import of one is a trigger too)
    functions: ClassVar[Tuple[str, ...]] = ()

    @classmethod
    def needed_definitions(cls, view: SourceView, config: Config) -> Optional[AbstractSet[int]]:
        return call_definitions(view, cls.triggers, *cls.functions)

    @classmethod
    def gate(cls, view: SourceView, config: Config) -> bool:
        if view.tree is None:
            return True
        return ast_imports_torch(view.imports) and cls.ast_may_fire(view)

    @classmethod
    def ast_may_fire(cls, view: SourceView) -> bool:
        """Whether the stdlib ast holds the expression (the gate, after the torch import)."""
        raise NotImplementedError

    def __init__(self, context) -> None:
        super().__init__(context)
        self._rewrites = RewriteGroup.of(context)

    def report_rewrite(self, node, message: str, rewrite: Callable[[], Optional[str]]) -> None:
        """Report `node`, with the unsafe fix that replaces it by `rewrite()` (none when a
        comment inside would be lost or `rewrite()` is None)."""
        content = None if has_comment(node) else rewrite()
        fix = None
        if content is not None:
            fix = self._rewrites.fix(self.code, node, content, f"Use `{content}`", Applicability.UNSAFE)
        self.report(node, message, fix)
