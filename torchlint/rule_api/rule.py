"""The rule base class, and what a rule sees of the file it checks.

A rule is a class in `rules/` (see `Rule` for what it declares). All selected rules
run in one batched traversal of one parse; positions are computed only if something is
reported, which is why a fix is given as a function of `Positions`. The bases a rule can
extend besides `Rule` live in torchlint/rule_api/bases/.

A rule that needs other files to decide (`project_rule = True`) does two things, and
only these: it fills the typed sections of the file's record that its decision reads
(`ast_facts`, `context.record`), and it leaves each undecided finding to the project
pass with `context.defer(report, condition)`, a condition from the closed set of
`torchlint.analysis.pending`. The one resolver (`torchlint.index.resolver`) decides them
over every file's record.
"""

from __future__ import annotations

import ast
import inspect
from collections import Counter
from dataclasses import dataclass, replace
from functools import cached_property
from typing import (
    TYPE_CHECKING, AbstractSet, Any, Callable, ClassVar, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple,
)

from torchlint.core.config import Config
from torchlint.core.gating import RuleSites
from torchlint.core.partial_parse import Elided, statement_spans
from torchlint.core.diagnostics import Diagnostic, Edit, Fix, Location, RuleInfo
from torchlint.analysis.pending import Condition, Pending
from torchlint.index.record import FileRecord
from torchlint.fixing.layout import fit_edit
from torchlint.analysis.names import ImportMap, ImportTable, ast_import_table
from torchlint.core.noqa import LineSuppressions, StatementSuppressions
from torchlint.core.positions import KnownRanges, StatementRanges
from torchlint.core.source import split_lines
from torchlint.core.walk import ast_nodes

if TYPE_CHECKING:
    from torchlint.analysis.file_analysis import FileAnalysis
    from torchlint.analysis.modules import FileClasses


@dataclass(frozen=True)
class Invalid:
    """An example the rule must flag; `fixed` is the file after `--fix`, `unsafe_fixed` after
    `--unsafe-fixes` (None: no such fix). `line`/`column` (1-based) pin the first finding."""

    code: str
    fixed: Optional[str] = None
    unsafe_fixed: Optional[str] = None
    line: Optional[int] = None
    column: Optional[int] = None
    options: Tuple[Tuple[str, Any], ...] = ()


class Positions:
    """Source positions of the nodes of one parsed module (1-based rows, 1-based columns
    in code points, as ruff counts them). `column_shifts` maps a row to what LibCST's
    columns on it miss (see torchlint.core.parse)."""

    def __init__(
        self, ranges: Mapping[Any, Any], lines: Sequence[str], column_shifts: Optional[Mapping[int, int]] = None
    ) -> None:
        self._ranges = ranges
        self.lines = lines
        self._shifts = column_shifts or {}

    def start(self, node) -> Location:
        return self._location(self._ranges[node].start)

    def end(self, node) -> Location:
        return self._location(self._ranges[node].end)

    def _location(self, position) -> Location:
        return Location(position.line, position.column + 1 + self._shifts.get(position.line, 0))

    def line_text(self, row: int) -> str:
        return self.lines[row - 1] if 0 < row <= len(self.lines) else ""

    def indent_of(self, node) -> str:
        """The whitespace before the node on its line, from its last form feed on (CPython
        counts indentation from there; a copied form feed would be a stray page break)."""
        start = self.start(node)
        indent = self.line_text(start.row)[: start.column - 1]
        return indent[indent.rfind("\x0c") + 1 :]

    def replace(self, node, content: str) -> Edit:
        return Edit(self.start(node), self.end(node), content)

    def insert_lines_before(self, statement, lines: Sequence[str], newline: str) -> Edit:
        """New lines at the statement's indentation, just above it."""
        indent = self.indent_of(statement)
        row = self.start(statement).row
        text = "".join(f"{indent}{line}{newline}" if line else newline for line in lines)
        return Edit(Location(row, 1), Location(row, 1), text)

    def insert_lines_after(self, statement, lines: Sequence[str], newline: str, indent: str) -> Edit:
        row = self.end(statement).row + 1
        text = "".join(f"{indent}{line}{newline}" if line else newline for line in lines)
        return Edit(Location(row, 1), Location(row, 1), text)

    def delete_lines(self, statement) -> Edit:
        """Remove the physical lines a statement occupies, its trailing comment included."""
        return Edit(
            Location(self.start(statement).row, 1), Location(self.end(statement).row + 1, 1), ""
        )


FixFactory = Callable[[Positions], Optional[Fix]]


@dataclass
class Report:
    """A finding as a rule makes it, before positions are known."""

    rule: "Rule"
    node: Any
    message: str
    fix: Optional[FixFactory] = None
    # the code of a rule that reports this finding too, more precisely: while that rule is
    # selected, the finding is left to it (see RuleContext.diagnostic)
    superseded_by: Optional[str] = None


class RuleContext:
    """What one rule instance knows of the file it checks."""

    def __init__(
        self,
        module,
        text: str,
        path: str,
        config: Config,
        newline: str,
        view: Optional[SourceView] = None,
        flake8: bool = False,
        column_shifts: Optional[Mapping[int, int]] = None,
        elided: Optional[Elided] = None,
        selected: AbstractSet[str] = frozenset(),
    ) -> None:
        self.module = module
        self.selected = selected  # the codes of the rules the configuration selects
        self.elided = elided  # the statements left out of `module`, if any
        self.column_shifts = column_shifts or {}
        # flake8 applies its own `# noqa` and never applies fixes: skip both
        self.flake8 = flake8
        self.view = view or SourceView(text, path)
        self.text = text
        self.path = path
        self.config = config
        self.newline = newline
        self.reports: List[Report] = []
        # what the project pass will know of this file (the rules' `ast_facts` started it)
        self.record = FileRecord()
        self.known_ranges: Optional[KnownRanges] = None  # positions kept from the file's previous versions
        self.known_suppressions: Optional[Dict[str, LineSuppressions]] = None  # and `# noqa` comments
        # whether a project pass reads what is deferred to it: a focused lint's findings stay in its focus
        self.defers = True
        # id(fix) -> (the fix, it fitted): a fix several findings share is fitted once
        self._fitted_fixes: Dict[int, Tuple[Fix, Fix]] = {}
        # what the rules of this traversal compute alike of one node (a method's parents, a
        # class's settings), keyed by (what, id(node)): computed once for all of them
        self.shared: Dict[Tuple[str, int], Any] = {}

    @property
    def statement_tree(self) -> Optional[ast.Module]:
        """The stdlib ast of the statements `module` holds (its body lines up with
        `module.body`): the whole file's, unless statements were left out of the parse."""
        return self.view.tree if self.elided is None else self.elided.tree

    @cached_property
    def imports(self) -> ImportMap:
        return ImportMap(self.module)

    @cached_property
    def classes(self) -> "FileClasses":
        """What each class of the parsed module is to PyTorch, shared by the rules of the traversal."""
        from torchlint.analysis.modules import FileClasses

        return FileClasses(self.module, self.path, self.imports)

    @cached_property
    def positions(self) -> Positions:
        """Node positions, computed on first use for the statements that need them."""
        lines = [line.rstrip("\r\n") for line in split_lines(self.text)]
        file_row = None if self.elided is None else self.elided.file_row
        # the tree through the view or the elided parse, not through `self`: Positions is kept
        # on self, and a closure over self would make every context cyclic garbage
        holder = self.view if self.elided is None else self.elided
        ranges = StatementRanges(self.module, lambda: holder.tree, file_row, self.known_ranges)
        return Positions(ranges, lines, self.column_shifts)

    @cached_property
    def suppressions(self) -> StatementSuppressions:
        # the parse text: same rows and comments, no bulk data
        return StatementSuppressions(
            self.view.parse_lines, self.view.statement_spans, self.known_suppressions, self.view.tree.body
        )

    def defer(self, report: Report, condition: Condition) -> None:
        """Leave a finding to the project pass, which reports it if `condition` (one of
        `torchlint.analysis.pending`) holds once every file is known. Its position, `# noqa`
        and fix are resolved now, while the tree is at hand."""
        diagnostic = self.pending_diagnostic(report)
        if diagnostic is not None:
            self.record.pending.append(Pending(diagnostic, condition))

    def pending_diagnostic(self, report: Report) -> Optional[Diagnostic]:
        """`diagnostic` for a finding left to the project pass; None where no project pass
        reads it (`defers` off), so its position and fix are not computed for nothing."""
        return self.diagnostic(report) if self.defers else None

    def diagnostic(self, report: Report) -> Optional[Diagnostic]:
        """The finding a report becomes, with position and fix; None if `# noqa` hides it
        or a selected rule supersedes it."""
        if report.superseded_by in self.selected:
            return None
        positions = self.positions
        start, end = positions.start(report.node), positions.end(report.node)
        if self.flake8:
            return Diagnostic(report.rule.code, report.message, self.path, start, end)
        if self.suppressions.suppresses(start.row, report.rule.code):
            return None
        return Diagnostic(
            report.rule.code,
            report.message,
            self.path,
            start,
            end,
            fix=self._fitted(report.fix(positions) if report.fix is not None else None, positions),
            noqa_row=self.suppressions.noqa_row(start.row),
        )


    def _fitted(self, fix: Optional[Fix], positions: Positions) -> Optional[Fix]:
        """The fix (if any), with each edit that alone rewrites part of one row and pushes its
        statement past the line length written as a formatter would split it."""
        if fix is None:
            return None
        known = self._fitted_fixes.get(id(fix))
        if known is not None and known[0] is fix:
            return known[1]
        fitted = self._fit_fix(fix, positions)
        self._fitted_fixes[id(fix)] = (fix, fitted)
        return fitted

    def _fit_fix(self, fix: Fix, positions: Positions) -> Fix:
        rows = Counter(row for edit in fix.edits for row in {edit.start.row, edit.end.row})
        edits = tuple(
            self._fit(edit, positions) if rows[edit.start.row] == 1 and edit.start.row == edit.end.row else edit
            for edit in fix.edits
        )
        return fix if edits == fix.edits else replace(fix, edits=edits)

    def _fit(self, edit: Edit, positions: Positions) -> Edit:
        row = edit.start.row
        ends = self.suppressions
        whole = ends.noqa_row(row) == row and ends.noqa_row(row - 1) != row  # one logical line
        continuation = row > 1 and ends.noqa_row(row - 1) >= row  # the row before is of the same logical line
        return fit_edit(edit, positions.line_text(row), whole, self.config.line_length, self.newline, continuation)


class Rule:
    """The base of every rule. A rule is one class in `rules/<family>/` that declares:

    - `code` ("TL203", stable once released), `name` (kebab-case), `summary` (one line),
      and its doc as the class docstring (What it does / Why is this bad? / Example /
      Use instead / Fix safety / Options / References): `torchlint rule CODE` prints it;
    - `triggers`: substrings of which one must occur in the file for the rule to run
      (none: always; `trigger_strings` when they depend on the config or the path);
    - `sites(view, config)`: the stdlib-ast nodes where it could fire, found cheaply on
      `view` (a `SourceView`). The engine parses the file with LibCST only if some rule
      has a site, and only the top-level definitions that hold one. Default: the tree
      (anywhere in the file, whenever the triggers occur);
    - `VALID` and `INVALID` examples (`Invalid(code, fixed=..., unsafe_fixed=...)`): the
      test suite runs them, and checks that the sites hold wherever the rule reports;
    - LibCST visitor methods (`visit_Call`, `leave_FunctionDef`, ...) that call
      `self.report(node, message, fix)`, with the fix a function of `Positions`;
    - optionally `fixable`, `default_enabled`, `level` ("error" for code that fails at
      run time), `options` (defaults of `[tool.torchlint.<name>]`, read as
      `self.settings`), `applies_to_notebooks` and `follows_names`.

    A rule that needs other files (`project_rule = True`) fills its file's record
    (`ast_facts`, `context.record`) and defers what other files decide
    (`context.defer`): see the module's doc. Families of rules extend a base from
    torchlint/rule_api/bases/, which gives their sites and traversal.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    triggers: ClassVar[Tuple[str, ...]] = ()
    default_enabled: ClassVar[bool] = True
    level: ClassVar[str] = "warning"  # "error" for code that fails at run time
    fixable: ClassVar[bool] = False
    options: ClassVar[Mapping[str, Any]] = {}
    project_rule: ClassVar[bool] = False  # True: it records facts and pending findings (see the module doc)
    # False: not run on Jupyter notebooks, where what it reports is how notebooks are written
    applies_to_notebooks: ClassVar[bool] = True
    # False: its LibCST pass reads the definitions holding its sites and nothing they name (a helper
    # called, a class built), so those stay out of the parse unless another rule follows the names
    follows_names: ClassVar[bool] = True
    VALID: ClassVar[Sequence[str]] = ()
    INVALID: ClassVar[Sequence[Invalid]] = ()

    def __init__(self, context: RuleContext) -> None:
        self.context = context
        self.settings = {**self.options, **context.config.options_for(self.name)}

    @classmethod
    def trigger_strings(cls, config: Config, path: str) -> Tuple[str, ...]:
        """Substrings of which at least one must occur for the rule to fire (none: always)."""
        return cls.triggers

    @classmethod
    def sites(cls, view: SourceView, config: Config) -> Iterable[ast.AST]:
        """The stdlib-ast nodes of `view.tree` where the rule could fire; the tree itself
        means anywhere. A generator is drawn to its first site for the gate (see
        torchlint/core/gating.py)."""
        return (view.tree,)

    @classmethod
    def ast_facts(cls, view: SourceView, config: Config, record: FileRecord) -> None:
        """For a rule that looks across files (`project_rule`): fill the sections of the
        file's record (`torchlint.index.record.FileRecord`) that its project pass reads,
        from the stdlib ast alone, for every file that parses, triggered, gated or not
        (e.g. `record.classes`, through which other files' bases resolve). The LibCST
        pass adds to the same record (`context.record`), and a finding that waits for
        other files goes there through `context.defer(report, condition)`; one resolver
        decides every such condition (`torchlint.index.resolver`). A rule never writes
        JSON of its own. Default: nothing."""

    @classmethod
    def info(cls) -> RuleInfo:
        return RuleInfo(
            code=cls.code,
            name=cls.name,
            summary=cls.summary,
            doc=rule_doc(cls),
            fixable=cls.fixable,
            default_enabled=cls.default_enabled,
            level=cls.level,
        )

    def report(self, node, message: str, fix: Optional[FixFactory] = None, superseded_by: Optional[str] = None) -> None:
        self.context.reports.append(Report(self, node, message, fix, superseded_by))



def rule_doc(cls: type) -> str:
    return inspect.cleandoc(cls.__doc__ or "")
