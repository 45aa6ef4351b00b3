"""Every rule's own VALID and INVALID examples, run through the real engine and fixer."""

from __future__ import annotations

import pytest

from rule_support import findings
from torchlint.engine import lint_text
from torchlint.index.resolver import project_findings
from torchlint.fixing.apply import fix_text
from torchlint.rule_api.registry import all_rules

RULES = all_rules()
# rules whose examples' fixes come from the project pass (run on the one file, as `check`
# runs it). TL002's and TL004's examples expect the fixes of the file pass alone: four of
# them get a fix from the project pass that they do not list (issue 31, second round).
FIXED_IN_PROJECT_PASS = frozenset({"TL201"})
DOC_HEADINGS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety")


VALID = [(rule, index, code) for rule in RULES for index, code in enumerate(rule.VALID)]
INVALID = [(rule, index, example) for rule in RULES for index, example in enumerate(rule.INVALID)]


@pytest.mark.parametrize("rule,index,code", VALID, ids=[f"{r.code}-valid-{i}" for r, i, _ in VALID])
def test_valid_example_is_clean(rule, index, code):
    diagnostics, _ = findings(rule, code)
    assert diagnostics == []


@pytest.mark.parametrize(
    "rule,index,example", INVALID, ids=[f"{r.code}-invalid-{i}" for r, i, _ in INVALID]
)
def test_invalid_example_is_flagged_and_fixed(rule, index, example):
    diagnostics, config = findings(rule, example.code, example.options)
    assert diagnostics, f"{rule.code} did not flag:\n{example.code}"
    assert all(d.code == rule.code for d in diagnostics)
    first = diagnostics[0]
    if example.line is not None:
        assert first.location.row == example.line
    if example.column is not None:
        assert first.location.column == example.column

    def lint(text):
        result = lint_text(text, "example.py", config, [rule])
        if rule.code in FIXED_IN_PROJECT_PASS and result.facts is not None:
            result.diagnostics = list(result.diagnostics) + project_findings({"example.py": result.facts}, [rule], config)
        return result

    expectations = ((False, example.fixed), (True, example.unsafe_fixed or example.fixed))
    for unsafe, expected in expectations:
        outcome = fix_text(example.code, lint, unsafe)
        if expected is None:
            assert not outcome.changed, f"unexpected fix (unsafe={unsafe}):\n{outcome.text}"
            continue
        assert outcome.text == expected
        assert not fix_text(outcome.text, lint, unsafe).changed, "a second --fix changed the file"


def test_every_rule_has_examples_and_a_doc():
    for rule in RULES:
        assert rule.VALID and rule.INVALID, rule.code
        doc = rule.info().doc
        for heading in DOC_HEADINGS:
            assert heading in doc, f"{rule.code} doc lacks {heading!r}"
        assert rule.code.startswith("TL") and len(rule.code) == 5 and rule.code[2:].isdigit()
        assert rule.name == rule.name.lower() and " " not in rule.name and "_" not in rule.name
