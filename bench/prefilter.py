"""How many files and lines torchlint's prefilter keeps away from LibCST.

Run as `python bench/prefilter.py TREE`; prints JSON. It runs in its own process so that
the benchmark process stays small (see measure.py on RSS across exec). It mirrors
`torchlint.engine.lint_text` up to the parse: the file's own `# torchlint: noqa`, then
`triggered_rules` (trigger substrings), then `gated_rules` (whether each rule has a site: `Rule.sites`).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import List

from torchlint.core.config import load_config
from torchlint.run.discovery import discover
from torchlint.engine import gated_rules, triggered_rules
from torchlint.rule_api.registry import all_rules, option_defaults, rule_codes, select_rules
from torchlint.analysis.source_view import SourceView
from torchlint.core.source import DecodeError, decode_source


@dataclass
class Stage:
    files: int = 0
    lines: int = 0

    def add(self, lines: int) -> None:
        self.files += 1
        self.lines += lines


@dataclass
class Prefilter:
    rules: List[str] = field(default_factory=list)
    total: Stage = field(default_factory=Stage)
    past_substrings: Stage = field(default_factory=Stage)  # some rule's triggers occur
    past_gates: Stage = field(default_factory=Stage)  # some rule's gate holds: LibCST parses it
    seconds_substrings: float = 0.0
    seconds_gates: float = 0.0
    largest_parsed: str = ""  # the file the "touch one file" run edits
    largest_file: str = ""


def classify(text: str, path: str, config, rules, stats: Prefilter) -> str:
    """'skipped' (no candidate rule), 'gated' (no gate holds) or 'parsed'."""
    lines = text.count("\n") + (not text.endswith("\n") and bool(text))
    stats.total.add(lines)
    start = time.perf_counter()
    candidates = triggered_rules(text, path, config, rules)
    middle = time.perf_counter()
    stats.seconds_substrings += middle - start
    if not candidates:
        return "skipped"
    stats.past_substrings.add(lines)
    view = SourceView(text, path)
    passing = gated_rules(view, config, candidates)
    stats.seconds_gates += time.perf_counter() - middle
    if not passing or view.syntax_error is not None:
        return "gated"
    stats.past_gates.add(lines)
    return "parsed"


def analyse(tree: Path) -> Prefilter:
    config = load_config(None, tree, option_defaults(), rule_codes())
    rules = select_rules(all_rules(), config.select, config.extend_select, config.ignore)
    stats = Prefilter(rules=[rule.code for rule in rules])
    sizes = {"parsed": (-1, ""), "any": (-1, "")}
    for display, path in discover([str(tree)], config):
        data = path.read_bytes()
        try:
            text = decode_source(data).text
        except DecodeError:
            stats.total.add(0)
            continue
        outcome = classify(text, display, config, rules, stats)
        relative = path.relative_to(tree).as_posix()
        sizes["any"] = max(sizes["any"], (len(data), relative))
        if outcome == "parsed":
            sizes["parsed"] = max(sizes["parsed"], (len(data), relative))
    stats.largest_parsed = sizes["parsed"][1]
    stats.largest_file = sizes["any"][1]
    return stats


if __name__ == "__main__":
    print(json.dumps(asdict(analyse(Path(sys.argv[1]).resolve()))))
