"""Running one rule on one snippet as the CLI would, project pass included."""

from __future__ import annotations

from dataclasses import replace
from typing import List, Tuple

from torchlint.core.config import Config
from torchlint.engine import lint_text
from torchlint.index.resolver import project_findings


def config_for(rule, options=()) -> Config:
    """The default config with `options` set for `rule`."""
    config = Config()
    if options:
        config = replace(config, rule_options=((rule.name, tuple(options)),))
    return config


def findings(rule, text: str, options=(), path: str = "example.py") -> Tuple[List, Config]:
    """The rule's findings on `text` (its project pass run on this one file) and the config used."""
    config = config_for(rule, options)
    result = lint_text(text, path, config, [rule])
    assert not result.errors, result.errors
    diagnostics = list(result.diagnostics)
    if result.facts is not None:
        diagnostics += project_findings({path: result.facts}, [rule], config)
    return diagnostics, config
