"""The `torchlint` command line (ruff's conventions wherever they apply).

Exit codes: 0 nothing left, 1 findings remain (or, with --exit-non-zero-on-fix, something
was fixed), 2 usage error, bad config, or an internal error.
"""

from __future__ import annotations

import sys
from typing import Optional, Sequence

from torchlint.commands import COMMANDS
from torchlint.core.console import EXIT_CLEAN, EXIT_ERROR, error


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    first = argv[0] if argv else None
    if first in ("--version", "-V"):
        from torchlint import __version__

        print(f"torchlint {__version__}")
        return EXIT_CLEAN
    if first in ("--help", "-h"):
        return run_command("help", [])
    if first in COMMANDS:
        return run_command(first, argv[1:])
    if first is not None:
        from torchlint.commands.help import misspelled_command

        problem = misspelled_command(first)
        if problem:
            error(problem)
            return EXIT_ERROR
    return run_command("check", argv)  # `torchlint PATHS` means `torchlint check PATHS`


def run_command(name: str, argv: Sequence[str]) -> int:
    """Run one subcommand (a key of COMMANDS) with its own arguments."""
    rest = list(argv)
    if name == "doctor":
        from torchlint.doctor.cli import main as doctor_main

        return doctor_main(rest)
    if name == "explain":
        from torchlint.explain.cli import main as explain_main

        return explain_main(rest)
    if name == "server":
        from torchlint.integrations.server import main as server_main

        return server_main(rest)
    from torchlint.commands.parser import run_guarded

    if name == "help":
        from torchlint.commands.help import run_help_command

        return run_guarded("torchlint help", lambda: run_help_command(rest, run_command))
    if name == "clean":
        from torchlint.commands.clean import run_clean_command

        return run_guarded("torchlint clean", lambda: run_clean_command(rest))
    if name == "rule":
        from torchlint.commands.rule import run_rule_command

        return run_guarded("torchlint rule", lambda: run_rule_command(rest))
    from torchlint.commands.check import run_check_command

    return run_guarded("torchlint", lambda: run_check_command(rest))
