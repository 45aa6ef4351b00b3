"""Fixes that stop reading a name imported bare, with the import they leave unused.

`log(1 + x)` after `from torch import log` becomes `torch.log1p(x)` or `x.log1p()`: the
rewrite no longer reads `log`. When the rewrites one rule makes in a file take away every
read of such a name, the name's import must go too (or flake8 reports F401), and in the
same fix: a fix that removed the import while another use stayed would leave an undefined
name. So every rewrite that drops a read is collected, across the rules that share the
file (`log(exp(x).sum(1))` is TL303's, `log(1 + x)` TL301's), and each one's fix is, when
some import ends up unread, all of them together with the import edits (the fixer
applies one and drops the others as overlapping; the re-lint then finds nothing left),
else the rewrite alone.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence
from weakref import WeakKeyDictionary

from torchlint.core.diagnostics import Applicability, Edit, Fix
from torchlint.fixing.import_edits import block_lengths, module_level_binding, name_reads, remove_aliases
from torchlint.rule_api.rule import FixFactory, Positions, RuleContext
from torchlint.core.walk import ast_nodes


def _names(code: str) -> Counter:
    try:
        tree = ast.parse(f"({code.strip()})", mode="eval")
    except SyntaxError:
        return Counter()
    return Counter(node.id for node in ast_nodes(tree) if isinstance(node, ast.Name))


@dataclass
class _Rewrite:
    code: str  # the rule's
    node: object
    content: str
    dropped: Counter  # bare imported names the rewrite reads fewer times than the code did


class RewriteGroup:
    """The rewrites the rules make in one file (`RewriteGroup.of(context)`)."""

    def __init__(self, context: RuleContext) -> None:
        self.context = context
        self.rewrites: List[_Rewrite] = []

    @classmethod
    def of(cls, context: RuleContext) -> "RewriteGroup":
        """The file's group, shared by every rule that rewrites calls in it."""
        group = _GROUPS.get(context)
        if group is None:
            group = _GROUPS[context] = cls(context)
        return group

    def fix(self, code: str, node, content: str, message: str, applicability: Applicability) -> FixFactory:
        """The fix that replaces `node` by `content` (and, if that is part of making an
        import unread, the rewrites and import edits that go with it)."""
        table = self.context.imports.table
        dropped = _names(self.context.module.code_for_node(node)) - _names(content)
        bare = Counter({name: count for name, count in dropped.items() if "." in table.get(name, "")})
        rewrite = _Rewrite(code, node, content, bare)
        if bare:
            self.rewrites.append(rewrite)

        def fix(positions: Positions) -> Fix:
            single = Fix(message, (positions.replace(node, content),), applicability)
            if not bare:
                return single
            return self._together(positions, message, applicability) or single

        return fix

    def _together(self, positions: Positions, message: str, applicability: Applicability) -> Optional[Fix]:
        # a rewrite hidden by `# noqa` is not made, so its reads stay
        live = [r for r in self.rewrites if not self._suppressed(positions, r)]
        dropped: Counter = Counter()
        for rewrite in live:
            dropped.update(rewrite.dropped)
        unread = [name for name, count in dropped.items() if name_reads(self.context.view, name) == count]
        removals = self._import_removals(positions, unread)
        if not removals:
            return None
        edits = [positions.replace(r.node, r.content) for r in live] + removals
        ordered = sorted(edits, key=lambda edit: (edit.start, edit.end))
        if any(b.start < a.end for a, b in zip(ordered, ordered[1:])):
            return None
        return Fix(message, tuple(ordered), applicability)

    def _suppressed(self, positions: Positions, rewrite: _Rewrite) -> bool:
        row = positions.start(rewrite.node).row
        return not self.context.flake8 and self.context.suppressions.suppresses(row, rewrite.code)

    def _import_removals(self, positions: Positions, names: Sequence[str]) -> List[Edit]:
        """Edits that take `names` out of their import statements; none if any cannot go."""
        by_import: Dict[int, list] = {}
        for name in names:
            binding = module_level_binding(self.context.module, name)
            if binding is None:
                return []
            by_import.setdefault(id(binding[1]), [binding[0], binding[1], []])[2].append(binding[2])
        lengths = block_lengths(self.context.module)
        edits = []
        for line, node, aliases in by_import.values():
            edit = remove_aliases(line, node, aliases, positions, positions.lines, lengths.get(id(line), 0))
            if edit is None:
                return []
            edits.append(edit)
        return edits


_GROUPS: "WeakKeyDictionary[RuleContext, RewriteGroup]" = WeakKeyDictionary()
