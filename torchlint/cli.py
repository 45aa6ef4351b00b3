"""The `torchlint` command line (ruff's conventions wherever they apply).

Exit codes: 0 nothing left, 1 findings remain (or, with --exit-non-zero-on-fix, something
was fixed), 2 usage error, bad config, or an internal error.
"""

from __future__ import annotations

import sys
from typing import Optional, Sequence

SUBCOMMANDS = ("check", "rule", "doctor", "explain")
EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["--version"], ["-V"]):
        from torchlint import __version__

        print(f"torchlint {__version__}")
        return EXIT_CLEAN
    command = argv[0] if argv and argv[0] in SUBCOMMANDS else "check"
    rest = argv[1:] if argv and argv[0] in SUBCOMMANDS else argv
    if command == "doctor":
        from torchlint.doctor.cli import main as doctor_main

        return doctor_main(rest)
    if command == "explain":
        from torchlint.explain.cli import main as explain_main

        return explain_main(rest)
    from torchlint.commands.parser import run_guarded

    if command == "rule":
        from torchlint.commands.rule import run_rule_command

        return run_guarded("torchlint rule", lambda: run_rule_command(rest))
    from torchlint.commands.check import run_check_command

    return run_guarded("torchlint", lambda: run_check_command(rest))


def error(message: str) -> None:
    """One line on stderr, as `error: ...`."""
    print(f"error: {message}", file=sys.stderr)
