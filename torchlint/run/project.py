"""The project pass: findings that wait for other files, decided over every file's record, or read from the cache when
nothing changed."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence

from torchlint.core.diagnostics import Diagnostic
from torchlint.rule_api.registry import all_rules
from torchlint.index.resolver import project_findings
from torchlint.run.cache import Cache
from torchlint.run.jobs import relative_path

if TYPE_CHECKING:
    from torchlint.run.jobs import FileOutcome, RunSettings


def cached_project_pass(
    outcomes: Sequence[FileOutcome], settings: RunSettings, cache: Optional[Cache]
) -> List[Diagnostic]:
    """The project pass, or in check mode its cached findings when no file (nor rule,
    setting or torchlint itself) changed since the run that stored them."""
    if cache is None or settings.mode != "check" or any(o.key is None or o.errors for o in outcomes):
        return project_pass(outcomes, settings)
    files = [(relative_path(outcome.display, settings.config), outcome.key) for outcome in outcomes]
    found = cache.project(files)
    if found is None:
        found = _by_linted_name(outcomes, settings)
        cache.put_project(files, found)
    return _displayed(found, outcomes, settings)


def project_pass(outcomes: Sequence[FileOutcome], settings: RunSettings) -> List[Diagnostic]:
    """The findings that wait for other files, decided over every file's record (each
    decoded once here)."""
    return _displayed(_by_linted_name(outcomes, settings), outcomes, settings)


def _by_linted_name(outcomes: Sequence[FileOutcome], settings: RunSettings) -> List[Diagnostic]:
    """The project pass's findings, named as the files were linted (their `relative_path`): the
    same wherever the run starts, so that the cache can keep them."""
    rules = [rule for rule in all_rules() if rule.project_rule and rule.code in settings.codes]
    if not rules:
        return []
    records = {}
    for outcome in outcomes:
        record = outcome.record.decode()
        if record is not None:
            records[relative_path(outcome.display, settings.config)] = record
    return project_findings(records, rules, settings.config)


def _displayed(diagnostics: List[Diagnostic], outcomes: Sequence[FileOutcome], settings: RunSettings) -> List[Diagnostic]:
    """The findings under the names the run shows its files by."""
    names: Dict[str, str] = {relative_path(outcome.display, settings.config): outcome.display for outcome in outcomes}
    return [replace(d, filename=names.get(d.filename, d.filename)) for d in diagnostics]
