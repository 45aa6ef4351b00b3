"""`torchlint --help`, `torchlint help [COMMAND]`, and the hint for a misspelt command."""

from __future__ import annotations

import difflib
import os
from typing import Callable, Optional, Sequence

from torchlint.commands import COMMANDS
from torchlint.core.console import EXIT_CLEAN, EXIT_ERROR, did_you_mean, error

OPTIONS = (
    ("-h, --help", "Print help (`torchlint help COMMAND` for a command's own options)"),
    ("-V, --version", "Print version"),
)


def top_level_help() -> str:
    """The top-level help, laid out as ruff's."""
    from torchlint.report.wrap import columns, wrap

    total = columns(fallback=80)

    def rows(entries) -> list:
        label = max(len(name) for name, _ in entries) + 4
        return [line for name, text in entries
                for line in wrap(text, total, f"  {name:<{label - 2}}", " " * label)]

    lines = [
        "torchlint: find (and fix) the PyTorch code patterns behind CUDA/cuDNN failures.",
        "",
        "Usage: torchlint [OPTIONS] <COMMAND>",
        "       torchlint [CHECK OPTIONS] [PATHS]...   (same as `torchlint check`)",
        "",
        "Commands:",
        *rows(list(COMMANDS.items())),
        "",
        "Options:",
        *rows(OPTIONS),
        "",
        "For help with a specific command, see: `torchlint help <command>`.",
    ]
    return "\n".join(lines)


def run_help_command(argv: Sequence[str], run_command: Callable[[str, Sequence[str]], int]) -> int:
    """`torchlint help [COMMAND]`; `run_command` runs a command (with `--help`)."""
    if not argv:
        print(top_level_help())
        return EXIT_CLEAN
    name = argv[0]
    if name not in COMMANDS or len(argv) > 1:
        hint = did_you_mean(name, COMMANDS)
        error(f"`torchlint help` takes one command name, one of {', '.join(COMMANDS)}; got {' '.join(argv)!r}{hint}")
        return EXIT_ERROR
    return run_command(name, ["--help"]) if name != "help" else run_help_command([], run_command)


def misspelled_command(word: str) -> Optional[str]:
    """The error for a first argument that is neither a command nor an existing path but
    looks like a command (`chek`); None when it may well be a path."""
    if word.startswith("-") or os.path.exists(word):
        return None
    suggestion = _closest_command(word)
    if suggestion is None:
        return None
    return f"`{word}` is neither a command nor a path; did you mean `{suggestion}`? (see `torchlint --help`)"


def _closest_command(word: str) -> Optional[str]:
    matches = difflib.get_close_matches(word, list(COMMANDS), n=1)
    return matches[0] if matches else None
