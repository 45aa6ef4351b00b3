"""`torchlint check [PATHS...]`: lint, fix, report."""

from __future__ import annotations

import argparse
import errno
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from torchlint.run.baseline import BaselineError
from torchlint.commands import adoption
from torchlint.commands.parser import OneLineParser, UsageError
from torchlint.core.config import Config, glob_patterns, load_config, selector_problem
from torchlint.core.config_files import ConfigError, tomllib
from torchlint.core.console import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, error, warning
from torchlint.core.visible import visible

FORMATS = ("full", "concise", "json", "json-lines", "github", "sarif", "junit")


def _codes(text: str) -> List[str]:
    codes = [code.strip().upper() for code in text.split(",") if code.strip()]
    from torchlint.rule_api.registry import rule_codes

    for code in codes:
        problem = selector_problem(code, rule_codes())
        if problem:
            raise argparse.ArgumentTypeError(f"{code!r} {problem}")
    return codes


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="torchlint check",
        description="Find (and fix) PyTorch code patterns behind CUDA/cuDNN failures.",
    )
    parser.add_argument("paths", nargs="*", default=None, help="files or directories (default: .); `-` reads stdin")
    fixing = parser.add_argument_group("fixes")
    fixing.add_argument("--fix", action="store_true", default=None, help="apply safe fixes")
    fixing.add_argument("--no-fix", dest="fix", action="store_false")
    fixing.add_argument("--unsafe-fixes", action="store_true", default=None, help="also apply unsafe fixes")
    fixing.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false")
    fixing.add_argument("--diff", action="store_true", help="print the diff --fix would apply; write nothing")
    fixing.add_argument("--show-fixes", action="store_true", help="list the fixes that were applied")
    fixing.add_argument("--exit-non-zero-on-fix", action="store_true", help="exit 1 if anything was fixed")
    selection = parser.add_argument_group("rule selection")
    selection.add_argument("--select", type=_codes, help="only these codes or prefixes (comma-separated)")
    selection.add_argument("--extend-select", type=_codes, help="add these codes or prefixes")
    selection.add_argument("--ignore", type=_codes, help="skip these codes or prefixes")
    selection.add_argument("--fixable", type=_codes, help="only these codes' fixes are applied (default: all)")
    selection.add_argument("--unfixable", type=_codes, help="these codes' fixes are never applied")
    files = parser.add_argument_group("files")
    files.add_argument("--exclude", help="comma-separated patterns replacing the default excludes")
    files.add_argument("--extend-exclude", help="comma-separated patterns added to the excludes")
    files.add_argument("--force-exclude", action="store_true", help="apply excludes to files named on the command line too")
    files.add_argument("--stdin-filename", help="the name of the file read from stdin")
    files.add_argument("--config", action="append", metavar="FILE|KEY=VALUE",
                       help="use this pyproject.toml or torchlint.toml; or a `KEY = VALUE` setting (TOML) that "
                            "overrides the config file's (repeatable)")
    files.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    files.add_argument("--no-cache", action="store_true", help="neither read nor write .torchlint_cache/")
    files.add_argument("--jobs", "-j", type=int, default=None, help="worker processes (default: one per core)")
    output = parser.add_argument_group("output")
    output.add_argument("--output-format", choices=FORMATS, default=None, metavar="FORMAT",
                        help=f"{', '.join(FORMATS)}; default: full (TORCHLINT_OUTPUT_FORMAT)")
    output.add_argument("--output-file", "-o", type=Path, metavar="FILE",
                        help="write the report to FILE instead of stdout (TORCHLINT_OUTPUT_FILE)")
    output.add_argument("--statistics", action="store_true", help="count findings per rule")
    output.add_argument("--show-settings", action="store_true", help="print the settings in effect and exit")
    output.add_argument("--show-files", action="store_true", help="print the files that would be checked and exit")
    output.add_argument("--watch", "-w", action="store_true", help="check again whenever a file changes (^C ends)")
    output.add_argument("--exit-zero", action="store_true", help="exit 0 even if findings remain")
    output.add_argument("--quiet", "-q", action="store_true", help="print findings only, no summary")
    output.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    adoption.add_arguments(parser)
    return parser


def run_check_command(argv: Sequence[str]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv))
    except UsageError as problem:
        error(f"{problem} (see `torchlint check --help`)")
        return EXIT_ERROR
    paths = args.paths or ["."]
    try:
        config = _effective_config(args, paths)
    except ConfigError as problem:
        error(str(problem))
        return EXIT_ERROR
    output_format = args.output_format or os.environ.get("TORCHLINT_OUTPUT_FORMAT", "full")
    if output_format not in FORMATS:
        error(f"unknown output format {output_format!r} (choose from {', '.join(FORMATS)})")
        return EXIT_ERROR
    if args.jobs is not None and args.jobs < 1:
        error("--jobs must be at least 1")
        return EXIT_ERROR
    problem = adoption.usage_problem(args, paths)
    if problem:
        error(f"{problem} (see `torchlint check --help`)")
        return EXIT_ERROR
    if args.show_settings:
        from torchlint.commands.show import show_settings

        return show_settings(config, paths)
    try:
        baseline = adoption.active_baseline(args, config)
    except BaselineError as problem:
        error(str(problem))
        return EXIT_ERROR
    config = adoption.adjust_config(args, config)
    if args.watch:
        from torchlint.commands.watch import watch

        return watch(lambda: _run(args, paths, config, output_format, baseline), lambda: _jobs(args, paths, config))
    return _run(args, paths, config, output_format, baseline)


def _effective_config(args: argparse.Namespace, paths: Sequence[str]) -> Config:
    from torchlint.rule_api.registry import option_defaults, rule_codes

    anchor = Path(paths[0]) if paths and paths[0] != "-" else Path.cwd()
    start = anchor if anchor.is_dir() else anchor.parent
    if args.stdin_filename and paths == ["-"]:
        start = Path(args.stdin_filename).parent
    named, settings = config_arguments(args.config or [], args.isolated)
    cwd = start if start.exists() else Path.cwd()
    config = load_config(named, cwd, option_defaults(), rule_codes(), settings, args.isolated)
    overrides = {}
    for name in ("select", "extend_select", "ignore", "fix", "unsafe_fixes", "fixable", "unfixable"):
        value = getattr(args, name)
        if value is not None:
            overrides[name] = tuple(value) if isinstance(value, list) else value
    if args.exclude is not None:
        patterns = tuple(p.strip() for p in args.exclude.split(",") if p.strip())
        overrides["exclude"] = glob_patterns("--exclude", "exclude", patterns)
    if args.extend_exclude is not None:
        extra = tuple(p.strip() for p in args.extend_exclude.split(",") if p.strip())
        overrides["extend_exclude"] = config.extend_exclude + glob_patterns("--extend-exclude", "extend-exclude", extra)
    return replace(config, **overrides)


def config_arguments(values: Sequence[str], isolated: bool) -> Tuple[Optional[Path], List[Dict[str, Any]]]:
    """`--config` values, as ruff reads them: the path of a config file (at most one), or
    an inline `KEY = VALUE` setting in TOML, applied over the file's settings in order."""
    files = [value for value in values if "=" not in value or os.path.exists(value)]
    if len(files) > 1:
        raise ConfigError(f"--config names more than one file ({', '.join(files)}); give one, and settings as KEY = VALUE")
    if files and isolated:
        raise ConfigError("--isolated ignores every configuration file: it cannot be combined with --config FILE")
    settings = []
    for value in values:
        if value in files:
            continue
        try:
            table = tomllib.loads(value)
        except tomllib.TOMLDecodeError as problem:
            raise ConfigError(f"--config: {value!r} is neither a file nor a `KEY = VALUE` setting ({problem})") from None
        settings.append(table.get("tool", {}).get("torchlint", table) if "tool" in table else table)
    return (Path(files[0]) if files else None), settings


def _jobs(args, paths: Sequence[str], config: Config):
    from torchlint.run.discovery import discover

    if paths == ["-"]:
        display = args.stdin_filename or "-"
        if args.force_exclude and args.stdin_filename:
            from torchlint.run.discovery import Excluder

            if Excluder(config).excluded(Path(args.stdin_filename), False):
                return []
        return [(display, None, sys.stdin.buffer.read())]
    for name in paths:
        _check_named(name)
    found = discover(paths, config, args.force_exclude, warn=warning)
    return [(display, path, None) for display, path in found]


def _check_named(name: str) -> None:
    """A path named on the command line must exist (a symlink loop does not)."""
    try:
        os.stat(name)
    except OSError as problem:
        reasons = {errno.ENOENT: "no such file or directory", errno.ELOOP: "symlink loop"}
        raise ConfigError(f"{name}: {reasons.get(problem.errno, problem.strerror)}") from None


def _run(args, paths: Sequence[str], config: Config, output_format: str, baseline=(None, "")) -> int:
    from torchlint.rule_api.registry import all_rules, select_rules
    from torchlint.run.jobs import RunSettings
    from torchlint.run.runner import run

    try:
        jobs = _jobs(args, paths, config)
    except ConfigError as problem:
        error(str(problem))
        return EXIT_ERROR
    if args.show_files:
        from torchlint.commands.show import show_files

        return show_files(jobs)
    if not jobs and paths != ["-"] and not args.quiet:
        # a CI gate pointed at the wrong path must not pass silently (ruff warns too)
        print("warning: No Python files found under the given path(s)", file=sys.stderr)
    rules = select_rules(all_rules(), config.select, config.extend_select, config.ignore)
    mode = "diff" if args.diff else ("fix" if config.fix else "check")
    needs_sources = output_format in ("full", "sarif") or adoption.needs_sources(args, baseline)
    settings = RunSettings(
        config=config,
        codes=tuple(rule.code for rule in rules),
        mode=mode,
        unsafe=bool(config.unsafe_fixes),
        use_cache=not args.no_cache and paths != ["-"],
        keep_sources=needs_sources,
    )
    result = run(jobs, settings, workers=args.jobs)
    for message in result.errors:
        error(message)
    for message in result.warnings:
        warning(message)
    result, baseline_note = adoption.apply_baseline(result, baseline, config)
    if args.write_baseline or args.add_noqa:
        return adoption.finish(args, result, jobs, config)

    stdin_fix = paths == ["-"] and mode == "fix"
    output_file = args.output_file or os.environ.get("TORCHLINT_OUTPUT_FILE")
    if output_file:
        try:
            with open(output_file, "w", encoding="utf-8") as report_file:
                return _report(args, paths, config, output_format, baseline_note, result, jobs, mode, report_file)
        except OSError as problem:
            error(f"{output_file}: cannot write the report: {problem.strerror or problem}")
            return EXIT_ERROR
    return _report(args, paths, config, output_format, baseline_note, result, jobs, mode,
                   sys.stderr if stdin_fix else sys.stdout)


def _report(args, paths, config: Config, output_format: str, baseline_note: str, result, jobs, mode: str,
            report_stream) -> int:
    """Write the run's report (and, fixing stdin, the fixed source) and return the exit code."""
    from torchlint.report import ReportContext, render, render_statistics, summary_lines
    from torchlint.rule_api.registry import rule_infos
    from torchlint.run.project_fixes import fixed_bytes

    stdin_fix = paths == ["-"] and mode == "fix"
    if stdin_fix and result.outcomes:
        outcome = result.outcomes[0]
        # the file's own bytes (encoding, BOM, newlines), whatever stdout's encoding is
        fixed = outcome.original is not None and outcome.fixed_text is not None
        sys.stdout.flush()
        sys.stdout.buffer.write(fixed_bytes(outcome) if fixed else jobs[0][2])
        sys.stdout.buffer.flush()
    if mode == "diff":
        for outcome in result.outcomes:
            if outcome.diff:  # exact for `patch`, escaped for a terminal
                sys.stdout.write(visible(outcome.diff) if sys.stdout.isatty() else outcome.diff)
    if output_format not in ("full", "concise") and hasattr(report_stream, "reconfigure"):
        report_stream.reconfigure(encoding="utf-8")
    context = ReportContext(
        rules=rule_infos(),
        root=_report_root(config),
        color=_color(args.color, report_stream),
        sources=result.sources(),
        show_fixes=args.show_fixes,
        unsafe_fixes=bool(config.unsafe_fixes),
        fix_mode=mode != "check",
        fixed={d: sum(c.values()) for d, c in result.applied.items()},
        fixed_codes={d: dict(c) for d, c in result.applied.items()},
        tool_version=_version(),
    )
    fixed_total = sum(context.fixed.values())
    if mode == "diff":
        noun = "fix" if fixed_total == 1 else "fixes"
        if not args.quiet:
            print(f"Would apply {fixed_total} {noun}.", file=sys.stderr)
    elif args.statistics:
        render_statistics(result.diagnostics, context, report_stream, output_format)
    else:
        render(output_format, result.diagnostics, context, report_stream)
        if output_format in ("full", "concise") and not args.quiet:
            # "All checks passed!" would be untrue when a file could not be fully checked
            if result.diagnostics or not result.errors:
                for line in summary_lines(result.diagnostics, context):
                    print(line, file=report_stream)
            if result.errors:
                count = len(result.errors)
                print(f"{count} internal error{'s' if count != 1 else ''} (above on stderr).", file=report_stream)
    if baseline_note and not args.quiet:
        human = output_format in ("full", "concise") and mode != "diff" and not args.statistics
        print(baseline_note, file=report_stream if human else sys.stderr)
    return _exit_code(args, result, mode, fixed_total)


def _exit_code(args, result, mode: str, fixed_total: int) -> int:
    if result.errors:
        return EXIT_ERROR
    if mode == "diff":
        return EXIT_FINDINGS if fixed_total else EXIT_CLEAN
    if args.exit_non_zero_on_fix and fixed_total:
        return EXIT_FINDINGS
    if result.diagnostics and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _report_root(config: Config) -> Path:
    """Paths in annotations and SARIF are relative to the repository, where GitHub reads them."""
    from torchlint.run.discovery import repository_root

    return repository_root(config.root) or config.root


def _color(choice: str, stream) -> bool:
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def _version() -> str:
    from torchlint import __version__

    return __version__
