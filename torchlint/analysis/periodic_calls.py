"""Tests that hold now and then, and the calls of a definition made only under one.

A test holds now and then when it reads an interval (`step % 100 == 0`), picks the first steps
(`batch_idx == 0`, `global_step < 10`) or names a logging or plotting switch (`self.log_images`,
`self.should_log()`); one that holds on most steps (`step % n != 0`, `not self.debug`) fails now and
then. `periodic_name`, `STEP_COUNTERS` and the rules that combine the kinds of a test's parts
(`negated`, `conjunction`, ...) are shared by `torchlint.analysis.every_step.in_periodic_branch`, which
reads tests on LibCST, and `ast_test_kind`, on the stdlib ast.

`periodic_call_ids` gives the calls of a definition made only in the body of such an `if` (or in the
`else:` of a test that holds on most steps: `if not self.debug:`), unless that block trains (gradient
accumulation's `if (i + 1) % k == 0: optimizer.step()` is the training step itself): a training loop or
step function that calls a function only there does not run it on every step
(`torchlint.analysis.loop_graph.LoopGraph`, `torchlint.analysis.hot_paths.Reach`).

Cost: `ast_test_kind` is O(the test). `periodic_call_ids` walks the definition's statements (not
their expressions) to the periodic blocks, then each outermost such block once; a training call marks
the periodic blocks around it, a climb stopping at one already marked: O(the definition).
"""

from __future__ import annotations

import ast
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

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
# what a test's truth says of a step (`ast_test_kind`): nothing, that it comes now and then, or on most steps
NO_KIND, RARE, MOSTLY = 0, 1, 2
# nn.Module's own flag: true on every training step, no setting (`if not self.training:` is evaluation)
PER_STEP_FLAGS = frozenset({"training"})
# the phases a test compares a string to (`if mode == "train":`, `if phase != "val":`)
TRAINING_PHASES = frozenset({"train", "training", "fit"})
EVALUATION_PHASES = frozenset(
    {"val", "valid", "validation", "eval", "evaluation", "evaluate", "test", "testing", "predict", "prediction",
     "inference"}
)


def periodic_name(name: str) -> bool:
    """Whether the last name of a name or attribute in a test is a periodic switch or interval
    (`log_images`, `plot_every`, `should_log`)."""
    words = set(name.lower().split("_"))
    return bool(words & PERIODIC_WORDS) or {"should", "log"} <= words


# How a test's kind follows from the kinds of its parts, for both readers of tests.


def negated(kind: int) -> int:
    """`not x`: rare where x holds on most steps (`not step % n`), on most steps where x is a switch."""
    return MOSTLY if kind == RARE else RARE if kind == MOSTLY else NO_KIND


def conjunction(kinds: Sequence[int]) -> int:
    if RARE in kinds:
        return RARE
    return MOSTLY if all(kind == MOSTLY for kind in kinds) else NO_KIND


def disjunction(kinds: Sequence[int]) -> int:
    return MOSTLY if MOSTLY in kinds else RARE if RARE in kinds else NO_KIND


def comparison(kinds: Sequence[int], not_equal: bool, first_steps: bool) -> int:
    """A comparison of operands of these `kinds`: `step % n == 0` and a first-steps test (`batch_idx < 10`)
    are rare, `step % n != 0` holds on most steps (`not_equal`: every operator is `!=`)."""
    if not first_steps and all(kind == NO_KIND for kind in kinds):
        return NO_KIND
    return MOSTLY if not_equal else RARE


def compound(kinds: Sequence[int]) -> int:
    """Any other expression (a call, arithmetic, a subscript) is rare where a part of it is periodic
    (`self.should_log()`, `(step % n) * k`)."""
    return RARE if any(kind != NO_KIND for kind in kinds) else NO_KIND


def phase_evaluation_side(phase: str, equal: bool) -> Optional[bool]:
    """For a test comparing a value to the string `phase` (`equal`: with `==`, else `!=`): True where its body
    is the evaluation side (`mode == "val"`, `mode != "train"`), False where its `else:` is (`mode == "train"`),
    None where `phase` names no phase."""
    phase = phase.lower()
    if phase in TRAINING_PHASES:
        return not equal
    return equal if phase in EVALUATION_PHASES else None


def ast_evaluation_side(test: ast.expr) -> Optional[bool]:
    """True where the body of an `if` on `test` runs only in evaluation (`if not self.training:`, `if mode ==
    "val":`), False where its `else:` does (`if model.training:`, `if mode == "train":`), else None."""
    negated_test = type(test) is ast.UnaryOp and type(test.op) is ast.Not
    flag = test.operand if negated_test else test
    if type(flag) is ast.Attribute and flag.attr in PER_STEP_FLAGS:
        return negated_test
    if type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) in (ast.Eq, ast.NotEq):
        for operand in (test.left, test.comparators[0]):
            if type(operand) is ast.Constant and isinstance(operand.value, str):
                return phase_evaluation_side(operand.value, type(test.ops[0]) is ast.Eq)
    return None


def fold_test(
    test, parts_of: Callable[[Any], Sequence], own_kind: Callable[[Any, Sequence, Dict[int, int]], int]
) -> int:
    """The kind of `test`, each node answered once, after its parts: `parts_of(node)` gives a node's parts (none
    for a leaf), `own_kind(node, parts, kinds)` its kind from theirs (`kinds`, by id). The walk both readers
    share (`ast_test_kind`, `every_step._test_kind`). Cost: O(the test), without recursion."""
    kinds: Dict[int, int] = {}
    stack: List[Tuple[Any, Optional[Sequence]]] = [(test, None)]  # (node, its parts once they are pushed)
    while stack:
        node, parts = stack.pop()
        if parts is None:
            parts = parts_of(node)
            if parts:
                stack.append((node, parts))
                stack.extend((part, None) for part in parts)
                continue
        kinds[id(node)] = own_kind(node, parts, kinds)
    return kinds[id(test)]


def ast_test_kind(test: ast.expr, unit_divisors: FrozenSet[str] = frozenset()) -> int:
    """Whether a test holds now and then (`RARE`: it reads an interval, a first-steps counter or a switch),
    on most steps (`MOSTLY`: `step % n != 0`, `not self.debug`), or says nothing of the step; a modulo by one
    of `unit_divisors` (parameters that default to 1) holds on every step. An attribute is read by its last
    name alone. Cost: O(the test) (`fold_test`)."""

    def own_kind(node: ast.AST, parts: Sequence[ast.AST], kinds: Dict[int, int]) -> int:
        kind = type(node)
        if kind is ast.Name or kind is ast.Attribute:
            return RARE if periodic_name(_last_name(node)) else NO_KIND
        if kind is ast.UnaryOp:
            operand = kinds[id(node.operand)]
            return negated(operand) if type(node.op) is ast.Not else operand
        if kind is ast.BinOp and type(node.op) is ast.Mod and not (
            type(node.right) is ast.Name and node.right.id in unit_divisors
        ):
            return MOSTLY
        if kind is ast.BoolOp:
            values = [kinds[id(value)] for value in node.values]
            return conjunction(values) if type(node.op) is ast.And else disjunction(values)
        if kind is ast.Compare:
            operands = (node.left, *node.comparators)
            first_steps = any(type(op) in _FIRST_STEPS for op in node.ops) and any(
                _last_name(operand) in STEP_COUNTERS for operand in operands
            )
            not_equal = all(type(op) is ast.NotEq for op in node.ops)
            return comparison([kinds[id(operand)] for operand in operands], not_equal, first_steps)
        return compound([kinds.get(id(part), NO_KIND) for part in parts])

    return fold_test(test, _ast_parts, own_kind)


def _ast_parts(node: ast.AST) -> Sequence[ast.AST]:
    """A node's parts for `fold_test`: none for a name or an attribute, read by their last name."""
    return () if type(node) is ast.Name or type(node) is ast.Attribute else ast_children(node)


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
    not entered) that run only in a block taken now and then (`periodic_blocks`) where no training
    call (`trains`) is made."""
    innermost: Dict[int, int] = {}  # call id -> the id of the innermost periodic block around it
    training: Set[int] = set()  # the periodic blocks that train
    pending = list(reversed(body))
    while pending:
        statement = pending.pop()
        if type(statement) in _SCOPES:
            continue
        if type(statement) is ast.If:
            periodic = {id(block) for block in periodic_blocks(statement, unit_divisors)}
            for block in (statement.body, statement.orelse):
                if id(block) in periodic:
                    _walk_block(block, innermost, training, trains, unit_divisors)
                else:
                    pending.extend(reversed(block))
            continue
        pending.extend(inner for block in reversed(blocks(statement)) for inner in reversed(block))
    return frozenset(call for call, block in innermost.items() if block not in training)


def periodic_blocks(branch: ast.If, unit_divisors: FrozenSet[str] = frozenset()) -> List[List[ast.stmt]]:
    """The blocks of an `if` taken now and then: its body under a periodic test, its `else:` under a test
    that holds on most steps (`if not self.debug:`, `if step % n != 0:`), and its evaluation side
    (`ast_evaluation_side`), which training never takes."""
    evaluation = ast_evaluation_side(branch.test)
    if evaluation is not None:
        return [branch.body] if evaluation else [branch.orelse]
    kind = ast_test_kind(branch.test, unit_divisors)
    if kind == RARE:
        return [branch.body]
    return [branch.orelse] if branch.orelse and kind == MOSTLY else []


def _walk_block(
    block: List[ast.stmt], innermost: Dict[int, int], training: Set[int], trains: Callable[[ast.Call], bool],
    unit_divisors: FrozenSet[str],
) -> None:
    """Record the calls of a periodic block (and of the periodic blocks nested in it) with their
    innermost periodic block, and mark the ones that train."""
    # each node with the ids of the periodic blocks around it, innermost last
    stack: List[Tuple[ast.AST, Tuple[int, ...]]] = [(node, (id(block),)) for node in reversed(block)]
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
        if kind is ast.If:
            periodic = {id(block) for block in periodic_blocks(node, unit_divisors)}
            for inner_block in (node.orelse, node.body):
                inside = (*around, id(inner_block)) if id(inner_block) in periodic else around
                stack.extend((inner, inside) for inner in reversed(inner_block))
            stack.append((node.test, around))
            continue
        stack.extend((child, around) for child in reversed(ast_children(node)))
