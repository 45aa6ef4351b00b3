"""The calls that report what they are given, on the stdlib ast: a logging call or `print` by name
(`value_uses.sink_function` / `sink_method`), and the file's own routines that do nothing else with
their arguments (trankit's `self._printlog(message)`, whose body is `if printout: print(message)` and
`self.logger.info(message)`).

A routine reports only when its body (statement by statement, into `if` blocks) holds docstrings,
`pass`, expression statements that call a reporting call, and `if` tests that call nothing; it returns
nothing and binds nothing. A name that the file defines more than once (two classes' `_log`) reports
only if every definition does.

Cost: one pass over the file's function definitions, each body's statements read once.
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Iterable

from torchlint.core.walk import ast_nodes
from torchlint.rules.training.host_sync_in_hot_path.value_uses import reports_named


def reporting_routines(definitions: Iterable[ast.AST]) -> FrozenSet[str]:
    """The names, among the file's function and method `definitions`, of those that only report what
    they are given."""
    verdicts: Dict[str, bool] = {}
    for definition in definitions:
        verdicts[definition.name] = verdicts.get(definition.name, True) and _only_reports(definition.body)
    return frozenset(name for name, reports in verdicts.items() if reports)


def reports(call: ast.Call, routines: FrozenSet[str] = frozenset()) -> bool:
    """`value_uses.reports_named` of a stdlib-ast call."""
    func = call.func
    if isinstance(func, ast.Name):
        return reports_named(func.id, None, None, routines)
    if not isinstance(func, ast.Attribute):
        return False
    held = func.value
    receiver = held.id if isinstance(held, ast.Name) else held.attr if isinstance(held, ast.Attribute) else None
    return reports_named(None, func.attr, receiver, routines)


def _only_reports(body) -> bool:
    for statement in body:
        if isinstance(statement, ast.Pass):
            continue
        if isinstance(statement, ast.Expr):
            value = statement.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                continue  # a docstring
            if isinstance(value, ast.Call) and reports(value):
                continue
            return False
        if isinstance(statement, ast.If) and not any(isinstance(node, ast.Call) for node in ast_nodes(statement.test)):
            if _only_reports(statement.body) and _only_reports(statement.orelse):
                continue
        return False
    return True
