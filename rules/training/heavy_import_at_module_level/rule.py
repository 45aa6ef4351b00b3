"""TL001 heavy-import-at-module-level: the rule, which reports module-level imports of slow or hang-prone
modules used only in function bodies, and its fix (move the import into those functions).
Cost: linear in the statements that mention the names the heavy imports bind
(name_uses.NameUses), plus one pass over the module's top-level statements."""

from __future__ import annotations

import ast
from functools import cached_property
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Set, Tuple

from torchlint.analysis.names import (
    ast_called_import,
    module_level_ast_statements,
)
from torchlint.core.config import Config
from torchlint.core.diagnostics import Applicability, Edit, Fix, Location
from torchlint.core.gating import with_context
from torchlint.core.lazy import cst
from torchlint.core.partial_parse import definitions_holding, statements_holding
from torchlint.analysis.source_view import SourceView
from torchlint.rule_api.rule import Positions, Report, Rule
from torchlint.core.walk import ast_nodes
from torchlint.fixing.layout import tidy_line_deletion
from torchlint.analysis.pending import ImportNotKeptElsewhere, Pending
from torchlint.index.record import FileRecord
from torchlint.rules.training.heavy_import_at_module_level import examples
from torchlint.rules.training.heavy_import_at_module_level.candidates import (
    Candidate,
    aliases_loading_lazy,
    bound_names,
    find_candidates,
)
from torchlint.rules.training.heavy_import_at_module_level.heavy_modules import (
    DEFAULT_LAZY_IMPORTS,
    EXTEND_LAZY_IMPORTS,
    LAZY_IMPORTS,
    REPORT_IMPORT_TIME_USE,
    ast_heavy_imports,
    ast_imported_modules,
    lazy_module_of,
    may_be_project_import,
)
from torchlint.rules.training.heavy_import_at_module_level.import_edits import (
    bound_name,
    comments_above,
    import_code,
    insert_first,
)
from torchlint.rules.training.heavy_import_at_module_level.name_uses import NameUses, postpones_annotations
from torchlint.rules.training.heavy_import_at_module_level.reached_by_name import ReachedByName

if TYPE_CHECKING:
    from torchlint.rules.training.heavy_import_at_module_level.name_uses import Reads


class HeavyImportAtModuleLevel(Rule):
    """
    ## What it does
    Flags a module-level import of a module that is slow to import or has been seen to hang (option
    `lazy-imports`: by default `wandb`, `tensorboard`, `tensorboardX`, `torch.utils.tensorboard`,
    `numba`, `mlflow`, `comet_ml`, `neptune`, `clearml`, `aim`, `dvclive`), when every use of the
    imported name is inside function bodies, so that an import where it is used removes it. Imports
    spelled as calls count too: `importlib.import_module("mlflow")`, `__import__("wandb")`, monai's
    `mlflow, _ = optional_import("mlflow")`. A module-level call of the module's API (`wandb.login()`,
    `mlflow.start_run()`) is reported without a fix: importing this module then runs the hang-prone
    code itself, so the calls and the import belong in the function that runs them. Calls deeper in
    the package (`wandb.util.generate_id()`) and decorators count as other uses at import time.

    Not reported:
    - imports inside functions, and under `if TYPE_CHECKING:`;
    - an import whose name is used in another way when the module is imported (`@numba.njit`, a
      class body, a default argument, an evaluated annotation): only restructuring the module
      removes it (option `report-import-time-use`);
    - an import whose name is never read (F401's finding, or a check that it is installed);
    - an import whose move saves nothing: the module goes on importing the same heavy module at
      module level, in this file or through a project module it imports (resolved through the
      package layout of the linted paths; the flake8 plugin sees one file only);
    - Jupyter notebooks, where a top-level `import wandb` is how a notebook starts.

    ## Why is this bad?
    A top-level `import wandb` runs on every import of the module: in every data-loader worker, every
    test, every `--help`. It costs seconds each time (cold, `python -X importtime`, median of 3:
    `mlflow` 8.4 s, `clearml` 5.5 s, `aim` 5.2 s, `wandb` 3.0 s, `dvclive` 2.8 s), and it has hung
    training launches when its service could not start.

    ## Example
    ```python
    import wandb

    def train(model):
        wandb.init(project="ocr")
    ```

    ## Use instead
    ```python
    def train(model):
        import wandb
        wandb.init(project="ocr")
    ```

    ## Fix safety
    Safe: the module-level import is removed and the same import (same alias) becomes the first
    statement, after the docstring and above the comments of the first statement, of each outermost
    function that uses it; Python caches imported modules, so the repeated import costs a dictionary
    lookup. It keeps its trailing comment and the comment lines right above it (not those naming a
    group of imports that goes on below it). No fix when the import sits in a module-level `try`/`if`,
    is a star import, is spelled as a call, shares its line, or spans several lines beside other
    names; or when a name it binds is bound twice, used at import time, used in a function written on
    one line, named in annotations outside function bodies (it is needed under `if TYPE_CHECKING:`),
    or reached as an attribute of the module: listed in `__all__` (or `__all__` is computed),
    `getattr(..., "wandb")`, `globals()["wandb"]`, `sys.modules[__name__].wandb`, or a dotted string
    ending in it (`mock.patch("pkg.m.wandb")`). Only this file is seen: check the tests of a module
    before fixing it if they patch its imports.

    ## Options
    - `lazy-imports` (default: the list above): the modules to import lazily.
    - `extend-lazy-imports` (default `[]`): modules added to `lazy-imports`.
    - `report-import-time-use` (default `false`): also imports whose name is used when the module is
      imported (no fix).

    ```toml
    [tool.torchlint.heavy-import-at-module-level]
    extend-lazy-imports = ["matplotlib"]
    ```
    """

    code = "TL001"
    name = "heavy-import-at-module-level"
    summary = "Module-level import of a slow or hang-prone module"
    fixable = True
    project_rule = True
    applies_to_notebooks = False
    options = {REPORT_IMPORT_TIME_USE: False, LAZY_IMPORTS: DEFAULT_LAZY_IMPORTS, EXTEND_LAZY_IMPORTS: ()}

    VALID = examples.VALID
    INVALID = examples.INVALID

    @classmethod
    def lazy_modules(cls, config: Config) -> Tuple[str, ...]:
        """The modules to import lazily: `lazy-imports`, then `extend-lazy-imports`."""
        settings = {**cls.options, **config.options_for(cls.name)}
        return settings[LAZY_IMPORTS] + settings[EXTEND_LAZY_IMPORTS]

    @classmethod
    def trigger_strings(cls, config: Config, path: str) -> Tuple[str, ...]:
        return tuple({module.rsplit(".", 1)[-1] for module in cls.lazy_modules(config)})

    @classmethod
    def sites(cls, view: SourceView, config: Config) -> Iterator[ast.AST]:
        """The module-level heavy imports, and the definitions that mention a heavy module
        or a name one is bound to (where the fix moves the imports)."""
        if view.tree is None:  # a file that does not parse (only outside the engine)
            return iter(())
        return with_context(ast_heavy_imports(view.tree, cls.lazy_modules(config)), lambda: cls._users(view, config))

    @classmethod
    def _users(cls, view: SourceView, config: Config) -> List[ast.stmt]:
        lazy = cls.lazy_modules(config)
        bound = [local for local, target in view.imports.items() if lazy_module_of(target, None, lazy)]
        for node in module_level_ast_statements(view.tree):
            called = ast_called_import(node)
            if called and lazy_module_of(called, None, lazy):
                targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
                bound.extend(n.id for target in targets for n in ast_nodes(target) if isinstance(n, ast.Name))
        return definitions_holding(view, (*cls.trigger_strings(config, view.path), *bound))

    @classmethod
    def ast_facts(cls, view: SourceView, config: Config, record: FileRecord) -> None:
        record.imported_modules = tuple(ast_imported_modules(view.tree)) if view.tree is not None else ()

    def __init__(self, context) -> None:
        super().__init__(context)
        self._names: Optional[Set[str]] = None  # the names the lazy imports bind, once found

    def visit_Module(self, node) -> None:
        lazy = self.lazy_modules(self.context.config)
        candidates = list(find_candidates(node.body, lazy, conditional=False))
        if not candidates:
            return
        names = {name for candidate in candidates for name in bound_names(candidate, lazy)}
        self._names = names
        uses = NameUses(node, self.context.statement_tree, self.context.text, names, postpones_annotations(node))
        staying = []  # the candidates whose import stays after every fix
        findings = []
        for candidate in candidates:
            report, stays = self._finding(candidate, uses)
            diagnostic = self.context.diagnostic(report) if report is not None else None
            if stays or (report is not None and diagnostic is None):  # `# noqa`: the user keeps it
                staying.append(candidate)
            if diagnostic is not None:
                findings.append((candidate, report, diagnostic))
        record = self.context.record
        record.staying_imports = tuple(sorted({candidate.lazy_module for candidate in staying}))
        decided_here = not any(may_be_project_import(name, self.context.path) for name in record.imported_modules)
        for candidate, report, diagnostic in findings:
            if any(other is not candidate and other.lazy_module == candidate.lazy_module for other in staying):
                continue  # moving it saves nothing: another import of the module stays
            if decided_here:
                self.context.reports.append(report)
            else:
                record.pending.append(Pending(diagnostic, ImportNotKeptElsewhere(candidate.lazy_module)))

    def _finding(self, candidate: Candidate, uses: NameUses) -> Tuple[Optional[Report], bool]:
        """The finding for a candidate (None if not reported) and whether its import stays
        after any fix (the name is used at import time: only restructuring removes it;
        never read: there is nothing to make lazy, and it may be a deliberate check that
        the module is installed)."""
        names = bound_names(candidate, self.lazy_modules(self.context.config))
        reads = [uses.reads(name) for name in names]
        if self._never_read(candidate, names, reads):
            return None, True
        at_import = any(read.at_import for read in reads)
        message = (
            f"Module-level import of `{candidate.lazy_module}` slows every import of this module "
            "and can hang a launch; import it where it is used"
        )
        if any(read.calls_at_import for read in reads):
            # importing this module runs the hang-prone code itself
            message = (
                f"Module-level calls into `{candidate.lazy_module}` run whenever this module is imported "
                "and can hang a launch; move the calls and the import into the function that runs them "
                "(no automatic fix)"
            )
            return Report(self, candidate.statement, message), True
        if at_import and not self.settings[REPORT_IMPORT_TIME_USE]:
            return None, True
        reason = self._no_fix_reason(candidate, uses)
        if reason:
            return Report(self, candidate.statement, f"{message} (no automatic fix: {reason})"), at_import
        fix = lambda positions: self._fix(candidate, uses, positions)  # noqa: E731
        return Report(self, candidate.statement, message, fix), at_import

    def _never_read(self, candidate: Candidate, names: List[str], reads: List[Reads]) -> bool:
        star = isinstance(candidate.statement, cst.ImportFrom) and isinstance(candidate.statement.names, cst.ImportStar)
        if star or any(read.functions or read.at_import or read.in_annotations for read in reads):
            return False
        return not any(self._by_name.reason(name) for name in names)

    def _heads_group(self, line) -> bool:
        """Whether the statement right after `line` is an import on the next row."""
        body = list(self.context.module.body)
        index = next((i for i, statement in enumerate(body) if statement is line), len(body))
        following = body[index + 1] if index + 1 < len(body) else None
        return (
            isinstance(following, cst.SimpleStatementLine)
            and not following.leading_lines
            and isinstance(following.body[0], (cst.Import, cst.ImportFrom))
        )

    def _no_fix_reason(self, candidate: Candidate, uses: NameUses) -> Optional[str]:
        statement = candidate.statement
        if candidate.called:
            return "the import is spelled as a call; move it by hand"
        if candidate.conditional:
            return "the import sits in a module-level block; move it by hand"
        if isinstance(statement, cst.ImportFrom) and isinstance(statement.names, cst.ImportStar):
            return "a star import cannot be moved"
        if len(candidate.line.body) > 1:
            return "the line holds several statements"
        lazy_aliases = aliases_loading_lazy(statement, self.lazy_modules(self.context.config))
        if len(lazy_aliases) < len(statement.names) and "\n" in self.context.module.code_for_node(statement):
            return "the import spans several lines"
        for alias in lazy_aliases:
            bound = bound_name(alias)
            if uses.binding_count(bound) != 1:
                return f"`{bound}` is bound more than once"
            reads = uses.reads(bound)
            functions = reads.functions
            if reads.at_import:
                return f"`{bound}` is used when the module is imported"
            if reads.in_annotations:
                return (
                    f"`{bound}` is named in annotations outside function bodies; "
                    "import it under `if TYPE_CHECKING:` as well"
                )
            if not functions:
                return f"`{bound}` is never used, and removing the import could drop a side effect"
            if any(not isinstance(f.body, cst.IndentedBlock) for f in functions):
                return f"a function using `{bound}` is written on one line"
            by_name = self._by_name.reason(bound)
            if by_name:
                return by_name
        return None

    @cached_property
    def _by_name(self) -> ReachedByName:
        view = self.context.view
        body = view.tree.body if view.tree else []
        mentioning = body if self._names is None else [body[i] for i in statements_holding(view, self._names)]
        exporting = [body[i] for i in statements_holding(view, ("__all__",))]
        return ReachedByName(view.tree, mentioning, exporting)

    def _fix(self, candidate: Candidate, uses: NameUses, positions: Positions) -> Fix:
        statement = candidate.statement
        module = self.context.module
        newline = self.context.newline
        lazy_aliases = aliases_loading_lazy(statement, self.lazy_modules(self.context.config))
        kept = [a for a in statement.names if a not in lazy_aliases]
        comment, above = "", []
        if kept:
            edits = [positions.replace(statement, import_code(module, statement, kept))]
        else:
            # its comments move with it: the trailing one, and those right above (no blank
            # line between), unless they name a group of imports that goes on below it
            # (`# third-party imports`)
            above = comments_above(candidate.line)
            if self._heads_group(candidate.line) and any("import" in comment.lower() for comment in above):
                above = []
            deletion = positions.delete_lines(candidate.line)
            deletion = Edit(Location(deletion.start.row - len(above), 1), deletion.end, "")
            edits = [tidy_line_deletion(deletion, positions.lines)]
            trailing = candidate.line.trailing_whitespace.comment
            comment = f"  {trailing.value}" if trailing is not None else ""
        per_function: Dict[object, List] = {}
        for alias in lazy_aliases:
            for function in uses.reads(bound_name(alias)).functions:
                per_function.setdefault(function, []).append(alias)
        for function, aliases in per_function.items():
            code = [*above, import_code(module, statement, aliases) + comment]
            edits.append(insert_first(function, code, positions, newline))
        edits.sort(key=lambda edit: edit.start)
        return Fix(
            f"Move the import of `{candidate.lazy_module}` into the functions that use it",
            tuple(edits),
            Applicability.SAFE,
        )
