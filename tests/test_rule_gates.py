"""A rule's sites never hide a finding: run without them (the whole file parsed, every
rule asked), each rule's findings on its own examples and on fixtures/ lie where its
derived gate holds and inside the top-level definitions its sites make LibCST parse."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

from rule_support import config_for
from torchlint.core.config import Config, load_config
from torchlint.engine import lint_text
from torchlint.core.gating import definitions_needed, may_fire
from torchlint.core.parse import elide_data
from torchlint.rule_api.registry import all_rules, option_defaults, rule_codes
from torchlint.analysis.source_view import SourceView
from torchlint.index.resolver import project_findings

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RULES = all_rules()


def ungated(rule: type) -> type:
    """The rule with the whole file as its only site."""
    return type(rule.__name__, (rule,), {"sites": classmethod(lambda cls, view, config: (view.tree,))})


def found_rows(rule: type, text: str, path: str, config: Config) -> List[int]:
    """The rows where the rule, run without its sites, reports (its one-file project pass included)."""
    free = ungated(rule)
    result = lint_text(text, path, config, [free])
    assert not result.errors, result.errors
    diagnostics = list(result.diagnostics)
    if result.facts is not None:
        diagnostics += project_findings({path: result.facts}, [free], config)
    return [d.location.row for d in diagnostics if d.code == rule.code]


def definition_at(view: SourceView, row: int):
    """The index in `view.tree.body` of the top-level def or class spanning `row`, else None."""
    for index, (first, last) in enumerate(view.statement_spans):
        if first <= row <= last:
            kind = view.tree.body[index]
            return index if isinstance(kind, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else None
    return None


def assert_sites_cover(rule: type, text: str, path: str, config: Config) -> int:
    rows = found_rows(rule, text, path, config)
    if not rows:
        return 0
    view = SourceView(text, path, None, elide_data(text))
    assert may_fire(rule, view, config), f"{rule.code} reports at rows {rows} of a file where it has no site"
    needed = definitions_needed(rule, view, config)
    if needed is not None:
        for row in rows:
            definition = definition_at(view, row)
            assert definition is None or definition in needed, f"{rule.code} reports at row {row}, in a definition not parsed"
    return len(rows)


def examples() -> Iterator[Tuple[str, type, str, tuple]]:
    for rule in RULES:
        for number, text in enumerate(rule.VALID):
            yield f"{rule.code}-valid-{number}", rule, text, ()
        for number, example in enumerate(rule.INVALID):
            yield f"{rule.code}-invalid-{number}", rule, example.code, example.options


EXAMPLES = list(examples())


@pytest.mark.parametrize("rule, text, options", [case[1:] for case in EXAMPLES], ids=[case[0] for case in EXAMPLES])
def test_sites_cover_the_findings_of_every_example(rule, text, options):
    assert_sites_cover(rule, text, "example.py", config_for(rule, options))


def test_sites_cover_the_findings_in_fixtures():
    config = load_config(None, FIXTURES, option_defaults(), rule_codes())
    checked = 0
    for path in sorted(FIXTURES.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        display = path.relative_to(FIXTURES).as_posix()
        for rule in RULES:
            checked += assert_sites_cover(rule, text, display, config)
    assert checked >= 50  # the fixtures hold this many findings at least: the check ran


CHECKPOINT = "from torch.utils.checkpoint import checkpoint\n\ndef f(x):\n    return checkpoint(g, x)\n"


@pytest.mark.parametrize(
    "sites, complaint",
    [
        (lambda cls, view, config: (), "no site"),
        (lambda cls, view, config: [view.tree.body[0]], "not parsed"),  # the import, not `f`
    ],
)
def test_sites_that_miss_a_finding_are_caught(sites, complaint):
    rule = next(rule for rule in RULES if rule.code == "TL202")
    wrong = type(rule.__name__, (rule,), {"sites": classmethod(sites)})
    with pytest.raises(AssertionError, match=complaint):
        assert_sites_cover(wrong, CHECKPOINT, "example.py", Config())
