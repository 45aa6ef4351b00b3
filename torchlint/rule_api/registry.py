"""Rules are discovered from the `torchlint.rules` package: one rule per module, in
family folders, a large rule a package of its own."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from types import ModuleType
from typing import Dict, FrozenSet, Iterable, List, Sequence, Tuple

from torchlint.core import large_files as large_text
from torchlint.core.diagnostics import SYNTAX_CODE, RuleInfo
from torchlint.rule_api.rule import Rule
from torchlint.rule_api.rules_package import rules_package

SYNTAX_ERROR = RuleInfo(
    code=SYNTAX_CODE,
    name="unparsable-file",
    summary="The file cannot be read or parsed",
    doc=(
        "## What it does\n"
        "Reports a file that cannot be decoded or parsed as Python, and a file too large to "
        f"lint: more than {large_text.MAX_LINES:,} lines or {large_text.MAX_CHARS // 2**20} MiB, or, "
        f"in a file of more than {large_text.LARGE_STATEMENTS:,} top-level statements, more than "
        f"{large_text.LARGE_STATEMENTS:,} that hold what rules look for.\n\n"
        "## Why is this bad?\n"
        "No rule can check a file that does not parse; the rest of the run goes on.\n\n"
        "## Example\n```python\ndef f(:\n```\n\n"
        "## Use instead\nFix the syntax error.\n\n"
        "## Fix safety\nNo fix."
    ),
    fixable=False,
    level="error",
)


@lru_cache(maxsize=None)
def all_rules() -> Tuple[type, ...]:
    """Every rule class, sorted by code."""
    package = rules_package()
    found: List[type] = []
    for module_info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if isinstance(value, ModuleType):  # touching a lazy module would import it
                continue
            if (
                isinstance(value, type)
                and issubclass(value, Rule)
                and value is not Rule
                and value.__module__ == module.__name__
            ):
                found.append(value)
    found.sort(key=lambda rule: rule.code)
    codes = [rule.code for rule in found]
    duplicates = {code for code in codes if codes.count(code) > 1}
    if duplicates:
        raise RuntimeError(f"rule codes used twice: {sorted(duplicates)}")
    return tuple(found)


def rule_infos() -> Dict[str, RuleInfo]:
    infos = {SYNTAX_ERROR.code: SYNTAX_ERROR}
    infos.update((rule.code, rule.info()) for rule in all_rules())
    return infos


def find_rule(code_or_name: str):
    for rule in all_rules():
        if code_or_name.upper() == rule.code or code_or_name == rule.name:
            return rule
    return None


def option_defaults() -> Dict[str, Dict]:
    return {rule.name: dict(rule.options) for rule in all_rules() if rule.options}


def select_rules(
    rules: Sequence[type], select: Sequence[str], extend_select: Sequence[str], ignore: Sequence[str]
) -> Tuple[type, ...]:
    """Rules enabled by select/ignore, as ruff does: the longest matching selector wins."""
    chosen = []
    for rule in rules:
        if select:
            selected = _best(rule.code, select) > _best(rule.code, ignore)
        else:
            selected = rule.default_enabled and _best(rule.code, ignore) < 0
        if not selected and extend_select:
            selected = _best(rule.code, extend_select) > _best(rule.code, ignore)
        if selected:
            chosen.append(rule)
    return tuple(chosen)


def selected_codes(config) -> FrozenSet[str]:
    """The codes of the rules `config`'s select, extend-select and ignore choose."""
    return _selected_codes(tuple(config.select), tuple(config.extend_select), tuple(config.ignore))


@lru_cache(maxsize=64)
def _selected_codes(select: Tuple[str, ...], extend_select: Tuple[str, ...], ignore: Tuple[str, ...]) -> FrozenSet[str]:
    return frozenset(rule.code for rule in select_rules(all_rules(), select, extend_select, ignore))


def rule_codes() -> Tuple[str, ...]:
    """Every code a selector can name, TL000 included."""
    return (SYNTAX_ERROR.code, *(rule.code for rule in all_rules()))


def _best(code: str, selectors: Iterable[str]) -> int:
    """Length of the most specific selector matching `code`, -1 if none."""
    lengths = [
        0 if selector == "ALL" else len(selector)
        for selector in selectors
        if selector == "ALL" or code.startswith(selector)
    ]
    return max(lengths, default=-1)


@lru_cache(maxsize=None)
def code_fingerprint() -> str:
    """Size and mtime of every module of torchlint and its rules: an edited rule (in a
    development install) must not be answered from the cache of the old one."""
    import hashlib
    import os

    import torchlint

    roots = [os.path.dirname(torchlint.__file__), *rules_package().__path__]
    stamps = []
    for root in roots:
        for directory, _, files in os.walk(root):
            for name in sorted(files):
                if name.endswith((".py", ".toml", ".json")):
                    stat = os.stat(os.path.join(directory, name))
                    stamps.append(f"{name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.blake2b("\n".join(stamps).encode(), digest_size=16).hexdigest()
