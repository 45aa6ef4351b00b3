"""`torchlint clean`: remove the project's cache, as `ruff clean` removes `.ruff_cache`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List

from torchlint.commands.parser import OneLineParser, UsageError


def run_clean_command(argv: List[str]) -> int:
    from torchlint.core.config import load_config
    from torchlint.core.config_files import ConfigError
    from torchlint.core.paths import for_humans
    from torchlint.rule_api.registry import option_defaults, rule_codes
    from torchlint.run.cache import CACHE_DIRNAME, remove_cache
    from torchlint.run.cache_ground import UntrustedCache

    parser = OneLineParser(prog="torchlint clean", description="Remove the project's .torchlint_cache/.")
    parser.add_argument("--config", type=Path, help="use this pyproject.toml or torchlint.toml")
    args = parser.parse_args(argv)
    try:
        root = load_config(args.config, Path.cwd(), option_defaults(), rule_codes()).root
    except ConfigError as error:
        raise UsageError(str(error)) from None
    where = for_humans(str(root / CACHE_DIRNAME))
    try:
        removed = remove_cache(root)
    except UntrustedCache as refusal:
        raise UsageError(f"{where}: not removed: {refusal}") from None
    if removed:
        print(f"Removing cache at: {where}", file=sys.stderr)
    return 0
