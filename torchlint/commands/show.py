"""`check --show-settings` and `check --show-files`: what a run would use, as ruff prints it."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Sequence

from torchlint.core.config import Config
from torchlint.core.console import EXIT_CLEAN
from torchlint.core.visible import visible_line


def show_settings(config: Config, paths: Sequence[str]) -> int:
    """The settings in effect for `paths`, one `key = value` line each, and exit 0."""
    print(f"Resolved settings for: {visible_line(paths[0] if paths else '.')}")
    print(f"Settings path: {visible_line(str(config.source)) if config.source else '(none: the defaults)'}")
    print()
    for field in dataclasses.fields(config):
        if field.name == "source":
            continue
        value = getattr(config, field.name)
        if field.name == "rule_options":
            value = {name: dict(options) for name, options in value}
        print(f"{field.name.replace('_', '-')} = {visible_line(_toml(value))}")
    return EXIT_CLEAN


def _toml(value: Any) -> str:
    """`value` spelled as in a config file (a setting that is not set: a comment saying so)."""
    if value is None:
        return "# not set"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(key)} = {_toml(item)}" for key, item in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value), ensure_ascii=False)


def show_files(jobs) -> int:
    """The files the run would check (as it names them), sorted, one per line; exit 0."""
    for display in sorted(display for display, _, _ in jobs):
        print(visible_line(display))
    return EXIT_CLEAN
