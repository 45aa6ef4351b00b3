"""`CompatGuarded`: the part of a rule that knows, during its traversal, whether the node
it visits is code a compatibility guard picks for some releases of a library
(`torchlint.analysis.compat_guards`); such code is the author's choice, not a finding.

Cost: each guard's test once; whether a `try` reaches the library and what a guard `if`
binds are decided once per node for the whole traversal (memos shared by nested guards),
so a file costs O(its nodes) however deep its guards nest."""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Set, Tuple

from torchlint.analysis.compat_guards import compat_test, fallback_handlers, overridden_defaults, probe_try
from torchlint.core.walk import walk


class CompatGuarded:
    """Mixed into a rule before `Rule`: each guard's test is read once, when the traversal
    enters it, and `guarded(node)` answers for the node being visited. A rule names the
    `guard_libraries` whose releases it tells apart and the `guard_probes`, the attributes
    a `hasattr` test may ask of them."""

    guard_libraries: Tuple[str, ...] = ("torch",)
    guard_probes: FrozenSet[str] = frozenset()

    def __init__(self, context) -> None:
        super().__init__(context)
        self._entered: List[bool] = []  # for each `if`, conditional expression, `try` and handler entered: a guard?
        self._depth = 0  # how many of them are guards
        self._guard_tests: Dict[int, bool] = {}  # id(if) -> whether its test is a compatibility test
        self._fallbacks: Set[int] = set()  # ids of the handlers that are a guard's fallback
        self._overridden: Set[int] = set()  # ids of the nodes of defaults a guard overrides
        self._reach_memo: Dict[int, bool] = {}  # id(node) -> whether its code reaches a guarded library
        self._bound_memo: Dict[int, FrozenSet[str]] = {}  # id(node) -> the names assigned under it

    def guarded(self, node) -> bool:
        return self._depth > 0 or id(node) in self._overridden

    def _is_guard(self, node) -> bool:
        found = self._guard_tests.get(id(node))
        if found is None:
            found = self._guard_tests[id(node)] = compat_test(
                node.test, self.context.imports, self.guard_libraries, self.guard_probes
            )
        return found

    def _enter(self, guard: bool) -> None:
        self._entered.append(guard)
        self._depth += guard

    def _leave(self, node) -> None:
        self._depth -= self._entered.pop()

    def visit_If(self, node) -> None:
        self._enter(self._is_guard(node))

    def visit_IfExp(self, node) -> None:
        self._enter(self._is_guard(node))

    def visit_Try(self, node) -> None:
        imports, libraries = self.context.imports, self.guard_libraries
        memo = self._reach_memo
        self._fallbacks.update(id(handler) for handler in fallback_handlers(node, imports, libraries, memo))
        self._enter(probe_try(node, imports, libraries, memo))

    def visit_ExceptHandler(self, node) -> None:
        self._enter(id(node) in self._fallbacks)

    leave_If = leave_IfExp = leave_Try = leave_ExceptHandler = _leave

    def visit_Module(self, node) -> None:
        self._note_overridden(node.body)

    def visit_IndentedBlock(self, node) -> None:
        self._note_overridden(node.body)

    def _note_overridden(self, statements) -> None:
        for value in overridden_defaults(statements, self._is_guard, self._bound_memo):
            self._overridden.update(id(held) for held in walk(value))
