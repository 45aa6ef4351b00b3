"""The base of the rules that judge `torch.load` calls (TL201, TL209): their sites are the
loads, and their traversal knows the function around each load, so that both can tell
whether the loaded path comes from a parameter or a value derived from one.

Cost: the sites are the loads (`ast_loads`, one pass); whether a `try` passes `weights_only`
is decided once per node for the whole traversal (nested `try`s share the memo), and each
handler's calls are collected once (a handler inside one already collected is skipped);
a function's locals that hold a path from outside: two passes over its assignments, once
per function."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set

from torchlint.analysis.call_arguments import keyword_argument
from torchlint.analysis.compat_guards import subtree_any
from torchlint.analysis.statements import parameter_names
from torchlint.analysis.torch_load import Load, ast_loads, outside_source, read_load
from torchlint.core.config import Config
from torchlint.core.lazy import cst
from torchlint.analysis.source_view import SourceView
from torchlint.rule_api.rule import Rule
from torchlint.core.walk import walk


def _passes_weights_only(node) -> bool:
    return isinstance(node, cst.Call) and keyword_argument(node, "weights_only") is not None


class TorchLoadRule(Rule):
    def __init__(self, context) -> None:
        super().__init__(context)
        self._functions: List = []  # the functions around the visited node, innermost last
        self._fallbacks: Set = set()  # calls in the handlers of a `try` that passes `weights_only`
        self._outside_locals_of: Dict = {}  # function -> its locals that hold a path from outside
        self._passes: Dict[int, bool] = {}  # id(node) -> whether its code (not nested defs) passes `weights_only`
        self._collected: Set[int] = set()  # ids of the handlers whose calls are in `_fallbacks`

    @classmethod
    def sites(cls, view: SourceView, config: Config) -> List[ast.Call]:
        return ast_loads(view)

    def read_call(self, call) -> Optional[Load]:
        """The loader call's Load, if it is a loader call that unpickles without restriction."""
        load = read_load(call, self.context.imports.qualified_name(call.func), self.context.config)
        return None if load is None or load.unrestricted is None or self.is_fallback(call) else load

    def visit_FunctionDef(self, node) -> None:
        self._functions.append(node)

    def leave_FunctionDef(self, node) -> None:
        self._functions.pop()

    def visit_Try(self, node) -> None:
        # `try: torch.load(f, weights_only=...) except TypeError: torch.load(f)` is the
        # fallback for torch < 1.13, which has no `weights_only`: not a finding
        nested = (cst.FunctionDef, cst.ClassDef, cst.Lambda)  # what `walk(..., into_functions=False)` does not enter
        passes = subtree_any(node.body, _passes_weights_only, self._passes, nested)
        if passes:
            for handler in node.handlers:
                if id(handler) in self._collected:
                    continue  # walked with a handler around it
                for inner in walk(handler, into_functions=False):
                    if isinstance(inner, cst.Call):
                        self._fallbacks.add(inner)
                    elif isinstance(inner, cst.ExceptHandler):
                        self._collected.add(id(inner))

    def is_fallback(self, call) -> bool:
        return call in self._fallbacks

    def load_source(self, call) -> Optional[str]:
        """Where the loaded path or URL comes from, if from outside the code; None otherwise."""
        if not call.args or call.args[0].keyword is not None or call.args[0].star:
            return None
        function = self._functions[-1] if self._functions else None
        parameters: Set[str] = set()
        outside_locals: Set[str] = set()
        if function is not None:
            parameters = set(parameter_names(function)) - {"self", "cls"}
            outside_locals = self._outside_locals(function, parameters)
        return outside_source(call.args[0].value, function, parameters, outside_locals)

    def _outside_locals(self, function, parameters: Set[str]) -> Set[str]:
        found = self._outside_locals_of.get(function)
        if found is None:
            found = set()
            assigns = [
                node for node in walk(function.body, into_functions=False)
                if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)
            ]
            for _ in range(2):  # `p = args.ckpt; path = os.path.join(root, p)`
                for node in assigns:
                    if outside_source(node.value, function, parameters, found):
                        found.add(node.targets[0].target.value)
            self._outside_locals_of[function] = found
        return found
