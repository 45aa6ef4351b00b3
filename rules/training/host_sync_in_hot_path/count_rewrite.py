"""The expressions around the counts a loss reads on the host, rewritten to tensor code (for TL003's
mining fix, `mining_fix`): `int(t.item())` -> `t.detach().long()`, `int(e)` of a count or a tensor
-> `e.long()`, `min`/`max` with a count -> `clamp_max`/`clamp_min`, `a if c else b` on a count ->
`torch.where(c, a, b)`, arithmetic and comparisons through; anything else that holds a count fails.

Cost: `rewrite` is O(the expression): each node is rewritten or, left as written, walked once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Set, Tuple

from torchlint.analysis.scopes import own_nodes
from torchlint.analysis.value_kinds import Kind
from torchlint.core.lazy import cst
from torchlint.rules.training.host_sync_in_hot_path.syncs import sync_method
from torchlint.rules.training.host_sync_in_hot_path.value_uses import ARITHMETIC

_COMPARISONS = ("Equal", "NotEqual", "LessThan", "LessThanEqual", "GreaterThan", "GreaterThanEqual")


class NoRewrite(Exception):
    """A count is used where the rewrite does not know the tensor form."""


@dataclass(frozen=True)
class _Code:
    text: Optional[str]  # None: the node's own text
    tensor: bool  # a tensor after the rewrite
    atomic: bool  # takes a trailing `.method()` without parentheses


class CountRewriter:
    """Rewrites expressions over `counts` (names already rewritten to 0-dim tensors); records the
    syncs it removes and the count reads it consumed."""

    def __init__(self, module, kinds, imports, torch_name: Optional[str]) -> None:
        self.module = module
        self.kinds = kinds
        self.imports = imports
        self.torch = torch_name
        self.counts: Set[str] = set()
        self.syncs: List = []
        self.reads: Set[int] = set()  # ids of the count reads a rewrite consumed
        self._read_log: List[int] = []  # the same, in order, for `undo`

    def mark(self) -> Tuple[int, int]:
        return len(self.syncs), len(self._read_log)

    def undo(self, mark: Tuple[int, int]) -> None:
        """Forget the syncs and reads a failed rewrite recorded since `mark`."""
        del self.syncs[mark[0]:]
        while len(self._read_log) > mark[1]:
            self.reads.discard(self._read_log.pop())

    def text(self, node, code: _Code) -> str:
        return code.text if code.text is not None else self.module.code_for_node(node)

    def atom(self, node, code: _Code) -> str:
        text = self.text(node, code)
        whole = code.atomic if code.text is not None else atomic(node)
        return text if whole else f"({text})"

    def rewrite(self, node) -> _Code:
        kind = type(node)
        if kind is cst.Name:
            if node.value in self.counts:
                self.reads.add(id(node))
                self._read_log.append(id(node))
                return _Code(None, True, True)
            return _Code(None, self._tensor(node), True)
        if kind is cst.Call:
            return self._call(node)
        if kind is cst.BinaryOperation and type(node.operator).__name__ in ARITHMETIC:
            return self._joined(node, (node.left, node.operator, node.right))
        if kind is cst.UnaryOperation and isinstance(node.operator, (cst.Minus, cst.Plus)):
            return self._joined(node, (node.operator, node.expression))
        if kind is cst.Comparison and all(type(t.operator).__name__ in _COMPARISONS for t in node.comparisons):
            parts: list = [node.left]
            for target in node.comparisons:
                parts += [target.operator, target.comparator]
            return self._joined(node, tuple(parts))
        if kind is cst.IfExp:
            return self._branch(node.test, node.body, node.orelse)
        if self.mentions(node):
            raise NoRewrite
        return _Code(None, self._tensor(node), atomic(node))

    def branch_text(self, test, body, orelse) -> str:
        code = self._branch(test, body, orelse)
        if code.text is None:
            raise NoRewrite
        return code.text

    def _branch(self, test, body, orelse) -> _Code:
        condition, first, second = self.rewrite(test), self.rewrite(body), self.rewrite(orelse)
        if not condition.tensor:
            if (condition.text, first.text, second.text) != (None, None, None):
                raise NoRewrite
            return _Code(None, first.tensor and second.tensor, False)
        if self.torch is None or not (first.tensor or second.tensor):
            raise NoRewrite
        texts = (self.text(test, condition), self.text(body, first), self.text(orelse, second))
        return _Code(f"{self.torch}.where({', '.join(texts)})", True, True)

    def _joined(self, node, parts: tuple) -> _Code:
        """Arithmetic or a comparison: its operands rewritten, its operators as written."""
        codes = [None if isinstance(part, cst.CSTNode) and _is_operator(part) else self.rewrite(part) for part in parts]
        tensor = any(code is not None and code.tensor for code in codes)
        if all(code is None or code.text is None for code in codes):
            return _Code(None, tensor, bool(node.lpar))
        body = "".join(
            self.module.code_for_node(part) if code is None else self.text(part, code) for part, code in zip(parts, codes)
        )
        if node.lpar:
            return _Code(f"({body})", tensor, True)
        return _Code(body, tensor, False)

    def _call(self, node) -> _Code:
        func = node.func
        if self._sync(node):
            if self.mentions(func.value):
                raise NoRewrite
            self.syncs.append(node)
            return _Code(f"{self.module.code_for_node(func.value)}.detach()", True, True)
        plain = all(arg.keyword is None and not arg.star for arg in node.args)
        if isinstance(func, cst.Name) and plain and self.imports.qualified_name(func) is None:
            if func.value == "int" and len(node.args) == 1:
                value = node.args[0].value
                inner = self.rewrite(value)
                if inner.tensor:
                    return _Code(f"{self.atom(value, inner)}.long()", True, True)
                if inner.text is None:
                    return _Code(None, False, True)
                raise NoRewrite
            if func.value in ("min", "max") and len(node.args) == 2:
                return self._bound(func.value, node.args[0].value, node.args[1].value)
        if self.mentions(node):
            raise NoRewrite
        return _Code(None, self._tensor(node), True)

    def _bound(self, which: str, first, second) -> _Code:
        codes = [self.rewrite(first), self.rewrite(second)]
        if not any(code.tensor for code in codes):
            if codes[0].text is None and codes[1].text is None:
                return _Code(None, False, True)
            raise NoRewrite
        nodes = [first, second]
        if not codes[0].tensor:
            nodes.reverse()
            codes.reverse()
        method = "clamp_max" if which == "min" else "clamp_min"
        return _Code(f"{self.atom(nodes[0], codes[0])}.{method}({self.text(nodes[1], codes[1])})", True, True)

    def _sync(self, call) -> bool:
        return sync_method(call) == "item" and self.kinds.kind(call.func.value) is not Kind.HOST

    def _tensor(self, node) -> bool:
        return self.kinds.kind(node) is Kind.TENSOR

    def mentions(self, node) -> bool:
        """Whether a subtree left as written holds a count or a sync this rewrite must change."""
        for inner in own_nodes(node):
            if type(inner) is cst.Name and inner.value in self.counts:
                return True
            if type(inner) is cst.Call and self._sync(inner):
                return True
        return False


def atomic(node) -> bool:
    return isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or bool(getattr(node, "lpar", None))


def _is_operator(node) -> bool:
    return isinstance(node, (cst.BaseBinaryOp, cst.BaseUnaryOp, cst.BaseCompOp))
