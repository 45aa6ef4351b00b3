"""`check`'s ways into an existing codebase: --baseline, --write-baseline, --add-noqa."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Optional, Sequence, Tuple

from torchlint.run.baseline import Baseline, BaselineError, configured, load, write
from torchlint.core.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("existing codebases")
    group.add_argument(
        "--baseline", type=Path, metavar="FILE", help="report only findings not recorded in FILE (config: baseline)"
    )
    group.add_argument(
        "--write-baseline", type=Path, metavar="FILE", help="record the current findings in FILE and exit 0"
    )
    group.add_argument("--add-noqa", action="store_true", help="add `# noqa: TLxxx` to every finding's line")


def usage_problem(args: argparse.Namespace, paths: Sequence[str]) -> Optional[str]:
    """Why these flags cannot go together, or None."""
    if args.add_noqa and (args.fix or args.diff):
        return "--add-noqa cannot be combined with --fix or --diff"
    if args.add_noqa and args.write_baseline:
        return "--add-noqa cannot be combined with --write-baseline"
    if args.write_baseline and args.diff:
        return "--write-baseline cannot be combined with --diff"
    if args.add_noqa and paths == ["-"]:
        return "--add-noqa needs files to write to, not stdin"
    return None


def adjust_config(args: argparse.Namespace, config: Config) -> Config:
    """`--add-noqa` writes comments only: a `fix = true` in the config does not apply."""
    return replace(config, fix=False) if args.add_noqa else config


def active_baseline(args: argparse.Namespace, config: Config) -> Tuple[Optional[Baseline], str]:
    """The baseline that filters this run (the flag, else the config; none while writing
    one) and its name as the user would type it; BaselineError if it cannot be read."""
    if args.write_baseline:
        return None, ""
    if args.baseline is not None:
        return load(args.baseline), _shown(args.baseline)
    if config.baseline is None:
        return None, ""
    return configured(config), _shown(config.baseline)


def needs_sources(args: argparse.Namespace, baseline) -> bool:
    """Fingerprints hash a finding's line, so the baseline needs the files' text; so does
    --add-noqa, to be sure that a file still holds what was linted."""
    return baseline[0] is not None or bool(args.write_baseline) or args.add_noqa


def _shown(path: Path) -> str:
    try:
        return str(path.absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def apply_baseline(result, baseline: Tuple[Optional[Baseline], str], config: Config):
    """The run's result without the baselined findings, and the summary line ("" if none)."""
    active, name = baseline
    if active is None:
        return result, ""
    checked = [outcome.display for outcome in result.outcomes]
    filtered = active.filter(result.diagnostics, result.sources(), config.root, checked)
    return replace(result, diagnostics=filtered.diagnostics), filtered.summary(name)


def finish(args: argparse.Namespace, result, jobs, config: Config) -> int:
    """The exit code of a run that writes a baseline or noqa directives instead of a report."""
    from torchlint.core.console import EXIT_CLEAN, EXIT_ERROR

    done = write_baseline(args, result, config) if args.write_baseline else add_noqa(result, jobs)
    return EXIT_CLEAN if done and not result.errors else EXIT_ERROR


def write_baseline(args: argparse.Namespace, result, config: Config) -> bool:
    """Record the run's findings in --write-baseline's file; False (after a one-line
    error) if it cannot be written."""
    from torchlint.core.console import error

    try:
        count = write(args.write_baseline, result.diagnostics, result.sources(), config.root)
    except BaselineError as problem:
        error(str(problem))
        return False
    noun = "finding" if count == 1 else "findings"
    print(f"Recorded {count} {noun} in {args.write_baseline}.", file=sys.stderr)
    return True


def add_noqa(result, jobs) -> bool:
    """Add noqa directives for the run's findings; False if a file could not be done."""
    from torchlint.fixing.add_noqa import add_noqa as add_directives
    from torchlint.core.console import error, warning

    files = {display: path for display, path, _ in jobs if path is not None}
    for notebook in sorted({d.filename for d in result.diagnostics if d.cell is not None}):
        warning(f"{notebook}: --add-noqa does not write into notebooks; add `# noqa: CODE` in the cell")
    outcome = add_directives([d for d in result.diagnostics if d.cell is None], files, result.sources())
    for message in outcome.errors:
        error(message)
    noun = "directive" if outcome.added == 1 else "directives"
    print(f"Added {outcome.added} noqa {noun}.", file=sys.stderr)
    return not outcome.errors
