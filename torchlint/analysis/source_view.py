"""The cheap views of one file (its stdlib ast, imports, statement spans) that rules' sites
and the analyses read, each computed at most once.

Cost: each view is computed at most once per file (a parse, one walk indexing the nodes
by type); `nodes_of` is a lookup."""

from __future__ import annotations

import ast
from functools import cached_property
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from torchlint.analysis.names import ImportTable, ast_import_table
from torchlint.core.gating import RuleSites
from torchlint.core.partial_parse import statement_spans
from torchlint.core.source import split_lines
from torchlint.core.walk import ast_nodes

if TYPE_CHECKING:
    from torchlint.analysis.file_analysis import FileAnalysis


class SourceView:
    """The cheap views of a file that rules' sites may use; each is computed at most once."""

    def __init__(
        self, text: str, path: str = "<string>", tree: Optional[ast.Module] = None, parse_text: Optional[str] = None
    ) -> None:
        self.text = text
        self.path = path
        # what the parsers see: the text, or the same rows and columns with bulk data
        # blanked out (torchlint.core.parse.elide_data)
        self.parse_text = text if parse_text is None else parse_text
        self.syntax_error: Optional[SyntaxError] = None
        self._given_tree = tree  # already parsed by the caller (flake8 hands plugins its tree)
        self.rule_sites: Dict[type, RuleSites] = {}  # what each rule's sites are here

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

    def nodes_of(self, *kinds: type) -> List[ast.AST]:
        """Every node of these ast types, from one shared walk of the tree."""
        index = self._index
        if len(kinds) == 1:
            return index.get(kinds[0], [])
        return [node for kind in kinds for node in index.get(kind, [])]

    @cached_property
    def _index(self) -> Dict[type, List[ast.AST]]:
        index: Dict[type, List[ast.AST]] = {}
        if self.tree is None:
            return index
        for node in ast_nodes(self.tree):
            index.setdefault(type(node), []).append(node)
        return index
