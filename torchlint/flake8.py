"""The flake8 plugin: the same engine call as the CLI, one file at a time.

flake8 applies its own `# noqa` handling and `--select`/`--ignore` to what this yields.
Project-level rules decide within the file, since flake8 shows a plugin one file only.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Iterator, Sequence, Tuple

from torchlint import __version__
from torchlint.ftypes import SYNTAX_CODE


@lru_cache(maxsize=32)
def _settings(directory: str):
    from torchlint.config import ConfigError, Config, load_config
    from torchlint.registry import all_rules, option_defaults, select_rules

    try:
        config = load_config(None, Path(directory), option_defaults())
    except ConfigError:
        config = Config()
    rules = select_rules(all_rules(), config.select, config.extend_select, config.ignore)
    return config, tuple(rules)


class TorchlintChecker:
    name = "torchlint"
    version = __version__

    def __init__(self, tree, lines: Sequence[str], filename: str) -> None:
        self.tree = tree
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        try:
            diagnostics = self._diagnostics()
        except Exception:  # a plugin must never take flake8 down with it
            return
        for diagnostic in diagnostics:
            yield (
                diagnostic.location.row,
                diagnostic.location.column - 1,
                f"{diagnostic.code} {diagnostic.message}",
                type(self),
            )

    def _diagnostics(self):
        from torchlint.engine import lint_text

        source = "".join(self.lines)
        path = Path(self.filename)
        directory = path.parent if self.filename not in ("-", "stdin") else Path.cwd()
        config, rules = _settings(str(directory.absolute()))
        result = lint_text(source, self.filename, config, rules, tree=self.tree, flake8=True)
        diagnostics = [d for d in result.diagnostics if d.code != SYNTAX_CODE]
        for rule in rules:
            if rule.project_rule and rule.code in result.facts:
                diagnostics.extend(rule.check_project({self.filename: result.facts[rule.code]}, config))
        return sorted(diagnostics, key=lambda d: d.sort_key)
