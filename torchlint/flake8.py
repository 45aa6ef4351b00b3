"""The flake8 plugin: the same engine call as the CLI, one file at a time.

flake8 applies its own `# noqa` handling and `--select`/`--ignore` to what this yields.
Project-level rules decide within the file, since flake8 shows a plugin one file only.
What keeps a file from being checked (a bad config, a rule that crashed on it) is
reported on the file's first line as TL000, so an editor shows it instead of silence.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

from torchlint import __version__
from torchlint.ftypes import SYNTAX_CODE


@lru_cache(maxsize=32)
def _settings(directory: str):
    from torchlint.config import ConfigError, Config, load_config
    from torchlint.registry import all_rules, option_defaults, select_rules

    problem: Optional[str] = None
    try:
        config = load_config(None, Path(directory), option_defaults())
    except ConfigError as error:
        config, problem = Config(), f"{error} (checked with the default settings)"
    rules = select_rules(all_rules(), config.select, config.extend_select, config.ignore)
    return config, tuple(rules), problem


class TorchlintChecker:
    name = "torchlint"
    version = __version__

    def __init__(self, tree, lines: Sequence[str], filename: str) -> None:
        self.tree = tree
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        problems: List[str] = []
        try:
            diagnostics = self._diagnostics(problems)
        except Exception as error:  # a plugin must never take flake8 down with it
            from torchlint.engine import describe

            diagnostics, problems = [], [*problems, f"internal error: {describe(error)}"]
        for problem in problems:
            yield 1, 0, f"{SYNTAX_CODE} torchlint could not check this file fully: {problem}", type(self)
        for diagnostic in diagnostics:
            yield (
                diagnostic.location.row,
                diagnostic.location.column - 1,
                f"{diagnostic.code} {diagnostic.message}",
                type(self),
            )

    def _diagnostics(self, problems: List[str]):
        from torchlint.engine import lint_text

        source = "".join(self.lines)
        path = Path(self.filename)
        directory = path.parent if self.filename not in ("-", "stdin") else Path.cwd()
        config, rules, problem = _settings(str(directory.absolute()))
        if problem:
            problems.append(problem)
        result = lint_text(source, self.filename, config, rules, tree=self.tree, flake8=True)
        prefix = f"{self.filename}: "
        problems.extend(error[len(prefix) :] if error.startswith(prefix) else error for error in result.errors)
        diagnostics = [d for d in result.diagnostics if d.code != SYNTAX_CODE]
        for rule in rules:
            if rule.project_rule and rule.code in result.facts:
                diagnostics.extend(rule.check_project({self.filename: result.facts[rule.code]}, config))
        return sorted(diagnostics, key=lambda d: d.sort_key)
