"""Tests that hold now and then, and the calls of a definition made only under one.

A test holds now and then when it reads an interval (`step % 100 == 0`), picks the first steps
(`batch_idx == 0`, `global_step < 10`) or names a logging or plotting switch (`self.log_images`,
`self.should_log()`): `periodic_name` and `STEP_COUNTERS` are the vocabulary that
`torchlint.analysis.every_step.in_periodic_branch` reads on LibCST and `ast_periodic_test` on the
stdlib ast.

`periodic_call_ids` gives the calls of a definition made only in the body of such an `if`, unless that
body trains (gradient accumulation's `if (i + 1) % k == 0: optimizer.step()` is the training step
itself): a training loop or step function that calls a function only there does not run it on every
step (`torchlint.analysis.loop_graph.LoopGraph`, `torchlint.analysis.hot_paths.Reach`).

Cost: `ast_periodic_test` is O(the test). `periodic_call_ids` walks the definition's statements (not
their expressions) to the periodic `if`s, then each outermost such body once; a training call marks
the periodic `if`s around it, a climb stopping at one already marked: O(the definition).
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, FrozenSet, List, Sequence, Set, Tuple

from torchlint.core.walk import ast_children, blocks

# words of a condition that runs its block now and then, not on every step: logging
# or plotting switches, intervals (`if self.log_images:`, `if step % self.plot_every == 0:`)
PERIODIC_WORDS = frozenset(
    {
        "plot", "plots", "image", "images", "visualize", "visualise", "visualization", "vis", "every",
        "interval", "freq", "frequency", "debug", "verbose", "tensorboard", "tb", "wandb", "figure", "figures",
    }
)
# counters compared to pick the first steps (`batch_idx == 0`, `step < 10`)
STEP_COUNTERS = frozenset({"batch_idx", "batch_nb", "batch_num", "global_step", "step", "iteration"})
_FIRST_STEPS = (ast.Eq, ast.Lt, ast.LtE)
_SCOPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda})


def periodic_name(name: str) -> bool:
    """Whether the last name of a name or attribute in a test is a periodic switch or interval
    (`log_images`, `plot_every`, `should_log`)."""
    words = set(name.lower().split("_"))
    return bool(words & PERIODIC_WORDS) or {"should", "log"} <= words


def ast_periodic_test(test: ast.expr, unit_divisors: FrozenSet[str] = frozenset()) -> bool:
    """Whether a test holds now and then; a modulo by one of `unit_divisors` (parameters that
    default to 1) holds on every step. An attribute is read by its last name alone."""
    stack: List[ast.AST] = [test]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.BinOp and type(node.op) is ast.Mod:
            if not (type(node.right) is ast.Name and node.right.id in unit_divisors):
                return True
        elif kind is ast.Compare and any(type(op) in _FIRST_STEPS for op in node.ops):
            operands = (node.left, *node.comparators)
            if any(_last_name(operand) in STEP_COUNTERS for operand in operands):
                return True
        elif kind is ast.Name or kind is ast.Attribute:
            if periodic_name(_last_name(node)):
                return True
            if kind is ast.Attribute:
                continue
        stack.extend(ast_children(node))
    return False


def _last_name(node: ast.AST) -> str:
    if type(node) is ast.Name:
        return node.id
    return node.attr if type(node) is ast.Attribute else ""


def ast_defaulting_to_one(function: ast.AST) -> FrozenSet[str]:
    """The parameters of a def whose default is the integer 1 (`log=1`); none for a module."""
    arguments = getattr(function, "args", None)
    if arguments is None:
        return frozenset()
    positional = [*arguments.posonlyargs, *arguments.args]
    pairs = list(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
    pairs += [(argument, default) for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults) if default]
    return frozenset(
        argument.arg for argument, default in pairs
        if type(default) is ast.Constant and default.value == 1 and type(default.value) is int
    )


def periodic_call_ids(
    body: Sequence[ast.stmt], trains: Callable[[ast.Call], bool], unit_divisors: FrozenSet[str] = frozenset()
) -> FrozenSet[int]:
    """The ids of the calls in `body` (a def's or a module's statements; nested definitions are
    not entered) that run only in the body of a periodic `if` (`ast_periodic_test`) whose body
    makes no training call (`trains`)."""
    innermost: Dict[int, int] = {}  # call id -> the id of the innermost periodic `if` around it
    training: Set[int] = set()  # the periodic `if`s whose body trains
    pending = list(reversed(body))
    while pending:
        statement = pending.pop()
        if type(statement) in _SCOPES:
            continue
        if type(statement) is ast.If and ast_periodic_test(statement.test, unit_divisors):
            _walk_branch(statement, innermost, training, trains, unit_divisors)
            pending.extend(reversed(statement.orelse))
            continue
        pending.extend(inner for block in reversed(blocks(statement)) for inner in reversed(block))
    return frozenset(call for call, branch in innermost.items() if branch not in training)


def _walk_branch(
    branch: ast.If, innermost: Dict[int, int], training: Set[int], trains: Callable[[ast.Call], bool],
    unit_divisors: FrozenSet[str],
) -> None:
    """Record the calls of a periodic `if`'s body (and of the periodic `if`s nested in it) with their
    innermost periodic `if`, and mark the ones whose body trains."""
    stack: List[Tuple[ast.AST, Tuple[int, ...]]] = [(node, (id(branch),)) for node in reversed(branch.body)]
    # the periodic `if`s around each one, innermost last
    while stack:
        node, around = stack.pop()
        kind = type(node)
        if kind in _SCOPES:
            continue
        if kind is ast.Call:
            innermost[id(node)] = around[-1]
            if trains(node):
                for marked in reversed(around):
                    if marked in training:
                        break  # the ones around it were marked with it
                    training.add(marked)
        if kind is ast.If and ast_periodic_test(node.test, unit_divisors):
            inside = (*around, id(node))
            stack.extend((inner, around) for inner in reversed(node.orelse))
            stack.extend((inner, inside) for inner in reversed(node.body))
            stack.append((node.test, around))
            continue
        stack.extend((child, around) for child in reversed(ast_children(node)))

