"""Which parts of a hot path run on every step.

A hot path runs once per step, but not every block in it does. Error paths run only
when something went wrong. Some blocks run only now and then: under an interval or a
first-steps test (`if step % 100 == 0:`, `if batch_idx == 0:`), under a logging or
plotting switch (`if self.log_images:`), under a setting of the object
(`if self.collect_stats:`), once (lazy initialisation: `if self._iter == -1:
self._iter = ...`), or only when the step produced something (`if evicted is not
None:`). The rules that report per-step work (TL003, TL005) skip such blocks unless
asked (`check-error-paths`, `check-periodic-branches`).

Cost: `in_error_path` and `in_periodic_branch` climb from a node to its function and keep
the answer of every node passed in the method's `StepScope`, so a method's climbs cost
O(its nodes) in all, plus per `if` met O(its test) (`_periodic`, `_conjuncts`) and, for a
run-once test (`if x is None: x = ...`), O(its body) (`_assigned_in`); `class_settings`
is one pass over the statements of a class's methods, `step_scope` one over a method.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple, Union

from torchlint.analysis.definition_memo import NO_MEMO, DefinitionMemo, NoMemo
from torchlint.core.lazy import cst
from torchlint.analysis.statements import assigned_names, parameter_names
from torchlint.analysis.classes import ast_class_methods, ast_self_attribute, ast_self_name, self_name
from torchlint.analysis.names import cst_dotted_name, cst_last_name
from torchlint.analysis.periodic_calls import (
    MOSTLY, NO_KIND, PER_STEP_FLAGS, RARE, STEP_COUNTERS, comparison, compound, conjunction, disjunction, negated,
    fold_test, periodic_name, phase_evaluation_side,
)
from torchlint.analysis.scopes import own_nodes
from torchlint.analysis.training_loops import cst_optimizer_step
from torchlint.core.walk import ast_statements, children, pruned_walk


# ---- error paths ---------------------------------------------------------------------


def _ends_in_raise(block) -> bool:
    body = getattr(block, "body", ())
    if not body:
        return False
    last = body[-1]
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1] if last.body else None
    return isinstance(last, cst.Raise)


# blocks that run only if something holds (a function's or a loop's body ending in
# `raise` is no error path: its other statements run every time)
_BRANCHES = frozenset({"If", "Else", "ExceptHandler", "ExceptStarHandler"})


def in_error_path(node, parents: Mapping, check_conditions: bool = False, scope: Optional[StepScope] = None) -> bool:
    """Whether `node` runs only when something has gone wrong: in a `raise`, an
    `assert`'s message, or a block that ends in `raise` (`if bad: log(x.item()); raise`).
    The condition of such an `if`, and an `assert`'s test, do run on every step but are
    deliberate checks: they count as error paths unless `check_conditions`. With the
    method's `scope`, answers are kept there (see `StepScope.answered`)."""
    answered = scope.errors_answered if scope is not None else {}
    passed = []
    answer = False
    child, parent = node, parents.get(node)
    while parent is not None:
        if (id(child), check_conditions) in answered:
            answer = answered[id(child), check_conditions]
            break
        passed.append(child)
        decided = _error_level(child, parent, parents, check_conditions)
        if decided is not None:
            answer = decided
            break
        child, parent = parent, parents.get(parent)
    answered.update(((id(passed_node), check_conditions), answer) for passed_node in passed)
    return answer


def _error_level(child, parent, parents: Mapping, check_conditions: bool) -> Optional[bool]:
    """What `parent` says of the code in its part `child`: an error path (True), not one
    and no block above can change that (False), or nothing yet (None)."""
    if isinstance(parent, cst.Raise):
        return True
    if isinstance(parent, cst.Assert):
        return child is parent.msg or not check_conditions
    if (
        isinstance(parent, (cst.IndentedBlock, cst.SimpleStatementSuite))
        and type(parents.get(parent)).__name__ in _BRANCHES
        and _ends_in_raise(parent)
    ):
        return True
    if isinstance(parent, cst.If) and child is parent.test and _ends_in_raise(parent.body):
        return not check_conditions
    if isinstance(parent, (cst.FunctionDef, cst.Lambda)):
        return False
    return None


# ---- blocks that run now and then ----------------------------------------------------

# node types a setting's value is built from (`flag`, `cfg.flag`, `True`, `a if b is None
# else b`, `kwargs.get("flag", False)`): never a layer or a tensor
_SETTING_NODES = (ast.Name, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.IfExp)
_SETTING_CALLS = frozenset({"getattr", "bool", "get"})


@dataclass(frozen=True)
class ClassSettings:
    """The attributes of `self` a class changes (assigned outside `__init__`, or in
    `__init__` to anything but a setting: an argument, a config value, a literal), and
    the settings it plainly turns on by default (`self.x = True`, or an `__init__`
    argument whose default is `True`)."""

    changed: FrozenSet[str]
    on_by_default: FrozenSet[str]


@dataclass(frozen=True)
class StepScope:
    """What a method's blocks are tested against: the name of its instance (`self`),
    the names it binds itself (not its parameters), and its class's settings."""

    instance: Optional[str]
    step_locals: FrozenSet[str]
    settings: ClassSettings
    # its parameters: fresh on every call, so `if eps == -1: eps = ...` on one is no run-once test
    parameters: FrozenSet[str] = frozenset()
    # names it binds once to a periodic test (`apply_penalty = self.steps % 4 == 0`, then `if apply_penalty:`)
    periodic_names: FrozenSet[str] = frozenset()
    # its parameters that default to 1: `step % log == 0` holds on every step unless the caller says otherwise
    unit_divisors: FrozenSet[str] = frozenset()
    # `in_periodic_branch`'s answers for the method's nodes, by id: each climb answers
    # every node it passes, so an elif chain of n branches costs n tests, not n²/2
    answered: Dict[int, bool] = field(default_factory=dict, compare=False, repr=False)
    # the same for `in_error_path`, by (id, check_conditions)
    errors_answered: Dict[Tuple[int, bool], bool] = field(default_factory=dict, compare=False, repr=False)
    # per block, by id: the ids of its statements after a periodic early exit (see `_after_exit`)
    exits: Dict[int, FrozenSet[int]] = field(default_factory=dict, compare=False, repr=False)
    # the method's optimizer steps (`opt.step()`), and the ids of the nodes from each up to the method
    # (`_step_holders`, built when a periodic test first asks)
    steps: Tuple = field(default=(), compare=False, repr=False)
    step_holders: Set[int] = field(default_factory=set, compare=False, repr=False)


def class_settings(
    class_node: Optional[ast.ClassDef], memo: Union[DefinitionMemo, NoMemo] = NO_MEMO
) -> ClassSettings:
    """What a class does with the attributes of `self` (see `ClassSettings`), from its
    stdlib ast, so that every method counts whether or not LibCST parsed it; none without a
    class (`class_node` None: a function's or a module's code). Cost: a walk of each method's
    statements, but of those `memo` holds from the text's previous version."""
    changed: Set[str] = set()
    on: Set[str] = set()
    if class_node is None:
        return ClassSettings(frozenset(), frozenset())
    for function in ast_class_methods(class_node):
        method_changed, method_on = memo.result(
            function, "class_settings", None, lambda: _method_settings(function)
        )
        changed.update(method_changed)
        on.update(method_on)
    return ClassSettings(frozenset(changed), frozenset(on))


def _method_settings(function) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """The attributes of `self` one method changes, and those it sets on (`ClassSettings`)."""
    changed: Set[str] = set()
    on: Set[str] = set()
    instance = ast_self_name(function)
    if instance is None:
        return frozenset(), frozenset()
    in_init = function.name == "__init__"
    true_by_default = _true_by_default(function) if in_init else frozenset()
    for node in ast_statements(function.body):  # assignments are statements: no expression is walked
        kind = type(node)
        if kind is ast.Assign:
            targets = node.targets
        elif kind is ast.AugAssign or (kind is ast.AnnAssign and node.value is not None):
            targets = [node.target]
        else:
            continue
        for target in targets:
            for element, value in _paired(target, node.value):
                name = ast_self_attribute(element, instance)
                if name is None:
                    continue
                setting = in_init and kind is not ast.AugAssign and _is_setting_value(value)
                if not setting:
                    changed.add(name)
                elif _names_any(value, true_by_default | {"True"}):
                    on.add(name)
    return frozenset(changed), frozenset(on)


def _paired(target: ast.AST, value: ast.AST) -> List[Tuple[ast.AST, ast.AST]]:
    """Each single target of an assignment with the value it receives: element by element
    where a tuple target meets a tuple of as many plain values (`self.a, self.b = a, 1.0`),
    else the whole value."""
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
        if len(target.elts) == len(value.elts) and not any(
            isinstance(e, ast.Starred) for e in (*target.elts, *value.elts)
        ):
            return [pair for t, v in zip(target.elts, value.elts) for pair in _paired(t, v)]
    return [(part, value) for part in _ast_target_parts(target)]


def _ast_target_parts(target: ast.AST) -> List[ast.AST]:
    """`target_parts` of a stdlib ast target."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return [part for element in target.elts for part in _ast_target_parts(element)]
    if isinstance(target, ast.Starred):
        return _ast_target_parts(target.value)
    return [target]


def _true_by_default(function: ast.AST) -> FrozenSet[str]:
    arguments = function.args
    positional = (*arguments.posonlyargs, *arguments.args)
    defaults = [*([None] * (len(positional) - len(arguments.defaults))), *arguments.defaults]
    pairs = [*zip(positional, defaults), *zip(arguments.kwonlyargs, arguments.kw_defaults)]
    return frozenset(argument.arg for argument, default in pairs if _is_true(default))


def _is_true(node: Optional[ast.AST]) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _names_any(value: ast.AST, names: FrozenSet[str]) -> bool:
    """Whether the value names one of `names` (`True` is a name here, as LibCST spells it)."""
    return any(
        (isinstance(node, ast.Name) and node.id in names) or ("True" in names and _is_true(node))
        for node in ast.walk(value)
    )


def step_scope(function, settings: ClassSettings) -> StepScope:
    """The `StepScope` of one method, given its class's settings (or of a function, or
    of a module's own code: `function` a `cst.Module`)."""
    bound: Set[str] = set()
    if isinstance(function, cst.Module):
        body, instance, params = function, None, ()
    else:
        body, instance, params = function.body, self_name(function), parameter_names(function)
    # values of the data (`labels = batch["labels"]`, `for x, labels in loader`): a
    # None-check of one holds on every step or on none, so it marks no rare block
    data: Set[str] = set(params)
    made: Set[str] = set()  # bound at least once to something else
    loops, others = (cst.For, cst.CompFor), (cst.AnnAssign, cst.AugAssign, cst.NamedExpr)
    steps = []
    bindings: Dict[str, int] = {}  # how often each name is bound
    periodic: Set[str] = set()  # names bound (at least once) to a periodic test
    for node in own_nodes(body):
        kind = type(node)  # exact types, as in `class_settings`
        if kind is cst.Call:
            if cst_optimizer_step(node):
                steps.append(node)
        elif kind is cst.Assign:
            names = [name for target in node.targets for name in assigned_names(target.target)]
            (data if _read_from(node.value, data) else made).update(names)
            if len(names) == 1 and _is_test(node.value) and _periodic(node.value):
                periodic.update(names)
        elif kind is cst.AssignTarget:
            names = assigned_names(node.target)
            bound.update(names)
            for name in names:
                bindings[name] = bindings.get(name, 0) + 1
        elif kind in loops:
            names = assigned_names(node.target)
            bound.update(names)
            (data if _read_from(node.iter, data) else made).update(names)
        elif kind in others:
            bound.update(assigned_names(node.target))
            made.update(assigned_names(node.target))
        elif kind is cst.AsName:
            bound.update(assigned_names(node.name))
            made.update(assigned_names(node.name))
    periodic_names = frozenset(name for name in periodic if bindings.get(name) == 1 and name not in params)
    unit_divisors = frozenset() if isinstance(function, cst.Module) else _defaulting_to_one(function)
    return StepScope(
        instance, frozenset(bound - (data - made)), settings, frozenset(params), periodic_names,
        unit_divisors - bound, steps=tuple(steps),
    )


def _defaulting_to_one(function) -> FrozenSet[str]:
    """The parameters of `function` whose default is the integer 1 (`log=1`)."""
    params = function.params
    return frozenset(
        param.name.value
        for param in (*params.posonly_params, *params.params, *params.kwonly_params)
        if isinstance(param.default, cst.Integer) and param.default.evaluated_value == 1
    )


# what walks data as it is (`for i, batch in enumerate(batches)`, `zip(xs, ys)`, `tqdm(loader)`)
_DATA_WRAPPERS = frozenset({"enumerate", "zip", "iter", "reversed", "tqdm"})


def _read_from(value, roots: Set[str]) -> bool:
    """Whether `value` is read out of one of `roots` (`batch`, `batch["labels"]`,
    `batch.labels`, `batch.get("labels")`, `enumerate(batches)`). Cost: O(the expression)."""
    while True:
        if isinstance(value, cst.Name):
            return value.value in roots
        if isinstance(value, (cst.Subscript, cst.Attribute)):
            value = value.value
        elif (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
              and value.func.attr.value in ("get", "pop")):
            value = value.func.value
        elif isinstance(value, cst.Call) and cst_last_name(value.func) in _DATA_WRAPPERS:
            return any(_read_from(argument.value, roots) for argument in value.args)
        else:
            return False


def in_periodic_branch(node, parents: Mapping, scope: Optional[StepScope] = None) -> bool:
    """Whether `node` runs only under a condition that holds now and then: one with a
    modulo (`step % n == 0`), a step counter compared to pick the first steps
    (`batch_idx == 0`, `batch_idx < 10`), or a logging/plotting switch (`if
    self.log_images:`, `if self.debug:`), or in the `else:` of a test that holds on most steps
    (`if not self.debug:`, `if step % n != 0:`; the `else:` of the others is the usual path); with a
    `scope`, also under a name the method binds once to such a test (`apply_penalty = self.steps % 4 == 0`,
    then `if apply_penalty:`), in the block of a setting (`if self.collect_stats:`), of a run-once test
    (`if self._iter == -1: self._iter = ...`) or of a None-check of a value the step made (`if evicted is
    not None:`; not of a parameter), and not in a modulo branch that steps the optimizer (gradient
    accumulation's), nor after an early exit on one that skips to the step."""
    answered = scope.answered if scope is not None else {}
    passed = []
    answer = False
    child, parent = node, parents.get(node)
    while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Lambda)):
        if id(child) in answered:
            answer = answered[id(child)]
            break
        passed.append(child)
        if isinstance(parent, cst.If) and child is not parent.test:
            if _evaluation_side(parent.test, child is parent.body):
                answer = True  # `if not self.training:` (or `model.training`'s `else:`) never runs in training
                break
            in_body = child is parent.body
            stepping = in_body and _steps_optimizer(parent, parents, scope)
            unit = scope.unit_divisors if scope is not None else frozenset()
            if in_body:
                periodic = (_periodic(parent.test, unit) or _names_periodic(parent.test, scope)) and not stepping
            else:  # the `else:` of a periodic test is the usual path, that of `if not self.debug:` is not
                periodic = _periodic_exit_test(parent.test)
            if periodic or (scope is not None and _rare(parent, child is parent.body, scope)):
                answer = True
                break
        if isinstance(parent, (cst.IndentedBlock, cst.Module)) and _after_periodic_exit(parent, child, parents, scope):
            answer = True
            break
        child, parent = parent, parents.get(parent)
    # every node passed climbs through the same blocks to the same answer
    answered.update((id(passed_node), answer) for passed_node in passed)
    return answer


def _evaluation_side(test, in_body: bool) -> bool:
    """Whether the body (`in_body`) or the `else:` of an `if` on this test runs only in evaluation: a module's
    evaluation mode (`not self.training`, the `else:` of `model.training`) or a phase other than training
    (`mode == "val"`, the `else:` of `mode == "train"`; `periodic_calls.ast_evaluation_side` on LibCST)."""
    negated_test = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    flag = test.expression if negated_test else test
    if isinstance(flag, cst.Attribute) and flag.attr.value in PER_STEP_FLAGS:
        return negated_test == in_body
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        operator = test.comparisons[0].operator
        for operand in (test.left, test.comparisons[0].comparator):
            if isinstance(operator, (cst.Equal, cst.NotEqual)) and isinstance(operand, cst.SimpleString):
                phase = operand.evaluated_value
                side = phase_evaluation_side(phase, isinstance(operator, cst.Equal)) if isinstance(phase, str) else None
                return side is not None and side == in_body
    return False


def _after_periodic_exit(block, statement, parents: Mapping, scope: Optional[StepScope]) -> bool:
    """Whether `statement` comes after an early exit of its block taken on most steps, `if step % n
    != 0: return` (or `continue`): the rest of the block runs now and then. Cost: one pass over the
    block the first time a scope asks about it (without a scope, each time), O(1) after that."""
    memo = scope.exits if scope is not None else {}
    if id(block) not in memo:
        memo[id(block)] = _after_exit(block.body, _step_holders(parents, scope))
    return id(statement) in memo[id(block)]


def _after_exit(body, step_holders: Set[int]) -> FrozenSet[int]:
    """The ids of the statements of a block after its first periodic early exit (none without one, and
    none when they run an optimizer step: `if (i + 1) % accumulation != 0: continue` skips to the step)."""
    for position, statement in enumerate(body):
        if isinstance(statement, cst.If) and statement.orelse is None and _exits(statement.body) and _periodic_exit_test(statement.test):
            later = body[position + 1:]
            if any(id(node) in step_holders for node in later):
                return frozenset()
            return frozenset(id(node) for node in later)
    return frozenset()


def _steps_optimizer(branch, parents: Mapping, scope: Optional[StepScope]) -> bool:
    """Whether an `if` on a modulo runs an optimizer step in its body (`if (i + 1) % accumulation == 0:
    optimizer.step()`): that body is the training step itself, run on every optimizer step, not now and
    then. Known with a scope only (without one, no such branch is)."""
    return id(branch.body) in _step_holders(parents, scope)


def _step_holders(parents: Mapping, scope: Optional[StepScope]) -> Set[int]:
    """The ids of the nodes from each of the method's optimizer steps (`StepScope.steps`) up to the method,
    built the first time it is asked: a climb stops where an earlier one passed, so O(the method)."""
    if scope is None:
        return set()
    holders = scope.step_holders
    if scope.steps and not holders:
        for step in scope.steps:
            node = step
            while node is not None and id(node) not in holders:
                holders.add(id(node))
                node = parents.get(node)
    return holders


def _exits(block) -> bool:
    """A block that only returns or continues: `return`, `return None`, `continue`."""
    lines = block.body if isinstance(block, cst.IndentedBlock) else [block]
    if len(lines) != 1 or not isinstance(lines[0], (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return False
    small = lines[0].body
    return len(small) == 1 and isinstance(small[0], (cst.Return, cst.Continue))


def _periodic_exit_test(test) -> bool:
    """A test that holds on most steps and fails now and then: `step % n != 0`, a bare `step % n`, or
    `not` of a periodic test (`not self.should_log`). `step % n == 0` or a bare switch exit now and then."""
    return _test_kind(test) == MOSTLY


def _rare(branch, in_body: bool, scope: StepScope) -> bool:
    tests = _conjuncts(branch.test)
    if any(_none_check_of_step_value(test, scope) for test in tests):
        return True  # either side: the step made the value this time, or it did not
    if not in_body:
        return False  # `else:` of a setting or a run-once test is the usual path
    if any(_setting(test, scope) for test in tests):
        return True
    return any(
        _assigned_in(branch.body, target)
        for target in map(_sentinel_target, tests)
        if target and target not in scope.parameters
    )


def _conjuncts(test) -> List:
    """`a and b and c` -> [a, b, c]: each holds whenever the block runs.
    Cost: O(test), iterative (a long `and` is a deep tree)."""
    found, stack = [], [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And):
            stack.append(node.right)
            stack.append(node.left)
        else:
            found.append(node)
    return found


def _setting(test, scope: StepScope) -> bool:
    """`self.collect_stats`, `self.hparams.log_stats`: an attribute of `self` the class
    never changes and does not plainly turn on by default, other than `training`."""
    dotted = cst_dotted_name(test)
    if dotted is None or scope.instance is None:
        return False
    parts = dotted.split(".")
    return (
        len(parts) >= 2
        and parts[0] == scope.instance
        and parts[1] not in PER_STEP_FLAGS
        and parts[1] not in scope.settings.changed
        and parts[1] not in scope.settings.on_by_default
    )


def _sentinel_target(test) -> Optional[str]:
    """`x` for `x is None`, `x == -1`, `not x` (x a name or an attribute chain)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return cst_dotted_name(test.expression)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        if isinstance(comparison.operator, (cst.Is, cst.Equal)) and _is_literal(comparison.comparator):
            return cst_dotted_name(test.left)
    return None


def _none_check_of_step_value(test, scope: StepScope) -> bool:
    """`x is None` / `x is not None` for a name the method binds itself, not a parameter it
    rebinds (`if num_boxes is None: num_boxes = ...`, `if bbox_pred is not None: bbox_pred =
    decode(...)`): a caller passes a parameter or leaves it out alike on every step."""
    return (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
        and isinstance(test.left, cst.Name)
        and test.left.value in scope.step_locals
        and test.left.value not in scope.parameters
    )


def _assigned_in(block, dotted: str) -> bool:
    for node in own_nodes(block):
        if isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign)) and any(
            cst_dotted_name(part) == dotted for part in target_parts(node.target)
        ):
            return True
    return False


def target_parts(target) -> List:
    """The single targets of an assignment target: `a, (b, *c)` -> a, b, c; `self.x` and
    `d[k]` stay whole."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [part for element in target.elements for part in target_parts(element.value)]
    if isinstance(target, cst.StarredElement):
        return target_parts(target.value)
    return [target]


def _is_literal(node) -> bool:
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)) or (
        isinstance(node, cst.Name) and node.value in ("None", "True", "False")
    )


def _is_setting_value(value: ast.AST) -> bool:
    """Built only from names, literals, comparisons, `and`/`or`/`not`, `x if c else y` and
    `getattr`/`bool`/`.get` calls: an argument or a literal (an attribute read outside such
    a call is not taken for one)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name not in _SETTING_CALLS:
                return False
            stack.extend(arg.value if isinstance(arg, ast.Starred) else arg for arg in node.args)
            stack.extend(keyword.value for keyword in node.keywords)
            continue
        if isinstance(node, ast.Constant):
            if not isinstance(node.value, (str, bytes, int, float, type(None))):
                return False
            continue
        if not isinstance(node, _SETTING_NODES):
            return False
        stack.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr))
    return True


def _is_test(value) -> bool:
    """A value written as a condition: a comparison, `and`/`or`, `not` (`self.steps % 4 == 0`, not the
    index `i % n`)."""
    return isinstance(value, (cst.Comparison, cst.BooleanOperation)) or (
        isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Not)
    )


def _names_periodic(test, scope: Optional[StepScope]) -> bool:
    """Whether a test reads a name the method bound once to a periodic test (`if apply_penalty:`
    after `apply_penalty = self.steps % 4 == 0`). Cost: O(test)."""
    if scope is None or not scope.periodic_names:
        return False
    names = scope.periodic_names
    return any(type(node) is cst.Name and node.value in names for node in pruned_walk(test, (cst.Attribute,)))


def _periodic(test, unit_divisors: FrozenSet[str] = frozenset()) -> bool:
    """Whether a test holds now and then (see `in_periodic_branch`, `_test_kind`)."""
    return _test_kind(test, unit_divisors) == RARE


def _test_kind(test, unit_divisors: FrozenSet[str] = frozenset()) -> int:
    """`periodic_calls.ast_test_kind` of a LibCST test: `RARE` where it holds now and then, `MOSTLY` where
    it holds on most steps (`step % n != 0`, `not self.debug`), else `NO_KIND`; a modulo by one of
    `unit_divisors` (parameters that default to 1) holds on every step. Cost: O(the test) (`fold_test`)."""
    first_steps_operators = (cst.Equal, cst.LessThan, cst.LessThanEqual)

    def own_kind(node, parts, kinds: Dict[int, int]) -> int:
        if isinstance(node, (cst.Name, cst.Attribute)):
            # an attribute is read by its last name alone: `self.log_every` is not `self`
            return RARE if periodic_name(cst_last_name(node) or "") else NO_KIND
        if isinstance(node, cst.UnaryOperation):
            operand = kinds[id(node.expression)]
            return negated(operand) if isinstance(node.operator, cst.Not) else operand
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo) and not (
            isinstance(node.right, cst.Name) and node.right.value in unit_divisors
        ):
            return MOSTLY
        if isinstance(node, cst.BooleanOperation):
            sides = [kinds[id(node.left)], kinds[id(node.right)]]
            return conjunction(sides) if isinstance(node.operator, cst.And) else disjunction(sides)
        if isinstance(node, cst.Comparison):
            operands = [node.left] + [target.comparator for target in node.comparisons]
            first_steps = any(isinstance(t.operator, first_steps_operators) for t in node.comparisons) and any(
                isinstance(operand, (cst.Name, cst.Attribute)) and cst_last_name(operand) in STEP_COUNTERS
                for operand in operands
            )
            not_equal = all(isinstance(target.operator, cst.NotEqual) for target in node.comparisons)
            return comparison([kinds[id(operand)] for operand in operands], not_equal, first_steps)
        return compound([kinds.get(id(part), NO_KIND) for part in parts])

    return fold_test(test, _cst_parts, own_kind)


def _cst_parts(node) -> Sequence:
    """A node's parts for `fold_test`: none for a name or an attribute, read by their last name."""
    return () if isinstance(node, (cst.Name, cst.Attribute)) else children(node)
