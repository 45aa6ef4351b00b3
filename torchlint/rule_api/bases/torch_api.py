"""The base of TL101, TL102 and TL103: finding uses of the APIs in torchlint.analysis.torch_api_table
and building their fixes. Each rule picks the rows it reports (`selects`).

A name is found where it is written in full through the file's imports (`T.qr(...)` after
`import torch as T`, `cuda.amp.autocast()` after `from torch import cuda`) and where it is
imported by name (`from torch.cuda.amp import autocast`): that import is the finding, and
its fix rewrites every use of the imported name, then drops the import. A name the file
never reads moves to its new home (`from torch.func import vmap`): other modules may
import it from here. With no new home it is removed, except in a package `__init__`, and
the project pass keeps it where another file takes the name (`NameNotTakenElsewhere`).

Cost: finding is one traversal (O(1) per import, call, decorator and dotted name, the
guard checks of `CompatGuarded` aside). A dotted use's fix is O(its rewrite); where the
rewrites leave the imported head unread, the fix that rewrites every use of the head and
drops its import is built once per head (O(its uses)) and shared by those uses' findings.
An import's fix is O(the uses of its name); whether an import's name is read is
O(the file) per reported import. The names a file takes from others
(`ast_names_taken`) are one pass over its imports and attributes.
"""

from __future__ import annotations

import ast
import re
from functools import cached_property, lru_cache
from typing import Dict, List, Optional, Tuple

from packaging.version import Version

from torchlint.core.config import Config
from torchlint.core.diagnostics import Applicability, Edit, Fix
from torchlint.fixing.import_edits import (
    alias_name,
    block_lengths,
    import_edit,
    module_level_binding,
    name_reads,
    reads,
    rebind_module,
    remove_alias,
    replace_line,
    spell,
)
from torchlint.core.lazy import cst
from torchlint.analysis.names import ast_dotted_name, ast_names_taken, cst_dotted_name, cst_module_name, resolve
from torchlint.rule_api.bases.compat_guarded import CompatGuarded
from torchlint.analysis.source_view import SourceView
from torchlint.analysis.module_names import is_package
from torchlint.analysis.pending import NameNotTakenElsewhere
from torchlint.index.record import FileRecord
from torchlint.rule_api.rule import Positions, Report, Rule
from torchlint.fixing.torch_api_rewrites import REWRITES, code
from torchlint.analysis.torch_api_table import API_PARTS, LAST_NAMES, TABLE, TorchApi, lookup

# where a `torch._six` replacement lives, if it needs an import
_SIX_MODULES = {"math.inf": "math", "math.nan": "math", "collections.abc": "collections.abc"}

def _atomic(node) -> bool:
    """Whether an expression can replace a call as it is (no parentheses needed);
    a function, so that importing this module does not load LibCST."""
    return isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float, cst.SimpleString))


@lru_cache(maxsize=None)
def _version(text: str) -> Version:
    return Version(text)


def at_target(version: Optional[str], config: Config) -> bool:
    return version is not None and _version(config.target_torch) >= _version(version)


class TorchApiRule(CompatGuarded, Rule):
    fixable = True
    project_rule = True  # an import unread here stays while another file imports its name
    triggers = tuple(sorted(LAST_NAMES | {"functorch", "_six", "_utils"}))
    guard_probes = API_PARTS

    @classmethod
    def selects(cls, api: TorchApi, config: Config) -> bool:
        raise NotImplementedError

    @classmethod
    def sites(cls, view: SourceView, config: Config) -> Tuple[ast.AST, ...]:
        """The whole file (a fix rewrites every use of a name it imports), if it names a
        selected API."""
        return (view.tree,) if cls._names_selected(view, config) else ()

    @classmethod
    def ast_facts(cls, view: SourceView, config: Config, record: FileRecord) -> None:
        record.names_taken = tuple(ast_names_taken(view.nodes_of(ast.ImportFrom), view.nodes_of(ast.Attribute), view.imports))

    @classmethod
    def _names_selected(cls, view: SourceView, config: Config) -> bool:
        if not any(pattern.search(view.text) for pattern in _mention(cls, config.target_torch, config.rule_options)):
            return False
        for node in view.nodes_of(ast.ImportFrom):
            if node.level == 0 and node.module:
                if any(cls._selected(f"{node.module}.{alias.name}", config) for alias in node.names):
                    return True
        for node in view.nodes_of(ast.Import):
            if any(cls._selected(alias.name, config) for alias in node.names):
                return True
        table = view.imports
        for node in view.nodes_of(ast.Attribute):
            if node.attr in LAST_NAMES and cls._selected(resolve(ast_dotted_name(node), table), config):
                return True
        return False

    @classmethod
    def _selected(cls, qualified: Optional[str], config: Config) -> bool:
        api = lookup(qualified)
        return api is not None and cls.selects(api, config)

    def __init__(self, context) -> None:
        super().__init__(context)
        self.table = context.imports.table
        self.skip: set = set()
        self.line = None
        # calls and decorators by the bare name they use, for the fixes of from-imports
        self.calls_by_name: Dict[str, List] = {}
        self.decorators_by_name: Dict[str, List] = {}
        # reported dotted uses by the local name they start with (`cuda` in `cuda.amp.autocast`)
        self.dotted_uses: Dict[str, List[tuple]] = {}
        # (head, id(positions)) -> `_with_head_import_removed`'s edits, unique (None: no such fix)
        self._head_removals: Dict[Tuple[str, int], Optional[Tuple[Edit, ...]]] = {}
        # (id(edits), message, applicability) -> the one Fix the uses of a head share
        self._shared_fixes: Dict[tuple, Fix] = {}

    # ---- finding --------------------------------------------------------------

    def visit_SimpleStatementLine(self, node) -> None:
        self.line = node

    def visit_Import(self, node) -> None:
        for alias in node.names:
            self._skip_chain(alias.name)
            qualified = cst_module_name(alias.name)
            api = lookup(qualified)
            if api is not None and self.selects(api, self.context.config) and not self.guarded(alias):
                self.report(alias, self.message(api, qualified))

    def visit_ImportFrom(self, node) -> None:
        if node.module is not None:
            self._skip_chain(node.module)
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = cst_module_name(node.module)
        line = self.line
        for alias in node.names:
            qualified = f"{module}.{cst_module_name(alias.name)}"
            api = lookup(qualified)
            if api is not None and self.selects(api, self.context.config) and not self.guarded(alias):
                message = self.message(api, qualified)
                fix = lambda p, a=alias, q=api: self._import_fix(p, line, node, a, q)  # noqa: E731
                if self._unread_without_new_home(line, node, alias) and is_package(self.context.path):
                    self.report(alias, message + "; no fix: a package `__init__` imports names to export them")
                elif self._removable(line, node, alias):
                    # the fix removes it: unless another file imports the name from here
                    removed = Report(self, alias, message, fix)
                    kept = Report(self, alias, message + "; no fix: {where} imports the name from this module")
                    otherwise = self.context.diagnostic(kept)
                    if otherwise is not None:
                        self.context.defer(removed, NameNotTakenElsewhere(alias_name(alias), otherwise))
                else:
                    self.report(alias, message, fix)

    def visit_Decorator(self, node) -> None:
        decorator = node.decorator
        if isinstance(decorator, cst.Name):
            if not self.guarded(decorator):  # a guarded use keeps the import's fix from rewriting it
                self.decorators_by_name.setdefault(decorator.value, []).append(decorator)
        elif isinstance(decorator, cst.Attribute):
            self._use(decorator, None, decorator=True)

    def visit_Call(self, node) -> None:
        function = node.func
        if isinstance(function, cst.Name):
            if not self.guarded(node):  # as for decorators: the import then has no fix
                self.calls_by_name.setdefault(function.value, []).append(node)
        elif isinstance(function, cst.Attribute):
            self._use(function, node, decorator=False)

    def visit_Attribute(self, node) -> None:
        if id(node) not in self.skip:
            self._use(node, None, decorator=False)

    def _skip_chain(self, node) -> None:
        while isinstance(node, cst.Attribute):
            self.skip.add(id(node))
            node = node.value

    def _use(self, reference, call, decorator: bool) -> None:
        """A dotted reference (called by `call`, if given)."""
        if id(reference) in self.skip:
            return
        dotted = cst_dotted_name(reference)
        if dotted is None:
            return
        self._skip_chain(reference)
        head = dotted.split(".")[0]
        if lookup(self.table.get(head)) is not None:
            return  # the import of the head is the finding (`import functorch as ft`)
        qualified = resolve(dotted, self.table)
        api = lookup(qualified)
        if api is None or not self.selects(api, self.context.config) or self.guarded(reference):
            return
        use = (api, reference, call, decorator)
        self.dotted_uses.setdefault(head, []).append(use)
        self.report(reference, self.message(api, qualified), lambda p: self._use_fix(p, head, use))

    def message(self, api: TorchApi, qualified: str) -> str:
        if api.non_public:
            text = f"`{qualified}` is not public API"
        elif api.removed_in:
            text = f"`{qualified}` was removed in torch {api.removed_in} (deprecated since {api.deprecated_in})"
        else:
            text = f"`{qualified}` is deprecated since torch {api.deprecated_in}"
        if api.replacement:
            text += f": use `{api.replacement}`"
            if api.non_public:
                text += f" (public since torch {api.replacement_since})"
        if api.note:
            text += f"; {api.note}" if api.replacement else f": {api.note}"
        return text

    # ---- fixing ---------------------------------------------------------------

    def _fixable(self, api: TorchApi) -> bool:
        if any(name in self.context.text for name in api.no_fix_beside):
            return False
        return api.rewrite is not None and at_target(api.replacement_since, self.context.config)

    def _applicability(self, api: TorchApi) -> Applicability:
        return Applicability.SAFE if api.safe else Applicability.UNSAFE

    def _spelled(self, qualified: str, positions: Positions, edits: List[Edit], prefer=None) -> str:
        spelled, needed = spell(qualified, self.table, prefer)
        if needed is not None:
            edits.append(import_edit(self.context.module, positions, self.context.newline, needed))
        return spelled

    def _rewrite(self, api: TorchApi, reference, call, decorator: bool, positions, edits: List[Edit]) -> Optional[Edit]:
        """The edit that rewrites one use; imports it needs go to `edits`."""
        prefer = (cst_dotted_name(reference) or "").split(".")[0]
        if api.rewrite == "six":
            module = _SIX_MODULES.get(api.replacement or "")
            text = self._spelled(api.replacement, positions, edits, prefer) if module else api.replacement
            return positions.replace(reference, text)
        if api.rewrite == "rename":
            return positions.replace(reference, self._spelled(api.replacement, positions, edits, prefer))
        spelled_edits: List[Edit] = []
        spelled = self._spelled(api.replacement, positions, spelled_edits, prefer) if api.replacement else ""
        new = REWRITES[api.rewrite](call, spelled, decorator)
        if new is None:
            return None
        edits.extend(spelled_edits)
        if api.rewrite == "variable" and not _atomic(call.args[0].value):
            new = f"({new})"
        return positions.replace(call if call is not None else reference, new)

    def _use_fix(self, positions: Positions, head: str, use: tuple) -> Optional[Fix]:
        api = use[0]
        edits = self._use_edits(positions, use)
        if edits is None:
            return None
        if not reads(edits[0].content, head):
            whole = self._head_removal(positions, head)
            if whole is not None:
                key = (id(whole), self._fix_message(api), self._applicability(api))
                fix = self._shared_fixes.get(key)
                if fix is None:
                    fix = self._shared_fixes[key] = Fix(key[1], whole, key[2])
                return fix
        return Fix(self._fix_message(api), tuple(_unique(edits)), self._applicability(api))

    def _head_removal(self, positions: Positions, head: str) -> Optional[Tuple[Edit, ...]]:
        """`_with_head_import_removed`'s edits, unique, computed once per head: every use of
        `head` asks the same question."""
        key = (head, id(positions))
        if key not in self._head_removals:
            edits = self._with_head_import_removed(positions, head)
            self._head_removals[key] = tuple(_unique(edits)) if edits else None
        return self._head_removals[key]

    def _use_edits(self, positions: Positions, use: tuple) -> Optional[List[Edit]]:
        """The rewrite of one dotted use, then the imports it needs."""
        api, reference, call, decorator = use
        if not self._fixable(api):
            return None
        edits: List[Edit] = []
        edit = self._rewrite(api, reference, call, decorator, positions, edits)
        return None if edit is None else [edit, *edits]

    def _with_head_import_removed(self, positions: Positions, head: str) -> Optional[List[Edit]]:
        """When the rewrites of all uses of `head` (`cuda` after `from torch import cuda`)
        leave it unread: their edits, all in one fix, with the import of `head` removed.
        None when `head` is read elsewhere or any use has no rewrite. Cost: O(the uses of
        `head` + the file's names); asked once per head (`_head_removal`)."""
        binding = module_level_binding(self.context.module, head)
        if binding is None:
            return None
        line, node, alias = binding
        group = self.dotted_uses.get(head, [])
        if name_reads(self.context.view, head) != len(group):
            return None
        edits: List[Edit] = []
        for use in group:
            use_edits = self._use_edits(positions, use)
            if use_edits is None or reads(use_edits[0].content, head):
                return None
            edits.extend(use_edits)
        # an import added where this one was keeps the blank lines that follow
        tidy = all(edit.start != edit.end for edit in edits[1:])
        lengths = self._block_lengths.get(id(line), 0)
        removal = remove_alias(line, node, alias, positions, positions.lines, lengths, tidy)
        if removal is None:
            return None
        edits.append(removal)
        return None if _overlapping(edits) else edits

    def _fix_message(self, api: TorchApi) -> str:
        return f"Use `{api.replacement}`" if api.replacement else "Use the value itself"

    def _module_level(self, line, node) -> bool:
        lengths = self._block_lengths
        return line is not None and id(line) in lengths and any(small is node for small in line.body)

    def _unread_without_new_home(self, line, node, alias) -> bool:
        """A module-level import whose name this file never reads, with no new home to
        import it from."""
        if not self._module_level(line, node):
            return False
        api = lookup(f"{cst_module_name(node.module)}.{cst_module_name(alias.name)}")
        if api is None or api.rewrite == "six" or self._rebinds_to(node, alias) is not None:
            return False
        return name_reads(self.context.view, alias_name(alias)) == 0

    def _removable(self, line, node, alias) -> bool:
        """Whether the fix of this import removes it (if no other file imports its name):
        unread, no new home, outside a package `__init__` (which imports names to export
        them)."""
        return not is_package(self.context.path) and self._unread_without_new_home(line, node, alias)

    def _import_fix(self, positions: Positions, line, node, alias, api: TorchApi) -> Optional[Fix]:
        if not self._module_level(line, node):
            return None
        local = alias_name(alias)
        lengths = self._block_lengths
        lines = positions.lines
        if api.rewrite == "six":
            return self._six_fix(positions, line, node)
        uses = self.calls_by_name.get(local, []) + self.decorators_by_name.get(local, [])
        removal = remove_alias(line, node, alias, positions, lines, lengths[id(line)])
        if self._removable(line, node, alias):
            # deferred: no other file imports the name (`NameNotTakenElsewhere`)
            return Fix("Remove the unused import", (removal,)) if removal is not None else None
        if not self._fixable(api):
            return None
        module = self._rebinds_to(node, alias)
        if module is not None:
            # its new home, even where this file never reads it: another module may import it from here
            return self._rebind_fix(positions, line, node, alias, api, module, removal)
        read = name_reads(self.context.view, local)
        if removal is None or read != len(uses) or read == 0:
            return None  # the name is read where no rewrite reaches (passed as a value, say)
        edits = [removal]
        for use in uses:
            call = use if isinstance(use, cst.Call) else None
            reference = call.func if call is not None else use
            edit = self._rewrite(api, reference, call, call is None, positions, edits)
            if edit is None:
                return None
            edits.append(edit)
        if _overlapping(edits):
            return None  # a use nested in another: the next round rewrites it
        return Fix(self._fix_message(api), tuple(_unique(edits)), self._applicability(api))

    def _rebind_fix(self, positions, line, node, alias, api, module, removal) -> Optional[Fix]:
        if all(self._rebinds_to(node, other) == module for other in node.names):
            return Fix(self._fix_message(api), (rebind_module(node, module, positions),), self._applicability(api))
        if removal is None:
            return None
        new_import = f"from {module} import {code(alias.with_changes(comma=cst.MaybeSentinel.DEFAULT))}"
        insertion = positions.insert_lines_before(line, [new_import], self.context.newline)
        return Fix(self._fix_message(api), (removal, insertion), self._applicability(api))

    def _rebinds_to(self, node, alias) -> Optional[str]:
        """The module a renamed `from` import of `alias` moves to (None: it does not)."""
        api = lookup(f"{cst_module_name(node.module)}.{cst_module_name(alias.name)}")
        if api is None or api.rewrite != "rename" or not api.replacement or not self._fixable(api):
            return None
        module, _, last = api.replacement.rpartition(".")
        return module if last == cst_module_name(alias.name) else None

    def _six_fix(self, positions, line, node) -> Optional[Fix]:
        """`from torch._six import inf, string_classes` -> the same names bound by hand."""
        if len(line.body) != 1:
            return None
        new_lines = []
        for alias in node.names:
            api = lookup(f"torch._six.{cst_module_name(alias.name)}")
            if api is None or api.rewrite != "six":
                return None
            local = alias_name(alias)
            replacement = api.replacement
            if replacement == "collections.abc":
                new_lines.append(f"import collections.abc as {local}")
            elif replacement.startswith("math."):
                name = replacement.split(".")[1]
                new_lines.append(f"from math import {name}" + (f" as {local}" if local != name else ""))
            else:
                new_lines.append(f"{local} = {replacement}")
        edit = replace_line(line, positions, new_lines, self.context.newline)
        return Fix("Bind the names `torch._six` held", (edit,))

    @cached_property
    def _block_lengths(self) -> Dict[int, int]:
        return block_lengths(self.context.module)


@lru_cache(maxsize=None)
def _mention(rule: type, target: str, rule_options: tuple) -> tuple:
    """What a file must hold for the rule to find anything in it: a selected name after a
    dot (`T.qr`, `torch._six`), imported by name (`from torch import qr`, also in
    parentheses or after a backslash), or the module it is imported from (`from
    functorch import vmap`). A name under a private or `functorch` module needs only that
    module's name. Regexes are a far cheaper first test than the ast; three that each start
    with a literal (`.`, `import`, `from`) scan fifteen times faster than one alternation."""
    config = Config(target_torch=target, rule_options=rule_options)
    names = set()
    for api in TABLE:
        if rule.selects(api, config):
            parts = api.name.removesuffix(".*").split(".")
            distinctive = [part for part in parts if part.startswith("_") or part == "functorch"]
            names.update(distinctive or parts[-1:])
    words = "|".join(sorted(map(re.escape, names)))
    continued = r"(?:[^\n\\]|\\\n)*?"  # an import statement's line, across backslashes
    # up to the closing parenthesis, comments skipped; a comment runs to its newline, so
    # that `# noqa  # noqa` splits one way only (else the search backtracks exponentially)
    in_parentheses = r"\((?:[^)#]|#[^\n]*\n)*?"
    return (
        re.compile(rf"\.(?:\s|\\\n)*(?:{words})\b"),
        re.compile(rf"import\b{continued}(?:{in_parentheses})?\b(?:{words})\b"),
        re.compile(rf"from\s+[\w.]*\b(?:{words})\b"),
    )


def _overlapping(edits: List[Edit]) -> bool:
    spans = sorted({(e.start, e.end) for e in edits if e.start != e.end})
    return any(a[1] > b[0] for a, b in zip(spans, spans[1:]))


def _unique(edits: List[Edit]) -> List[Edit]:
    """One `import torch` however many rewrites asked for it, in the order first asked.
    Cost: O(edits) (edits are frozen dataclasses: hashed)."""
    return list(dict.fromkeys(edits))


def selects_deprecated(api: TorchApi, config: Config) -> bool:
    """TL102's rows: deprecated at the target (and not since made public again)."""
    if api.removed_in or api.non_public or not at_target(api.deprecated_in, config):
        return False
    return not at_target(api.withdrawn_in, config)

