"""`torchlint doctor`: probe this machine, check it against the declared requirements.

Exit codes: 0 nothing failed, 1 a requirement or smoke test failed, 2 usage or
configuration error (one line on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import List, Optional

from torchlint.core.bounded_read import ReadRefused, loads_json, read_bounded, read_stream
from torchlint.commands.parser import OneLineParser, UsageError, run_guarded

from torchlint.core.config_files import ConfigError
from torchlint.doctor.facts import Facts, FactsError, facts_from_dict
from torchlint.doctor.results import failed

PROG = "torchlint doctor"
MAX_PASTE_BYTES = 256 << 20  # as `explain`: a pasted report may come with a whole log around it
MAX_RECORD_BYTES = 16 << 20  # a facts record is a few KB; decoded JSON costs tens of times its size


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG,
        description="Check the CUDA/cuDNN environment against [tool.torchlint.runtime].",
    )
    parser.add_argument("--requirements", type=Path, metavar="FILE",
                        help="TOML file with [tool.torchlint.runtime] or a bare table "
                             "(default: the nearest pyproject.toml/torchlint.toml)")
    parser.add_argument("--facts", metavar="FILE",
                        help="judge saved evidence instead of probing: a record from --probe-json, or the "
                             "text of `python -m torch.utils.collect_env` ('-' reads stdin)")
    parser.add_argument("--probe-json", action="store_true",
                        help="print the probe's facts as JSON and exit (nothing is judged)")
    parser.add_argument("--smoke", action="store_true",
                        help="also run tiny conv2d/LSTM/matmul programs on the GPU, each in a child process")
    parser.add_argument("--model", metavar="MODULE:FACTORY",
                        help="with --smoke: also run the model a factory returns (`models.unet:build`, or "
                             "`path/to/file.py:build`) on one synthetic batch under torchlint's run-time guard, "
                             "in a child process (docs/guard.md)")
    parser.add_argument("--smoke-timeout", type=float, default=None, metavar="SECONDS",
                        help="time limit per smoke program (default: 120)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """Run `torchlint doctor ARGS...`; return the exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    return run_guarded(PROG, lambda: _run(build_parser(), arguments), (UsageError, ConfigError))


def _run(parser: argparse.ArgumentParser, argv: List[str]) -> int:
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help
        return int(exit_.code or 0)
    if args.facts and (args.smoke or args.probe_json):
        raise UsageError("--facts judges a saved record; it cannot be combined with --smoke or --probe-json")
    if args.model and not args.smoke:
        raise UsageError("--model runs a smoke program: add --smoke")
    if args.smoke_timeout is not None and args.smoke_timeout <= 0:
        raise UsageError("--smoke-timeout must be positive")
    model_program = _model_program(args.model) if args.model else None

    from torchlint.doctor.check import run_checks
    from torchlint.doctor.render import render_json, render_rich
    from torchlint.core.runtime_requirements import load_requirements

    if args.probe_json:
        print(json.dumps(_probe().to_dict(), indent=2))
        return 0
    requirements = load_requirements(args.requirements, Path.cwd())
    facts = _load_facts(args.facts) if args.facts else _probe()
    results = run_checks(facts, requirements)
    if args.smoke:
        from torchlint.doctor.smoke import DEFAULT_TIMEOUT, run_gpu_smoke

        results += run_gpu_smoke(facts, args.smoke_timeout or DEFAULT_TIMEOUT)
        if model_program is not None:
            from torchlint.doctor.smoke import run_program

            results.append(run_program(model_program, args.smoke_timeout or DEFAULT_TIMEOUT))
    if args.format == "json":
        print(render_json(facts, results))
    else:
        render_rich(results, sys.stdout)
    return 1 if failed(results) else 0


def _model_program(spec: str):
    from torchlint.doctor.model_smoke import ModelSpecError, model_program

    try:
        return model_program(spec, Path.cwd())
    except ModelSpecError as error:
        raise UsageError(str(error)) from None


def _probe() -> Facts:
    from torchlint.doctor.probe import collect

    return collect()


def _load_facts(name: str) -> Facts:
    from torchlint.doctor.collect_env import looks_like_collect_env, parse_collect_env

    try:
        data = read_stream(sys.stdin.buffer, MAX_PASTE_BYTES) if name == "-" else read_bounded(name, MAX_PASTE_BYTES)
    except OSError as error:
        raise UsageError(f"{name}: cannot read: {error.strerror or error}") from None
    except ReadRefused as error:
        raise UsageError(f"{name}: cannot read: {error}") from None
    text = data.decode("utf-8", errors="replace")
    if not text.lstrip().startswith("{") and looks_like_collect_env(text):
        return parse_collect_env(text)
    if len(data) > MAX_RECORD_BYTES:
        raise UsageError(f"{name}: not collect_env text, and larger than a facts record can be (16 MiB)")
    try:
        return facts_from_dict(loads_json(text))
    except ValueError as error:  # JSONDecodeError and FactsError
        if isinstance(error, FactsError):
            raise UsageError(f"{name}: not a torchlint facts record: {error}") from None
        raise UsageError(f"{name}: not JSON (nor collect_env text): {error}") from None
