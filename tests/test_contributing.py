"""CONTRIBUTING.md's example rule is a whole, working rule: loaded from the page, its
examples go through the same checks as every registered rule's, so the page cannot rot."""

from __future__ import annotations

import types

import pytest

from cli_support import REPO
from docs_blocks import blocks
import test_rule_examples as every_rule
from torchlint.rule_api.rule import Rule


def _example_rule() -> type:
    [block] = [block for block in blocks(REPO / "CONTRIBUTING.md") if block.lang == "python"]
    module = types.ModuleType("contributing_example")
    exec(compile(block.text, block.where, "exec"), module.__dict__)
    [rule] = [value for value in vars(module).values() if isinstance(value, type) and issubclass(value, Rule) and value is not Rule]
    return rule


RULE = _example_rule()


@pytest.mark.parametrize("index", range(len(RULE.VALID)))
def test_example_rule_valid_examples_are_clean(index):
    every_rule.test_valid_example_is_clean(RULE, index, RULE.VALID[index])


@pytest.mark.parametrize("index", range(len(RULE.INVALID)))
def test_example_rule_invalid_examples_are_flagged_and_fixed(index):
    every_rule.test_invalid_example_is_flagged_and_fixed(RULE, index, RULE.INVALID[index])


def test_example_rule_has_the_doc_headings_every_rule_has():
    doc = RULE.info().doc
    assert all(heading in doc for heading in every_rule.DOC_HEADINGS)
