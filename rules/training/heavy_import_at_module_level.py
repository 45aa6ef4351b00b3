from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from typing import AbstractSet, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from torchlint.core.config import Config
from torchlint.core.partial_parse import definitions_holding, statements_holding
from torchlint.core.diagnostics import Applicability, Edit, Fix, Location
from torchlint.fixing.layout import tidy_line_deletion
from torchlint.core.lazy import cst
from torchlint.analysis.modules import is_docstring
from torchlint.analysis.names import cst_dotted_name, import_module_name, module_level_ast_statements
from torchlint.core.positions import statements_mentioning
from torchlint.core.rule import Invalid, Positions, Report, Rule, SourceView
from torchlint.index.pending import ImportNotKeptElsewhere, Pending
from torchlint.index.record import FileRecord
from torchlint.analysis.every_step import parents_of
from torchlint.core.walk import ast_nodes, blocks, walk

REPORT_IMPORT_TIME_USE = "report-import-time-use"
LAZY_IMPORTS = "lazy-imports"
EXTEND_LAZY_IMPORTS = "extend-lazy-imports"
DEFAULT_LAZY_IMPORTS = (
    "wandb",
    "tensorboard",
    "tensorboardX",
    "torch.utils.tensorboard",
    "numba",
    "mlflow",
    "comet_ml",
    "neptune",
    # measured like wandb (python -X importtime, median of 3): clearml 5.5 s, aim 5.2 s,
    # dvclive 2.8 s, against wandb 3.0 s and mlflow 8.4 s on the same machine
    "clearml",
    "aim",
    "dvclive",
)
# calls whose first argument names a module they import now: importlib, the builtin, monai
_IMPORT_CALLS = frozenset({"import_module", "__import__", "optional_import"})


def lazy_module_of(module: str, name: Optional[str], lazy: Sequence[str]) -> Optional[str]:
    """The configured lazy module that `import module` / `from module import name` loads."""
    candidates = [module] if name is None else [module, f"{module}.{name}"]
    for candidate in candidates:
        for target in lazy:
            if candidate == target or candidate.startswith(target + "."):
                return target
    return None


def _is_type_checking(test) -> bool:
    return (cst_dotted_name(test) or "").split(".")[-1] == "TYPE_CHECKING"


def _ast_is_type_checking(node) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
    return name == "TYPE_CHECKING"


def _ast_import_time_statements(tree: ast.Module) -> Iterator[ast.stmt]:
    """Statements run when the module is imported (not under `if TYPE_CHECKING:`)."""
    stack = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)) or type(node).__name__ == "TryStar":
            found = blocks(node)
            for block in found[1:] if _ast_is_type_checking(node) else found:
                stack.extend(reversed(block))


def ast_called_import(statement) -> Optional[str]:
    """The module a statement such as `mlflow, _ = optional_import("mlflow")` imports."""
    value = getattr(statement, "value", None) if isinstance(statement, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
    if not isinstance(value, ast.Call) or not value.args:
        return None
    func, first = value.func, value.args[0]
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if name in _IMPORT_CALLS and isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return None


def _cst_called_import(statement) -> Optional[str]:
    value = getattr(statement, "value", None) if isinstance(statement, (cst.Expr, cst.Assign, cst.AnnAssign)) else None
    if not isinstance(value, cst.Call) or not value.args or value.args[0].keyword is not None:
        return None
    first = value.args[0].value
    if (cst_dotted_name(value.func) or "").split(".")[-1] in _IMPORT_CALLS and isinstance(first, cst.SimpleString):
        module = first.evaluated_value
        return module if isinstance(module, str) else None
    return None


def ast_heavy_imports(tree: ast.Module, lazy: Sequence[str]) -> Iterator[str]:
    """The configured lazy modules this module imports when it is imported."""
    for node in _ast_import_time_statements(tree):
        if isinstance(node, ast.Import):
            found = [lazy_module_of(a.name, None, lazy) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            relative = node.level or not node.module
            found = [] if relative else [lazy_module_of(node.module, a.name, lazy) for a in node.names]
        else:
            called = ast_called_import(node)
            found = [lazy_module_of(called, None, lazy)] if called else []
        yield from (module for module in found if module)


def ast_imported_modules(tree: ast.Module) -> List[str]:
    """Every module an import at import time may load, as written (relative ones with
    their dots): `from .a import b` may load `.a` and `.a.b`."""
    found: Set[str] = set()
    for node in _ast_import_time_statements(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            found.add(base)
            joint = "" if base.endswith(".") else "."
            found.update(base + joint + a.name for a in node.names if a.name != "*")
    return sorted(found)


def _may_be_project_import(imported: str, path: str) -> bool:
    """Whether an import may load a module of the project being linted: a relative one,
    or one whose top package names a folder on the file's path (`espnet2.asr.x` from
    `.../espnet2/asr/y.py`). Others are decided in the file; these in the project pass."""
    if imported.startswith("."):
        return True
    folders = path.replace("\\", "/").split("/")[:-1]
    return imported.split(".")[0] in folders


@dataclass
class _Candidate:
    statement: object  # cst.Import | cst.ImportFrom
    line: object  # the SimpleStatementLine holding it
    lazy_module: str
    conditional: bool
    called: bool = False  # spelled as a call: `importlib.import_module("mlflow")`


class HeavyImportAtModuleLevel(Rule):
    """
    ## What it does
    Flags a module-level import of a module that is slow to import or has been seen to hang
    (option `lazy-imports`: by default `wandb`, `tensorboard`, `tensorboardX`,
    `torch.utils.tensorboard`, `numba`, `mlflow`, `comet_ml`, `neptune`, `clearml`, `aim`,
    `dvclive`), when every use of the imported name is inside function bodies, so that an
    import where it is used removes it. Imports spelled as calls count too:
    `importlib.import_module("mlflow")`, `__import__("wandb")`, monai's
    `mlflow, _ = optional_import("mlflow")`.

    A module-level call of the module's API (`wandb.login()`, `wandb.init()`,
    `mlflow.start_run()`) is reported too, without a fix: importing this module then runs
    the hang-prone code itself, so the calls and the import belong in the function that
    runs them. Calls deeper in the package (`wandb.util.generate_id()`) and decorators
    count as other uses at import time.

    Not reported:
    - imports inside functions, and under `if TYPE_CHECKING:`;
    - an import whose name is used in another way when the module is imported
      (`@numba.njit`, a class body, a default argument, an evaluated annotation): only
      restructuring the module removes it (option `report-import-time-use`);
    - an import whose name is never read (F401's finding, or a check that it is installed);
    - an import whose move saves nothing: the module goes on importing the same heavy
      module at module level, in this file or through a project module it imports
      (resolved through the package layout of the linted paths; the flake8 plugin sees one
      file only);
    - Jupyter notebooks, where a top-level `import wandb` is how a notebook starts.

    ## Why is this bad?
    A top-level `import wandb` runs on every import of the module: in every data-loader
    worker, every test, every `--help`. It costs seconds each time, and it has hung
    training launches when its service could not start. Measured cold (`python -X
    importtime`, median of 3): `mlflow` 8.4 s, `clearml` 5.5 s, `aim` 5.2 s, `wandb` 3.0 s,
    `dvclive` 2.8 s.

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
    Safe: the module-level import is removed and the same import (same alias) becomes the
    first statement, after the docstring and above the comments of the first statement, of
    each outermost function that uses it. Python caches imported modules, so the repeated
    import costs a dictionary lookup. It keeps its trailing comment and the comment lines
    right above it (not those naming a group of imports that goes on below it).

    No fix when the import sits in a module-level `try`/`if`, is a star import, is spelled
    as a call, shares its line, or spans several lines beside other names; or when a name
    it binds is bound twice, used at import time, used in a function written on one line,
    named in annotations outside function bodies (it is needed under `if TYPE_CHECKING:`),
    or reached as an attribute of the module: listed in `__all__` (or `__all__` is
    computed), `getattr(..., "wandb")`, `globals()["wandb"]`, `sys.modules[__name__].wandb`,
    or a dotted string ending in it (`mock.patch("pkg.m.wandb")`). Only this file is seen:
    check the tests of a module before fixing it if they patch its imports.

    ## Options
    - `lazy-imports` (default: the list above): the modules to import lazily.
    - `extend-lazy-imports` (default `[]`): modules added to `lazy-imports`.
    - `report-import-time-use` (default `false`): also report imports whose name is used
      when the module is imported (no fix).

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

    VALID = (
        "def train():\n    import wandb\n    wandb.init()\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import wandb\n",
        "import typing\nif typing.TYPE_CHECKING:\n    from wandb import Run\n",
        "import torch\nfrom torch.utils.data import DataLoader\n",
        "import wandbx\n",
        "class Logger:\n    def start(self):\n        from torch.utils.tensorboard import SummaryWriter\n"
        "        return SummaryWriter()\n",
        # used when the module is imported: only restructuring helps (report-import-time-use)
        "import numba\n\n@numba.njit\ndef f(x):\n    return x\n",
        "import numba\n\n@numba.jit(nopython=True)\ndef f(x):\n    return x\n",
        "import wandb\n\ndef train(run: wandb.Run):\n    wandb.log({})\n",
        # a second import of a module that stays imported saves nothing
        "from numba import cuda\nimport numba\n\n@cuda.jit\ndef k(x):\n    pass\n\ndef f():\n    return numba.config\n",
        'import importlib\n\njson = importlib.import_module("json")\n',
        # never read: nothing to make lazy (F401's finding, or a check that it is installed)
        "import wandb\n",
        "try:\n    import numba  # noqa: F401\nexcept ImportError as e:\n    raise ImportError('pip install numba') from e\n",
    )
    INVALID = (
        Invalid(
            "import wandb\n\n\ndef train():\n    wandb.init()\n",
            fixed="def train():\n    import wandb\n\n    wandb.init()\n",
            line=1,
            column=1,
        ),
        Invalid(
            "import wandb as wb\n\ndef train():\n    '''Train.'''\n    wb.init()\n"
            "    def inner():\n        wb.log({})\n",
            fixed="def train():\n    '''Train.'''\n    import wandb as wb\n\n    wb.init()\n"
            "    def inner():\n        wb.log({})\n",
        ),
        Invalid(
            "from torch.utils.tensorboard import SummaryWriter\n\n"
            "class Trainer:\n    def fit(self):\n        return SummaryWriter()\n",
            fixed="class Trainer:\n    def fit(self):\n"
            "        from torch.utils.tensorboard import SummaryWriter\n\n        return SummaryWriter()\n",
        ),
        Invalid(
            "from torch.utils import data, tensorboard\n\ndef f():\n    return tensorboard, data\n",
            fixed="from torch.utils import data\n\ndef f():\n"
            "    from torch.utils import tensorboard\n\n    return tensorboard, data\n",
        ),
        Invalid("import wandb\n\nRUN = wandb.init()\n", options=((REPORT_IMPORT_TIME_USE, True),)),
        Invalid(
            "try:\n    import wandb\nexcept ImportError:\n    wandb = None\n\ndef log():\n    if wandb:\n        wandb.log({})\n",
            line=2,
            column=5,
        ),
        Invalid("import numba\n\n@numba.njit\ndef f(x):\n    return x\n", options=((REPORT_IMPORT_TIME_USE, True),)),
        # a module-level call into the module runs it whenever this module is imported: no fix
        Invalid("import wandb\n\nRUN = wandb.init()\n"),
        Invalid('import wandb\n\nwandb.login(key="k")\n\ndef train():\n    wandb.log({})\n\nwandb.finish()\n'),
        Invalid("import mlflow\n\nmlflow.start_run()\n"),
        # spelled as a call: reported, moved by hand
        Invalid('from monai.utils import optional_import\n\nmlflow, _ = optional_import("mlflow")\n\n'
                'def log():\n    mlflow.log_metric("a", 1)\n', line=3),
        Invalid('import importlib\n\nwandb = importlib.import_module("wandb")\n\ndef log():\n    wandb.log({})\n', line=3),
        Invalid('neptune = __import__("neptune")\n\ndef log():\n    neptune.init_run()\n'),
        # annotations that never run are no use at import time
        Invalid(
            "import wandb\n\ndef train():\n    run: wandb.Run = wandb.init()\n",
            fixed="def train():\n    import wandb\n\n    run: wandb.Run = wandb.init()\n",
        ),
        Invalid("from __future__ import annotations\nimport wandb\n\ndef train(run: wandb.Run):\n    wandb.log({})\n", line=2),
        Invalid('import wandb\n\ndef train(run: "wandb.Run"):\n    wandb.log({})\n'),
        # the moved import keeps its comments, and goes above the comment on the first statement
        Invalid(
            "import os\n\n# experiment tracking\nimport wandb\nimport torch\n\n"
            "def train():\n    wandb.init()\n    return os, torch\n",
            fixed="import os\n\nimport torch\n\ndef train():\n    # experiment tracking\n    import wandb\n\n"
            "    wandb.init()\n    return os, torch\n",
        ),
        Invalid(
            "import os\n\n# experiment tracking\nimport wandb  # type: ignore[import-untyped]\n\n"
            "def train():\n    \"\"\"Train.\"\"\"\n    # start a run\n    wandb.init()\n    return os\n",
            fixed="import os\n\ndef train():\n    \"\"\"Train.\"\"\"\n    # experiment tracking\n"
            "    import wandb  # type: ignore[import-untyped]\n\n    # start a run\n    wandb.init()\n    return os\n",
        ),
        Invalid("from typing import TYPE_CHECKING\nif not TYPE_CHECKING:\n    import mlflow\n\ndef f():\n    mlflow.log()\n"),
        # a name the module exports, or that is looked up on it by name: no fix
        Invalid("import wandb\n__all__ = ['wandb', 'train']\n\ndef train():\n    wandb.init()\n"),
        Invalid("import wandb\n__all__: tuple = ('train',)\n__all__ += ('wandb',)\n\ndef train():\n    wandb.init()\n"),
        Invalid(
            "from torch.utils.tensorboard import SummaryWriter\n__all__ = []\n__all__.append('SummaryWriter')\n\n"
            "def make():\n    return SummaryWriter()\n"
        ),
        Invalid("import wandb\n__all__ = ['train']\n__all__.extend(['wandb'])\n\ndef train():\n    wandb.init()\n"),
        Invalid("import wandb\n__all__ = [n for n in dir() if not n.startswith('_')]\n\ndef train():\n    wandb.init()\n"),
        Invalid("import sys\nimport wandb\n\ndef train():\n    wandb.init()\n\nHAS = hasattr(sys.modules[__name__], 'wandb')\n"),
        Invalid("import wandb\n\ndef train():\n    wandb.init()\n\ndef logger():\n    return globals()['wandb']\n"),
        Invalid("import sys\nimport wandb\n\ndef train():\n    return sys.modules[__name__].wandb, wandb.init()\n"),
        Invalid(
            "import wandb\nfrom unittest import mock\n\ndef train():\n    wandb.init()\n\n"
            "def test_train():\n    with mock.patch('trainer.wandb'):\n        train()\n"
        ),
        # `__all__` without the name, and the name's own text in a string: still fixed
        Invalid(
            "import wandb\n__all__ = ['train']\n\ndef train():\n    wandb.init(project='wandb')\n",
            fixed="__all__ = ['train']\n\ndef train():\n    import wandb\n\n    wandb.init(project='wandb')\n",
        ),
    )

    @classmethod
    def lazy_modules(cls, config: Config) -> Tuple[str, ...]:
        """The modules to import lazily: `lazy-imports`, then `extend-lazy-imports`."""
        settings = {**cls.options, **config.options_for(cls.name)}
        return settings[LAZY_IMPORTS] + settings[EXTEND_LAZY_IMPORTS]

    @classmethod
    def trigger_strings(cls, config: Config, path: str) -> Tuple[str, ...]:
        return tuple({module.rsplit(".", 1)[-1] for module in cls.lazy_modules(config)})

    @classmethod
    def gate(cls, view: SourceView, config: Config) -> bool:
        if view.tree is None:
            return True
        return next(ast_heavy_imports(view.tree, cls.lazy_modules(config)), None) is not None

    @classmethod
    def needed_definitions(cls, view: SourceView, config: Config) -> Optional[AbstractSet[int]]:
        """The definitions that mention a heavy module or a name one is bound to."""
        if view.tree is None:
            return None
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

    def visit_Module(self, node) -> None:
        candidates = list(self._candidates(node.body, conditional=False))
        if not candidates:
            return
        names = {name for candidate in candidates for name in self._bound_names(candidate)}
        self._names = names
        # scope analysis of only the statements that mention these names: it is linear
        # but costly, and a generated or data module can be large
        uses = _NameUses(
            statements_mentioning(node, self.context.statement_tree, self.context.text, names), _postpones_annotations(node)
        )
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
        decided_here = not any(_may_be_project_import(name, self.context.path) for name in record.imported_modules)
        for candidate, report, diagnostic in findings:
            if any(other is not candidate and other.lazy_module == candidate.lazy_module for other in staying):
                continue  # moving it saves nothing: another import of the module stays
            if decided_here:
                self.context.reports.append(report)
            else:
                record.pending.append(Pending(diagnostic, ImportNotKeptElsewhere(candidate.lazy_module)))

    def _bound_names(self, candidate: _Candidate) -> List[str]:
        statement = candidate.statement
        if candidate.called:
            targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else []
            if isinstance(statement, cst.AnnAssign):
                targets = [statement.target]
            names = []
            for target in targets:
                elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
                names += [e.value for e in elements if isinstance(e, cst.Name)]
            return names
        if isinstance(statement.names, cst.ImportStar):
            return []
        return [_bound_name(alias) for alias in self._lazy_aliases(statement)]

    def _finding(self, candidate: _Candidate, uses: "_NameUses") -> Tuple[Optional[Report], bool]:
        """The finding for a candidate (None if not reported) and whether its import stays
        after any fix (the name is used at import time: only restructuring removes it;
        never read: there is nothing to make lazy, and it may be a deliberate check that
        the module is installed)."""
        names = self._bound_names(candidate)
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

    def _never_read(self, candidate: _Candidate, names: List[str], reads: List["_Reads"]) -> bool:
        star = isinstance(candidate.statement, cst.ImportFrom) and isinstance(candidate.statement.names, cst.ImportStar)
        if star or any(read.functions or read.at_import or read.in_annotations for read in reads):
            return False
        return not any(self._reached_by_name().reason(name) for name in names)

    def _candidates(self, body, conditional: bool):
        lazy = self.lazy_modules(self.context.config)
        for statement in body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    target = self._lazy_target(small, lazy)
                    if target:
                        yield _Candidate(small, statement, target, conditional)
                        continue
                    called = _cst_called_import(small)
                    target = lazy_module_of(called, None, lazy) if called else None
                    if target:
                        yield _Candidate(small, statement, target, conditional, called=True)
            elif isinstance(statement, (cst.If, cst.Try, cst.TryStar, cst.With, cst.For, cst.While)):
                found = blocks(statement)
                if isinstance(statement, cst.If) and _is_type_checking(statement.test):
                    found = found[1:]  # only type checkers run that body
                for block in found:
                    yield from self._candidates(block, True)

    @staticmethod
    def _lazy_target(statement, lazy: Sequence[str]) -> Optional[str]:
        if isinstance(statement, cst.Import):
            for alias in statement.names:
                target = lazy_module_of(cst_dotted_name(alias.name) or "", None, lazy)
                if target:
                    return target
        elif isinstance(statement, cst.ImportFrom) and not statement.relative:
            module = import_module_name(statement)
            if isinstance(statement.names, cst.ImportStar):
                return lazy_module_of(module, None, lazy)
            for alias in statement.names:
                target = lazy_module_of(module, cst_dotted_name(alias.name), lazy)
                if target:
                    return target
        return None

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

    def _lazy_aliases(self, statement) -> List:
        lazy = self.lazy_modules(self.context.config)
        if isinstance(statement, cst.Import):
            return [a for a in statement.names if lazy_module_of(cst_dotted_name(a.name) or "", None, lazy)]
        module = import_module_name(statement)
        return [a for a in statement.names if lazy_module_of(module, cst_dotted_name(a.name), lazy)]

    def _no_fix_reason(self, candidate: _Candidate, uses: "_NameUses") -> Optional[str]:
        statement = candidate.statement
        if candidate.called:
            return "the import is spelled as a call; move it by hand"
        if candidate.conditional:
            return "the import sits in a module-level block; move it by hand"
        if isinstance(statement, cst.ImportFrom) and isinstance(statement.names, cst.ImportStar):
            return "a star import cannot be moved"
        if len(candidate.line.body) > 1:
            return "the line holds several statements"
        lazy_aliases = self._lazy_aliases(statement)
        if len(lazy_aliases) < len(statement.names) and "\n" in self.context.module.code_for_node(statement):
            return "the import spans several lines"
        for alias in lazy_aliases:
            bound = _bound_name(alias)
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
            by_name = self._reached_by_name().reason(bound)
            if by_name:
                return by_name
        return None

    def _reached_by_name(self) -> "_ReachedByName":
        if not hasattr(self, "_by_name"):
            view = self.context.view
            names = getattr(self, "_names", None)
            body = view.tree.body if view.tree else []
            mentioning = body if names is None else [body[i] for i in statements_holding(view, names)]
            exporting = [body[i] for i in statements_holding(view, ("__all__",))]
            self._by_name = _ReachedByName(view.tree, mentioning, exporting)
        return self._by_name

    def _fix(self, candidate: _Candidate, uses: "_NameUses", positions: Positions) -> Fix:
        statement = candidate.statement
        module = self.context.module
        newline = self.context.newline
        lazy_aliases = self._lazy_aliases(statement)
        kept = [a for a in statement.names if a not in lazy_aliases]
        comment, above = "", []
        if kept:
            edits = [positions.replace(statement, _import_code(module, statement, kept))]
        else:
            # its comments move with it: the trailing one, and those right above (no blank
            # line between), unless they name a group of imports that goes on below it
            # (`# third-party imports`)
            above = _comments_above(candidate.line)
            if self._heads_group(candidate.line) and any("import" in comment.lower() for comment in above):
                above = []
            deletion = positions.delete_lines(candidate.line)
            deletion = Edit(Location(deletion.start.row - len(above), 1), deletion.end, "")
            edits = [tidy_line_deletion(deletion, positions.lines)]
            trailing = candidate.line.trailing_whitespace.comment
            comment = f"  {trailing.value}" if trailing is not None else ""
        per_function: Dict[object, List] = {}
        for alias in lazy_aliases:
            for function in uses.reads(_bound_name(alias)).functions:
                per_function.setdefault(function, []).append(alias)
        for function, aliases in per_function.items():
            code = [*above, _import_code(module, statement, aliases) + comment]
            edits.append(_insert_first(function, code, positions, newline))
        edits.sort(key=lambda edit: edit.start)
        return Fix(
            f"Move the import of `{candidate.lazy_module}` into the functions that use it",
            tuple(edits),
            Applicability.SAFE,
        )


def _bound_name(alias) -> str:
    if alias.asname is not None:
        return alias.asname.name.value
    return (cst_dotted_name(alias.name) or "").split(".")[0]


def _import_code(module, statement, aliases) -> str:
    names = ", ".join(
        module.code_for_node(a.name) + (f" as {a.asname.name.value}" if a.asname else "")
        for a in aliases
    )
    if isinstance(statement, cst.Import):
        return f"import {names}"
    return f"from {import_module_name(statement)} import {names}"


def _insert_first(function, code: List[str], positions: Positions, newline: str):
    """The import as the function's first statement: after its docstring, and above the
    comment lines that describe the statement it goes before."""
    body = function.body.body
    first = body[0]
    if is_docstring(first):
        if len(body) == 1:
            return positions.insert_lines_after(first, code, newline, positions.indent_of(first))
        first = body[1]
    edit = positions.insert_lines_before(first, _import_lines(code, first), newline)
    row = edit.start.row - _comment_lines_above(first)
    return Edit(Location(row, 1), Location(row, 1), edit.content)


def _comment_lines_above(statement) -> int:
    return len(_comments_above(statement))


def _comments_above(statement) -> List[str]:
    """The comment lines right above a statement (no blank line between)."""
    comments: List[str] = []
    for line in reversed(statement.leading_lines):
        if line.comment is None:
            break
        comments.insert(0, line.comment.value)
    return comments


def _import_lines(code: List[str], following) -> List[str]:
    """The import, then the blank line a formatter puts between imports and other code."""
    imports = (cst.Import, cst.ImportFrom)
    if isinstance(following, cst.SimpleStatementLine) and isinstance(following.body[0], imports):
        return code
    return [*code, ""]


@dataclass
class _Reads:
    """Where a module-level name is read."""

    functions: List  # the outermost functions whose bodies read it
    at_import: bool = False  # read when the module is imported
    calls_at_import: bool = False  # called into when the module is imported (`wandb.init()`), not as a decorator
    in_annotations: bool = False  # named in annotations outside function bodies that never run


class _NameUses:
    """Where the module-level names are read, from LibCST's scope analysis (only computed
    for files that have a candidate import, so its cost is paid rarely)."""

    def __init__(self, module, postponed: bool) -> None:
        metadata = importlib.import_module("libcst.metadata")
        wrapper = metadata.MetadataWrapper(module, unsafe_skip_copy=True)
        scopes = wrapper.resolve(metadata.ScopeProvider)
        self._metadata = metadata
        self._module = module
        self._global = scopes[module]
        self._postponed = postponed  # `from __future__ import annotations`
        self._names_in_code: Optional[set] = None
        self._parents: Optional[Dict] = None

    def binding_count(self, name: str) -> int:
        return len(self._global.assignments[name])

    def reads(self, name: str) -> _Reads:
        found = _Reads([])
        for assignment in self._global.assignments[name]:
            for access in assignment.references:
                function = self._outermost_function(access.scope)
                if function is not None:  # a local annotation is never evaluated, but it names the import
                    if function not in found.functions:
                        found.functions.append(function)
                elif self._evaluated(access):
                    found.at_import = True
                    found.calls_at_import = found.calls_at_import or self._called_into(access.node)
                else:
                    found.in_annotations = True
        return found

    def _evaluated(self, access) -> bool:
        """Whether a read outside function bodies runs at import time: all do except
        annotations under `from __future__ import annotations` and names in strings
        (string annotations, `cast("T", x)`), which LibCST parses into nodes of their own."""
        if not (access.is_annotation or access.is_type_hint):
            return True
        if access.is_annotation and self._postponed:
            return False
        if self._names_in_code is None:
            self._names_in_code = {id(node) for node in walk(self._module) if isinstance(node, cst.Name)}
        return id(access.node) in self._names_in_code

    def _called_into(self, name) -> bool:
        """Whether a read is the head of a call of the module's own API (`wandb.finish()`,
        `mlflow.start_run(...)`, `init()` after `from wandb import init`) outside a
        decorator (`@numba.njit`, `@numba.jit(...)`)."""
        if self._parents is None:
            self._parents = parents_of(self._module)
        child, parent = name, self._parents.get(name)
        if isinstance(parent, cst.Attribute) and parent.value is child:
            child, parent = parent, self._parents.get(parent)
        if not (isinstance(parent, cst.Call) and parent.func is child):
            return False  # `wb.util.generate_id()`: a helper deeper in the package
        while parent is not None and not isinstance(parent, cst.SimpleStatementLine):
            if isinstance(parent, cst.Decorator):
                return False
            parent = self._parents.get(parent)
        return True

    def _outermost_function(self, scope):
        found = None
        metadata = self._metadata
        while scope is not None and not isinstance(scope, metadata.GlobalScope):
            if isinstance(scope, metadata.FunctionScope) and isinstance(scope.node, cst.FunctionDef):
                found = scope.node
            scope = scope.parent
        return found


def _postpones_annotations(module) -> bool:
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom) and import_module_name(small) == "__future__":
                names = small.names if not isinstance(small.names, cst.ImportStar) else ()
                if any(cst_dotted_name(alias.name) == "annotations" for alias in names):
                    return True
    return False


_LOOKUPS = frozenset({"getattr", "hasattr", "setattr", "delattr"})
_NAMESPACES = frozenset({"globals", "vars", "locals"})


def _literal_strings(node) -> Optional[set]:
    """The strings of a literal list/tuple/set (or a sum of them); None if not literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        found: set = set()
        for element in node.elts:
            strings = _literal_strings(element.value if isinstance(element, ast.Starred) else element)
            if strings is None:
                return None
            found |= strings
        return found
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal_strings(node.left), _literal_strings(node.right)
        return None if left is None or right is None else left | right
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple"):
        if not node.args and not node.keywords:
            return set()
        if len(node.args) == 1 and not node.keywords:
            return _literal_strings(node.args[0])
    return None


def _is_all(node) -> bool:
    return isinstance(node, ast.Name) and node.id == "__all__"


class _ReachedByName:
    """The module's names that this file reaches as attributes of the module rather than
    by reading them: exported in `__all__`, looked up with `getattr(...)`,
    `globals()[...]`, `sys.modules[__name__].x`, or named by a dotted string. Moving
    their import into functions would make those lookups fail."""

    def __init__(self, tree: Optional[ast.Module], mentioning: Sequence[ast.stmt], exporting: Sequence[ast.stmt]) -> None:
        """`mentioning`: the top-level statements whose text holds a name asked about
        (a lookup by name spells the name, so no other statement can hold one);
        `exporting`: those whose text holds `__all__`."""
        self.exported: set = set()
        self.computed_all = False
        self.looked_up: Dict[str, str] = {}
        if tree is None:  # cannot happen after a LibCST parse; no claim either way
            self.computed_all = True
            return
        for statement in module_level_ast_statements(ast.Module(body=list(exporting), type_ignores=[])):
            self._read_all(statement)
        for statement in mentioning:
            for node in ast.walk(statement):
                self._read_lookup(node)

    def reason(self, name: str) -> Optional[str]:
        if name in self.exported:
            return f"`{name}` is exported in `__all__`, which `from ... import *` follows"
        if self.computed_all:
            return f"`__all__` is computed and may export `{name}`"
        how = self.looked_up.get(name)
        if how:
            return f"`{name}` is looked up on the module by name ({how})"
        return None

    def _read_all(self, statement) -> None:
        value = None
        if isinstance(statement, ast.Assign) and any(_is_all(t) for t in statement.targets):
            value = statement.value
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)) and _is_all(statement.target):
            value = statement.value
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            call = statement.value
            func = call.func
            if isinstance(func, ast.Attribute) and _is_all(func.value) and call.args:
                if func.attr in ("append", "insert"):  # the added name is the last argument
                    value = ast.List([call.args[-1]], ast.Load())
                elif func.attr == "extend":
                    value = call.args[0]
        if value is None:
            if any(_is_all(node) for node in ast_nodes(statement) if isinstance(getattr(node, "ctx", None), ast.Store)):
                self.computed_all = True  # `for __all__ in ...`, `__all__[:] = ...`
            return
        strings = _literal_strings(value)
        if strings is None:
            self.computed_all = True
        else:
            self.exported |= strings

    def _read_lookup(self, node) -> None:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _LOOKUPS:
            if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                self.looked_up.setdefault(node.args[1].value, f"`{node.func.id}`")
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            holder = node.value
            namespace = isinstance(holder, ast.Call) and isinstance(holder.func, ast.Name) and holder.func.id in _NAMESPACES
            if namespace or (isinstance(holder, ast.Attribute) and holder.attr == "__dict__"):
                self.looked_up.setdefault(node.slice.value, "a namespace subscript")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Subscript):
            modules = node.value.value
            if isinstance(modules, ast.Attribute) and modules.attr == "modules":
                self.looked_up.setdefault(node.attr, "`sys.modules[...]`")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "." in node.value:
            parts = node.value.split(".")
            if len(parts) > 1 and all(part.isidentifier() for part in parts):
                self.looked_up.setdefault(parts[-1], f"the dotted string {node.value!r}")
