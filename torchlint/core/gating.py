"""What the engine derives from the sites where a rule can fire (`Rule.sites`).

A rule names the stdlib-ast nodes where it could fire; the file's tree among them means
"anywhere". Both engine questions follow from those nodes: whether the file needs
LibCST at all for this rule (any site: the gate), and which top-level definitions LibCST
must parse (those holding a site; all of them if the tree is a site), so that a large
model file with one checkpoint call parses one class, not the file.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from torchlint.core.partial_parse import definitions_around


@dataclass
class RuleSites:
    """What is known of one rule's sites in one file: whether it has any, and all of
    them. Plain data: a suspended walk kept here would tie the view to itself and keep
    every file's tree alive until the cycle collector runs."""

    has_site: Optional[bool] = None
    sites: Optional[List[ast.AST]] = None


def may_fire(rule: type, view, config) -> bool:
    """The rule's gate: whether it has a site in the file. A generator is drawn to its
    first site only; `definitions_needed` asks the rule again for all of them."""
    known = view.rule_sites.setdefault(rule, RuleSites())
    if known.has_site is None:
        sites = rule.sites(view, config)
        if isinstance(sites, (list, tuple)):  # found whole already: keep them
            known.sites = list(_in_parsed_file(view, sites))
            known.has_site = bool(known.sites)
        else:
            drawn = _in_parsed_file(view, sites)
            known.has_site = next(drawn, None) is not None
            drawn.close()
    return known.has_site


def definitions_needed(rule: type, view, config) -> Optional[Set[int]]:
    """The top-level definitions (indexes in `view.tree.body`) holding the rule's sites;
    None (all of them) when the whole tree is a site."""
    sites = all_sites(rule, view, config)
    if any(isinstance(site, ast.Module) for site in sites):
        return None
    return definitions_around(view, sites)


def all_sites(rule: type, view, config) -> List[ast.AST]:
    """Every site of the rule in the file, asked of the rule once."""
    known = view.rule_sites.setdefault(rule, RuleSites())
    if known.sites is None:
        known.sites = list(_in_parsed_file(view, rule.sites(view, config)))
    return known.sites


def has_site_within(rule: type, view, config, spans: Sequence[Tuple[int, int]]) -> bool:
    """Whether the rule has a site that starts in one of the (first row, last row) spans, or
    the whole tree as a site."""
    return any(
        isinstance(site, ast.Module) or any(first <= site.lineno <= last for first, last in spans)
        for site in all_sites(rule, view, config)
    )


def site_rows(view, config, rules) -> List[int]:
    """The rows where the sites of these rules start: the methods holding none need no
    LibCST parse."""
    return [site.lineno for rule in rules for site in all_sites(rule, view, config) if hasattr(site, "lineno")]


def _in_parsed_file(view, sites: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """The sites, none in a file that does not parse. The tree is asked for only once a
    site is drawn, after the rule's own text tests: where nothing has parsed the file yet
    (bench/prefilter.py), a file none of them passes is never parsed."""
    for site in sites:
        if view.tree is None:
            return
        yield site


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
