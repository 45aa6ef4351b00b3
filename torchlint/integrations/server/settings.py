"""How the server names and configures a file: as `torchlint check` run from the
workspace root would (the server makes the root its working directory).

A document is configured like `torchlint check path/to/doc.py`: by the nearest config file
above it. The workspace's project pass is configured like `torchlint check .`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Union

from torchlint.core.config import load_config
from torchlint.core.config_files import ConfigError
from torchlint.rule_api.registry import all_rules, option_defaults, rule_codes, select_rules
from torchlint.run.jobs import RunSettings

# saving one of these can change any file's settings (ruff's files: the line length)
CONFIG_NAMES = frozenset(("pyproject.toml", "torchlint.toml", "ruff.toml", ".ruff.toml"))


def settings_for(directory: Path) -> RunSettings:
    """The settings of a check run with no flags on the files of `directory` (the cache's
    key is theirs); ConfigError if its config is wrong."""
    config = load_config(None, directory, option_defaults(), rule_codes())
    rules = select_rules(all_rules(), config.select, config.extend_select, config.ignore)
    return RunSettings(config=config, codes=tuple(rule.code for rule in rules))


def display_name(path: str) -> str:
    """The name the CLI gives a file when run from the working directory: relative below
    it, absolute elsewhere."""
    real = os.path.realpath(path)
    try:
        relative = os.path.relpath(real)
    except ValueError:  # another drive
        return real
    return real if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative


class SettingsByDirectory:
    """Each directory's settings (or its config error), read once until `forget`."""

    def __init__(self) -> None:
        self._known: Dict[Path, Union[RunSettings, ConfigError]] = {}

    def get(self, directory: Path) -> RunSettings:
        known = self._known.get(directory)
        if known is None:
            try:
                known = settings_for(directory)
            except ConfigError as error:
                known = error
            self._known[directory] = known
        if isinstance(known, ConfigError):
            raise known
        return known

    def forget(self) -> None:
        self._known.clear()
