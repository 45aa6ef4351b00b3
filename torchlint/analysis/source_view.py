"""The cheap views of one file (its stdlib ast, imports, statement spans) that rules' sites
and the analyses read, each computed at most once.

Cost: each view is computed at most once per file (a parse, one walk indexing the nodes
by type, which takes the nodes of a function kept from the text's previous version from
`memo`); `nodes_of` is a lookup."""

from __future__ import annotations

import ast
from functools import cached_property
from typing import TYPE_CHECKING, Collection, Dict, List, Optional, Tuple, Union

from torchlint.analysis.definition_memo import NO_MEMO, DefinitionMemo, NoMemo
from torchlint.analysis.names import ImportTable, ast_dotted_name, ast_import_table, resolve
from torchlint.core.gating import RuleSites
from torchlint.core.partial_parse import statement_spans
from torchlint.core.source import split_lines
from torchlint.core.walk import ast_children, ast_nodes

if TYPE_CHECKING:
    from torchlint.analysis.file_analysis import FileAnalysis


class SourceView:
    """The cheap views of a file that rules' sites may use; each is computed at most once."""

    def __init__(
        self,
        text: str,
        path: str = "<string>",
        tree: Optional[ast.Module] = None,
        parse_text: Optional[str] = None,
        memo: Union[DefinitionMemo, NoMemo] = NO_MEMO,
    ) -> None:
        self.text = text
        self.path = path
        # what the parsers see: the text, or the same rows and columns with bulk data
        # blanked out (torchlint.core.parse.elide_data)
        self.parse_text = text if parse_text is None else parse_text
        self.syntax_error: Optional[SyntaxError] = None
        self._given_tree = tree  # already parsed by the caller (flake8 hands plugins its tree)
        self.rule_sites: Dict[type, RuleSites] = {}  # what each rule's sites are here
        self.memo = memo  # what the analyses of the text's previous version found of the definitions kept

    @cached_property
    def tree(self) -> Optional[ast.Module]:
        if self._given_tree is not None:
            return self._given_tree
        try:
            try:
                return ast.parse(self.parse_text, self.path)
            except SyntaxError:
                if self.parse_text is self.text:
                    raise
                self.parse_text = self.text  # the elided text is no guide here: use the file's
                return ast.parse(self.text, self.path)
        except SyntaxError as error:
            self.syntax_error = error
        except ValueError as error:  # null bytes
            self.syntax_error = SyntaxError(str(error))
        except (RecursionError, MemoryError) as error:  # CPython cannot compile it either
            detail = f": {error}" if str(error) else ""
            self.syntax_error = SyntaxError(f"too deeply nested for Python's parser ({type(error).__name__}{detail})")
        return None

    @cached_property
    def analysis(self) -> "FileAnalysis":
        """What the analysis layer derives from this file and shares among its readers."""
        from torchlint.analysis.file_analysis import FileAnalysis

        return FileAnalysis(self)

    @cached_property
    def imports(self) -> ImportTable:
        return ast_import_table(self.tree) if self.tree is not None else {}

    @cached_property
    def statement_spans(self) -> List[Tuple[int, int]]:
        """(first row, last row) of each top-level statement of the tree."""
        return statement_spans(self.tree)

    @cached_property
    def parse_lines(self) -> List[str]:
        """The rows of the parse text (read after `tree`, which may fall back to the text)."""
        return split_lines(self.parse_text)

    @cached_property
    def call_targets(self) -> List[Tuple[ast.Call, Optional[str]]]:
        """Each call of the file with the qualified name its callee resolves to through the
        file's imports (`torch.load` for `th.load(...)`; None where the callee has no
        dotted name). Cost: one pass over the calls, shared by the rules that ask."""
        imports = self.imports
        return [(call, resolve(ast_dotted_name(call.func), imports)) for call in self.nodes_of(ast.Call)]

    def calls_to(self, targets: Collection[str]) -> List[ast.Call]:
        """The calls whose callee resolves to one of `targets` (see `call_targets`)."""
        return [call for call, target in self.call_targets if target in targets]

    def nodes_of(self, *kinds: type) -> List[ast.AST]:
        """Every node of these ast types, from one shared walk of the tree."""
        index = self._index
        if len(kinds) == 1:
            return index.get(kinds[0], [])
        return [node for kind in kinds for node in index.get(kind, [])]

    @cached_property
    def _index(self) -> Dict[type, List[ast.AST]]:
        if self.tree is None:
            return {}
        if isinstance(self.memo, NoMemo):
            return _by_type(ast_nodes(self.tree))
        return _by_type_kept(self.tree, self.memo)


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _by_type(nodes: List[ast.AST]) -> Dict[type, List[ast.AST]]:
    index: Dict[type, List[ast.AST]] = {}
    for node in nodes:
        index.setdefault(type(node), []).append(node)
    return index


def _by_type_kept(tree: ast.Module, memo: DefinitionMemo) -> Dict[type, List[ast.AST]]:
    """`_by_type(ast_nodes(tree))`, each function outside functions from `memo`: `ast_nodes`
    gives a function's nodes in one run, so the same lists by type in the same order."""
    index: Dict[type, List[ast.AST]] = {}
    stack: List[ast.AST] = [tree]
    while stack:
        current = stack.pop()
        if isinstance(current, _FUNCTIONS):
            function = current
            for kind, nodes in memo.result(function, "nodes", None, lambda: _by_type(ast_nodes(function))).items():
                index.setdefault(kind, []).extend(nodes)
        else:
            index.setdefault(type(current), []).append(current)
            stack.extend(ast_children(current))  # as `ast_nodes` stacks them
    return index
