"""`torchlint rule CODE` prints a rule's doc; `torchlint rule --all` lists the rules."""

from __future__ import annotations

import json
from typing import Sequence

from torchlint.commands.parser import OneLineParser
from torchlint.report.rule_pages import rules_table
from torchlint.core.console import EXIT_CLEAN, EXIT_ERROR, error


def run_rule_command(argv: Sequence[str]) -> int:
    parser = OneLineParser(prog="torchlint rule", description="Explain a rule.")
    parser.add_argument("rule", nargs="?", help="a code (TL001) or name (heavy-import-at-module-level)")
    parser.add_argument("--all", action="store_true", help="list every rule")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exit_:
        return EXIT_CLEAN if exit_.code == 0 else EXIT_ERROR
    from torchlint.rule_api.registry import SYNTAX_ERROR, all_rules, find_rule

    if args.all:
        infos = [SYNTAX_ERROR] + [rule.info() for rule in all_rules()]
        if args.output_format == "json":
            print(json.dumps([_json(info) for info in infos], indent=2))
        else:
            print(rules_table(infos))
        return EXIT_CLEAN
    if not args.rule:
        error("give a rule code, or --all (see `torchlint rule --help`)")
        return EXIT_ERROR
    rule = find_rule(args.rule)
    info = SYNTAX_ERROR if args.rule.upper() == SYNTAX_ERROR.code else (rule.info() if rule else None)
    if info is None:
        error(f"unknown rule {args.rule!r} (see `torchlint rule --all`)")
        return EXIT_ERROR
    if args.output_format == "json":
        print(json.dumps(_json(info), indent=2))
    else:
        print(rule_text(info))
    return EXIT_CLEAN


def _json(info) -> dict:
    return {
        "code": info.code,
        "name": info.name,
        "summary": info.summary,
        "fixable": info.fixable,
        "default_enabled": info.default_enabled,
        "explanation": info.doc,
        "url": info.url,
    }


def rule_text(info) -> str:
    """The rule's doc as Markdown, its prose refilled to the terminal's width."""
    from torchlint.report.wrap import columns, wrap_markdown

    fix = "Fix is sometimes available." if info.fixable else "Fix is not available."
    text = f"# {info.name} ({info.code})\n\n{info.summary}.\n\n{fix}\n\n{info.doc}"
    return wrap_markdown(text, columns(fallback=80)) + "\n"
