"""`torchlint explain [FILE]`: what a CUDA/cuDNN error in a log means and what to do.

Reads FILE, or stdin when FILE is absent or `-`. Exit codes: 0 a signature matched,
1 nothing matched, 2 usage error (one line on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from typing import List, Optional

from torchlint.commands.parser import OneLineParser, UsageError, run_guarded
from torchlint.core.bounded_read import ReadRefused, read_stream

LOG_BYTES = 256 << 20

PROG = "torchlint explain"


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=PROG, description="Match a log or traceback against known runtime error signatures.")
    parser.add_argument("file", nargs="?", default="-", metavar="FILE", help="log file to read (default: stdin)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """Run `torchlint explain ARGS...`; return the exit code."""
    return run_guarded(PROG, lambda: _run(list(sys.argv[1:] if argv is None else argv)))


def _run(argv: List[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit_:  # --help
        return int(exit_.code or 0)
    from torchlint.explain.explanation import explain
    from torchlint.core.console import warning
    from torchlint.explain.knowledge import load_knowledge
    from torchlint.explain.log_text import log_text
    from torchlint.explain.render import render_json, render_text

    data = _read(args.file)
    text, note = log_text(data)
    if note is not None:
        warning(f"{args.file}: {note}")
    knowledge = load_knowledge()
    explanation = explain(text, knowledge, original=data)
    if args.format == "json":
        print(render_json(explanation, knowledge))
    else:
        render_text(explanation, knowledge, sys.stdout)
    return 0 if explanation.matches else 1


def _read(name: str) -> bytes:
    """The log's bytes, at most LOG_BYTES: a file or a pipe (`explain <(dmesg)`), never a
    device (`/dev/zero` would be read until memory runs out)."""
    try:
        if name == "-":
            return read_stream(sys.stdin.buffer, LOG_BYTES)
        if stat.S_ISCHR(os.stat(name).st_mode) or stat.S_ISBLK(os.stat(name).st_mode):
            raise UsageError(f"{name}: cannot read: a device, not a log")
        with open(name, "rb") as handle:
            return read_stream(handle, LOG_BYTES)
    except ReadRefused as refusal:
        raise UsageError(f"{name}: cannot read: {refusal} (pass its end: tail -c 100M {name} | torchlint explain)") from None
    except OSError as error:
        raise UsageError(f"{name}: cannot read: {error.strerror or error}") from None
