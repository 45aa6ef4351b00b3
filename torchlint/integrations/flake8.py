"""The flake8 plugin: the same engine call as the CLI, one file at a time.

flake8 applies its own `# noqa` handling and `--select`/`--ignore` to what this yields;
the plugin applies torchlint's own `# noqa` placement too (anywhere on the logical line,
as the CLI does), unless flake8 runs with `--disable-noqa`.
Project-level rules decide within the file, since flake8 shows a plugin one file only.
The findings the project's configured baseline holds are left out, as `torchlint check`
leaves them out.
What keeps a file from being checked (a bad config, a rule that crashed on it) is
reported on the file's first line as TL000, so an editor shows it instead of silence.

A notebook (`flake8 --filename '*.ipynb' ...`) reaches the plugin as its JSON lines: its
code cells are linted as the CLI lints them, and each finding is reported on the JSON
line that holds the cell's source line (the column is exact unless the line has escaped
characters before it, and is the value's start for a source stored as one string).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

from torchlint import __version__
from torchlint.core.diagnostics import SYNTAX_CODE


@lru_cache(maxsize=32)
def _settings(directory: str):
    from torchlint.core.config import Config, load_config
    from torchlint.core.config_files import ConfigError
    from torchlint.rule_api.registry import all_rules, option_defaults, rule_codes, select_rules

    problem: Optional[str] = None
    try:
        config = load_config(None, Path(directory), option_defaults(), rule_codes())
    except ConfigError as error:
        config, problem = Config(), f"{error} (checked with the default settings)"
    rules = select_rules(all_rules(), config.select, config.extend_select, config.ignore)
    return config, tuple(rules), problem


class TorchlintChecker:
    name = "torchlint"
    version = __version__
    disable_noqa = False

    @classmethod
    def parse_options(cls, options) -> None:
        cls.disable_noqa = bool(getattr(options, "disable_noqa", False))

    def __init__(self, tree, lines: Sequence[str], filename: str) -> None:
        self.tree = tree
        self.lines = lines
        self.filename = filename
        self.notebook = None  # set when the file is a notebook

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
            row, column = self._position(diagnostic)
            yield row, column, f"{diagnostic.code} {diagnostic.message}", type(self)

    def _position(self, diagnostic) -> Tuple[int, int]:
        """flake8's (1-based row, 0-based column) in the file it read."""
        if diagnostic.cell is None:
            return diagnostic.location.row, diagnostic.location.column - 1
        return self.notebook.file_position(diagnostic.cell, diagnostic.location.row, diagnostic.location.column - 1)

    def _diagnostics(self, problems: List[str]):
        from torchlint.engine import lint_text
        from torchlint.run.notebook import is_notebook, read_notebook
        from torchlint.run.notebook_json import NotebookError
        from torchlint.index.resolver import project_findings

        source, tree = "".join(self.lines), self.tree
        path = Path(self.filename)
        directory = path.parent if self.filename not in ("-", "stdin") else Path.cwd()
        config, rules, problem = _settings(str(directory.absolute()))
        if problem:
            problems.append(problem)
        if is_notebook(self.filename):
            try:
                self.notebook = read_notebook(source.encode("utf-8"))
            except NotebookError as error:
                problems.append(f"cannot read the notebook: {error}")
                return []
            source, tree = self.notebook.text, None
            rules = tuple(rule for rule in rules if rule.applies_to_notebooks)
        result = lint_text(source, self.filename, config, rules, tree=tree, flake8=True)
        prefix = f"{self.filename}: "
        problems.extend(error[len(prefix) :] if error.startswith(prefix) else error for error in result.errors)
        diagnostics = [d for d in result.diagnostics if d.code != SYNTAX_CODE]
        if result.facts is not None:
            diagnostics.extend(project_findings({self.filename: result.facts}, rules, config))
        if diagnostics and not self.disable_noqa:
            suppressions = _suppressions(source, tree)
            diagnostics = [d for d in diagnostics if not suppressions.suppresses(d.location.row, d.code)]
        if self.notebook is not None:
            layout = self.notebook.layout
            diagnostics = [self.notebook.in_cells(d, source, layout) for d in diagnostics]
        return sorted(self._not_baselined(diagnostics, source, config, problems), key=lambda d: d.sort_key)

    def _not_baselined(self, diagnostics, source: str, config, problems: List[str]):
        """What the project's configured baseline does not hold, as `torchlint check` shows."""
        from torchlint.run.baseline import BaselineError, without_baselined

        if self.notebook is not None:
            sources = self.notebook.cell_sources(self.filename, source, self.notebook.layout)
        else:
            sources = {self.filename: source}
        try:
            return without_baselined(diagnostics, sources, config)
        except BaselineError as error:
            problems.append(f"{error} (all findings shown)")
            return diagnostics


def _suppressions(source: str, tree):
    """The file's `# noqa` comments, tokenized only in the statements that hold a finding,
    as the CLI reads them (the whole source for a notebook, which has no tree here)."""
    from torchlint.core.noqa import StatementSuppressions, line_suppressions

    if tree is None:
        return line_suppressions(source)
    from torchlint.core.partial_parse import statement_spans
    from torchlint.core.source import split_lines

    return StatementSuppressions(split_lines(source), statement_spans(tree), statements=tree.body)
