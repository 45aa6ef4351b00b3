"""What the engine derives from the sites where a rule can fire (`Rule.sites`).

A rule names the stdlib-ast nodes where it could fire; the file's tree among them means
"anywhere". Both engine questions follow from those nodes: whether the file needs
LibCST at all for this rule (any site: the gate), and which top-level definitions LibCST
must parse (those holding a site; all of them if the tree is a site), so that a large
model file with one checkpoint call parses one class, not the file.
"""

from __future__ import annotations

import ast
from typing import Callable, Iterable, Iterator, List, Optional, Set

from torchlint.core.partial_parse import definitions_around


class RuleSites:
    """One rule's sites in one file, drawn from `Rule.sites` only as far as asked: the
    gate needs the first, the definitions all of them."""

    def __init__(self, found: Iterable[ast.AST]) -> None:
        self._pending = iter(found)
        self._drawn: List[ast.AST] = []

    def any(self) -> bool:
        if not self._drawn:
            first = next(self._pending, None)
            if first is None:
                return False
            self._drawn.append(first)
        return True

    def all(self) -> List[ast.AST]:
        self._drawn.extend(self._pending)
        return self._drawn


def rule_sites(rule: type, view, config) -> RuleSites:
    """The rule's sites in the view's file, asked of the rule once per file."""
    found = view.rule_sites.get(rule)
    if found is None:
        found = view.rule_sites[rule] = RuleSites(rule.sites(view, config) if view.tree is not None else ())
    return found


def may_fire(rule: type, view, config) -> bool:
    """The rule's gate: whether it has a site in the file."""
    return rule_sites(rule, view, config).any()


def definitions_needed(rule: type, view, config) -> Optional[Set[int]]:
    """The top-level definitions (indexes in `view.tree.body`) holding the rule's sites;
    None (all of them) when the whole tree is a site."""
    sites = rule_sites(rule, view, config).all()
    if any(isinstance(site, ast.Module) for site in sites):
        return None
    return definitions_around(view, sites)


def with_context(found: Iterable[ast.AST], context: Callable[[], Iterable[ast.AST]]) -> Iterator[ast.AST]:
    """The sites of a rule that fires at `found` and, when it does, also reads what
    `context()` names (the definitions its fix or its judgement needs parsed)."""
    found = iter(found)
    first = next(found, None)
    if first is None:
        return
    yield first
    yield from found
    yield from context()
