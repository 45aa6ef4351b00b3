"""Exit codes and the one-line messages on stderr, shared by the CLI and its commands.

Exit codes: 0 nothing left, 1 findings remain (or, with --exit-non-zero-on-fix, something
was fixed), 2 usage error, bad config, or an internal error.
"""

from __future__ import annotations

import difflib
import sys
from typing import Iterable

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def error(message: str) -> None:
    """One line on stderr, as `error: ...`."""
    _say("error", message)


def warning(message: str) -> None:
    """One line on stderr, as `warning: ...`; a warning never changes the exit code."""
    _say("warning", message)


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """`; did you mean `X`?` for the closest of `known` to a misspelt `word`, else ''."""
    matches = difflib.get_close_matches(word, list(known), n=1)
    return f"; did you mean `{matches[0]}`?" if matches else ""


def _say(level: str, message: str) -> None:
    from torchlint.core.paths import printable  # a file name may not be UTF-8
    from torchlint.core.visible import visible_line

    print(f"{level}: {visible_line(printable(message))}", file=sys.stderr)
