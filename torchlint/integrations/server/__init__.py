"""`torchlint server`: the language server (LSP over stdin/stdout) for editors.

pygls comes with the `server` extra; this module imports it only once the command runs,
so `--help` and the rest of the CLI work without it.
"""

from __future__ import annotations

import importlib.util
from typing import Optional, Sequence

from torchlint.commands.parser import OneLineParser, UsageError, run_guarded
from torchlint.core.console import EXIT_CLEAN, EXIT_ERROR, error

PROG = "torchlint server"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = OneLineParser(
        prog=PROG,
        description=(
            "Run the torchlint language server on stdin/stdout: findings as you type, "
            "quick fixes, fix all, and project-wide findings (TL004) in the background."
        ),
    )
    try:
        parser.parse_args(list(argv or ()))
    except UsageError as problem:
        error(f"{problem} (see `torchlint server --help`)")
        return EXIT_ERROR
    except SystemExit as exit_:  # --help
        return EXIT_CLEAN if exit_.code == 0 else EXIT_ERROR
    if importlib.util.find_spec("pygls") is None:
        error(missing_pygls())
        return EXIT_ERROR

    def serve() -> int:
        from torchlint.integrations.server.app import serve

        return serve()

    return run_guarded(PROG, serve)


def missing_pygls() -> str:
    """What to install, as commands that work where no package index serves torchlint:
    pygls itself (at the version the `server` extra asks for), or the extra from a checkout."""
    from importlib.metadata import PackageNotFoundError, requires

    from packaging.requirements import Requirement

    try:
        declared = [Requirement(text) for text in requires("torchlint") or ()]
    except PackageNotFoundError:  # run from a source tree that was never installed
        declared = []
    pygls = next((f"pygls{r.specifier}" for r in declared if r.name == "pygls" and r.specifier), "pygls")
    return (
        f"`torchlint server` needs pygls (the `server` extra): `python -m pip install '{pygls}'`, "
        "or from a torchlint checkout `python -m pip install -e '.[server]'`"
    )
