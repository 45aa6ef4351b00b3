"""TL005 implicit-host-sync-in-hot-path: the rule, which reports tensors read on the host without saying so
(`if t.any():`, `float(t)`, data-dependent shapes feeding control flow) in what runs on every step.

Cost per method: one pass over its own nodes; per tested operand or call O(the operand or
call); a test is rendered once however many of its operands are tested tensors; the
climbs to a statement or test owner are memoized per method, and a data-dependent value's
bound name is looked up in one index of the method's names (`name_nodes`)."""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Mapping, Optional, Tuple

from torchlint.analysis.names import ast_dotted_name, cst_last_name, resolve
from torchlint.analysis.accumulation import summed_into
from torchlint.analysis.loss_paths import is_loss_code
from torchlint.analysis.scopes import own_nodes
from torchlint.analysis.value_kinds import fresh_cpu_tensor, plainly_host
from torchlint.rule_api.bases.hot_path import HotPathRule
from torchlint.core.lazy import cst
from torchlint.analysis.source_view import SourceView
from torchlint.rule_api.rule import Report
from torchlint.rules.training.implicit_host_sync_in_hot_path import examples
from torchlint.rules.training.implicit_host_sync_in_hot_path.control_flow import (
    ends_a_loop,
    feeds_control_flow,
    name_nodes,
    single_bindings,
    statement_of,
    tests_a_check,
    truth_operands,
)
from torchlint.rules.training.implicit_host_sync_in_hot_path.tensor_calls import (
    CASTS,
    CPU_COPIES,
    DATA_DEPENDENT,
    ELEMENTWISE,
    EXPLICIT_SYNCS,
    MATH_TESTS,
    NORM_CLIPPERS,
    LENGTHS_ON_CPU,
    SAME_DEVICE_METHODS,
    LOOP_EXITS,
    SIZES,
    TENSOR_FUNCTIONS,
    TENSOR_METHODS,
    is_torch,
)


EMPTY_BINDINGS: Mapping[str, object] = {}
# tensor methods whose result stays where their receiver is, taking no argument (`x.cpu().detach()`)
KEEP_ON_CPU = frozenset({"detach", "float", "double", "clone", "contiguous", "squeeze", "flatten"})


def _bare_method(expression) -> Optional[str]:
    """`name` for a call `x.name()` with no argument, else None."""
    if isinstance(expression, cst.Call) and not expression.args and isinstance(expression.func, cst.Attribute):
        return expression.func.attr.value
    return None


def _printed(call) -> Iterator:
    """The values `print(...)` formats: its positional arguments, and the expressions of an f-string among them."""
    for argument in call.args:
        if argument.keyword is not None or argument.star:
            continue
        value = argument.value
        if isinstance(value, cst.FormattedString):
            yield from (part.expression for part in value.parts if isinstance(part, cst.FormattedStringExpression))
        else:
            yield value


class ImplicitHostSyncInHotPath(HotPathRule):
    """
    ## What it does
    Flags code that reads a tensor's value on the host without saying so, in TL003's hot
    paths (`forward` of a module, the `*_step` hooks of a `LightningModule`,
    `forward`/`backward` of an `autograd.Function`, and what they call on `self`, up to
    three calls deep; a module's loss methods and the loss functions a runner outside the tree
    calls, as TL003 says) and training loops (a loop that runs a backward pass or an optimizer
    step, and what it calls on every iteration): a tensor tested by Python (`if t.any():`,
    `if not torch.isfinite(loss).all():`, `while err.max() > tol:`), converted by `bool(t)`
    or `float(t)` or Python's `math.isnan(t)` (also of its copy: `float(loss.cpu())` reads a
    number as `.item()` does; and of a detached tensor, `float(loss.detach())`: only a tensor has `.detach()`),
    formatted by `print` (`print(loss.mean())`, `print(f"{x.norm()}")`), and
    `torch.nonzero` / `masked_select` whose data-dependent result feeds a
    `for` or an `if`. Off by default: select it with `--select TL005` or
    `extend-select = ["TL005"]`.

    A file that imports another array framework and not torch (JAX, TensorFlow, Warp, ...) is
    that framework's code, and not looked at.

    Only evident tensors count: the result of a torch predicate or reduction
    (`torch.isnan(x)`, `x.sum()`, `x.any()`); not a plain variable (`if loss:`), a fresh CPU
    tensor (`float(torch.rand(1))`), or the lengths given to `pack_padded_sequence` (which
    must be on the CPU). A statement is reported once (`f(a.cpu(), b.cpu())` waits once).
    A tensor is also the norm `clip_grad_norm_` returns, and an elementwise function of an
    evident one (`torch.abs(x.max())`).
    An explicit copy (`t.cpu()`: the copy waits for the device) is reported unless
    `check-cpu-copies` is off. Sizes, loop exits and error checks are reported only with their
    options (below), except the counts of loss code (`int(mask.sum())` in a loss's
    `forward`, as TL003 reports its host values) and a count summed into a running total
    (`correct += int(hits.sum())`: a statistic, no size). `.item()`, `.tolist()`, `.numpy()`
    and `synchronize()` are TL003's.

    ## Why is this bad?
    Python cannot branch on a value that is still on the GPU: `if t.any():` calls
    `bool(t)`, which waits for every queued kernel and copies the value back, exactly like
    `.item()`, but nothing in the code says so. On every step it idles the GPU while Python
    prepares the next one (typically 5-30 % of throughput).

    ## Example
    ```python
    class Model(nn.Module):
        def forward(self, x, mask):
            if mask.any():
                x = x.masked_fill(mask, 0.0)
            return x
    ```

    ## Use instead
    ```python
            x = x.masked_fill(mask, 0.0)  # a no-op where mask is all False
    ```

    ## Fix safety
    No fix: keeping the value on the device means restructuring the code (`torch.where`,
    masking instead of branching, or checking once per epoch).

    ## Options
    - `check-sizes` (default `false`): `int()` of a tensor (but for a running total) and `len()`
      of a `nonzero` / `masked_select` result (`int(lengths.max()) + 1`): a number Python needs for an
      allocation, a loop or an index.
    - `check-cpu-copies` (default `true`): `t.cpu()` (never one TL003 reports, as
      `.cpu().numpy()`, nor the lengths for `pack_padded_sequence`). Set it to `false` where the
      host must have the copies (a replay buffer on the CPU, metrics in NumPy).
    - `check-loop-exits` (default `false`): a test that ends a loop (a `while` condition, an
      `if` whose body ends in `break`): the wait is the price of stopping early.
    - `check-error-paths` (default `false`): the condition of a check that raises, warns,
      logs or prints, and an `assert`'s test (their body and message never).
    - `check-periodic-branches` (default `false`): blocks that run now and then
      (`if step % n == 0:`, `if self.log_images:`), and the functions called only there, as TL003's option of
      the same name.

    ```toml
    [tool.torchlint.implicit-host-sync-in-hot-path]
    check-sizes = true
    ```
    """

    code = "TL005"
    name = "implicit-host-sync-in-hot-path"
    summary = "Tensor read on the host implicitly (if t.any(), float(t), nonzero) on every step"
    default_enabled = False
    triggers = ("torch",)
    options = {**HotPathRule.options, SIZES: False, CPU_COPIES: True, LOOP_EXITS: False}
    training_loops = True

    VALID = examples.VALID
    INVALID = examples.INVALID

    @classmethod
    def ast_candidate(cls, node: ast.AST, view: SourceView) -> bool:
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        if isinstance(func, ast.Name):
            return func.id in CASTS or func.id == "print" or is_torch(
                resolve(func.id, view.imports), DATA_DEPENDENT | TENSOR_FUNCTIONS
            )
        if not isinstance(func, ast.Attribute):
            return False
        if func.attr in TENSOR_METHODS | DATA_DEPENDENT or func.attr == "cpu":
            return True
        return is_torch(resolve(ast_dotted_name(func), view.imports), DATA_DEPENDENT | TENSOR_FUNCTIONS)

    def method_reports(self, class_name: str, function) -> Iterator[Tuple[Report, bool]]:
        return self.owner_reports(function, self._class_node, f"`{class_name}.{function.name.value}`")

    def owner_reports(self, function, class_node, where: str) -> Iterator[Tuple[Report, bool]]:
        body = function if isinstance(function, cst.Module) else function.body
        parents = self._parents(body)  # shared with TL003
        statements = set()
        owners: Dict[int, object] = {}  # `_test_owner`'s memo for this method
        holders: Dict[int, object] = {}  # `statement_of`'s
        # loss code's counts are its hard-negative mining (`k = int(mask.sum())`), as TL003 reports them
        loss_code = not isinstance(function, cst.Module) and is_loss_code(function, class_node)
        sizes = bool(self.settings[SIZES]) or loss_code
        for node, what in self._implicit_syncs(body, parents, sizes):
            if self.off_step(node, parents):
                continue
            if not self.settings["check-error-paths"] and tests_a_check(node, parents, owners):
                continue
            if not self.settings[LOOP_EXITS] and ends_a_loop(node, parents, owners):
                continue
            statement = statement_of(node, parents, holders)
            if statement in statements:  # once it has waited, the statement's next read is free
                continue
            statements.add(statement)
            message = f"{what} in {where} reads a tensor on the host: it waits for the GPU on every step"
            yield Report(self, node, message), False

    def _implicit_syncs(self, body, parents: Dict, sizes: bool) -> Iterator[Tuple[object, str]]:
        """The implicit reads of a method's own code; `sizes`: also `int()` of a tensor (a count)."""
        bindings = single_bindings(body)
        names: List[Dict[str, List]] = []  # `name_nodes(parents)`, built on first need
        for node in own_nodes(body):
            if isinstance(node, (cst.If, cst.While, cst.IfExp, cst.CompIf, cst.Assert)):
                what = None  # the test rendered once, for all its operands
                for operand in truth_operands(node.test):
                    if self._tested_tensor(operand):
                        if what is None:
                            what = f"`{self._code(node.test)}` tested by Python"
                        yield operand, what
            elif isinstance(node, cst.Call):
                yield from self._call_sync(node, parents, bindings, names, sizes)

    def _call_sync(self, call, parents: Dict, bindings: Dict, names: List, sizes: bool) -> Iterator[Tuple[object, str]]:
        func = call.func
        if isinstance(func, cst.Name) and func.value in CASTS:
            # `int(lengths.max())`: a size, count or index Python needs as a number; the
            # wait comes with a data-dependent shape, not with the way it is written. A count
            # summed into a running total (`correct += int(hits.sum())`) is a statistic, no size.
            if func.value == "int" and not sizes and summed_into(call, parents) is None:
                return
            if len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star:
                value = call.args[0].value
                if self._tensor_valued(value, bindings):
                    yield call, f"`{func.value}()` of a tensor"
                elif self._copied_tensor(value):
                    yield call, f"`{func.value}()` of a tensor's copy (`{func.value}(x.cpu())` reads a number as `.item()` does)"
                elif self._detached_tensor(value):
                    yield call, f"`{func.value}()` of a detached tensor"
            return
        if isinstance(func, cst.Name) and func.value == "print" and self.context.imports.qualified_name(func) is None:
            # formatting a tensor reads its values: `print(loss.mean())`, `print(f"{x.norm()}")`
            if any(self._tensor_valued(value, bindings) for value in _printed(call)):
                yield call, "`print()` of a tensor"
            return
        if self.context.imports.qualified_name(func) in MATH_TESTS and len(call.args) == 1:
            # `math.isnan(grad_norm)`: the float conversion reads the tensor
            value = call.args[0].value
            if isinstance(value, cst.Name):
                value = bindings.get(value.value, value)
            if self._tensor_valued(value):
                yield call, f"`{self._code(func)}()` of a tensor"
            return
        if isinstance(func, cst.Attribute) and func.attr.value == "cpu":
            # an explicit copy, mostly of what host code (a metric, scipy) must have
            if self.settings[CPU_COPIES] and not self._host_bound(call, parents):
                yield call, "`.cpu()`"
            return
        if self._data_dependent(call) and feeds_control_flow(
            call, parents, bindings, sizes, self._name_nodes(parents, names)
        ):
            name = func.attr.value if isinstance(func, cst.Attribute) else self._code(func)
            yield call, f"`{name}` (its size depends on the data) feeding Python control flow"

    @staticmethod
    def _name_nodes(parents: Dict, names: List) -> Dict[str, List]:
        if not names:
            names.append(name_nodes(parents))
        return names[0]

    def _tested_tensor(self, operand) -> bool:
        if isinstance(operand, cst.Comparison):
            identity_or_membership = (cst.Is, cst.IsNot, cst.In, cst.NotIn)
            if any(isinstance(target.operator, identity_or_membership) for target in operand.comparisons):
                return False
            operands = [operand.left] + [target.comparator for target in operand.comparisons]
            return any(self._tensor_valued(value) for value in operands)
        return self._tensor_valued(operand)

    def _tensor_valued(self, expression, bindings: Mapping[str, object] = EMPTY_BINDINGS) -> bool:
        """Whether an expression is evidently a tensor on the device: a torch predicate or
        reduction, a tensor method that reduces (`x.sum()`, `mask.any()`), or an elementwise
        function of one or arithmetic on one (`torch.abs(x.max())`, `x.max().abs()`, `x.sum().mul_(s)`).
        With `bindings` (names bound once), the first name met stands for its value (`acc = hits.mean()`,
        then `float(acc)` or `float(acc.mul_(100))`); names in that value are not followed. Cost: O(the
        expression and that value)."""
        if isinstance(expression, cst.Name) and expression.value in bindings:
            return self._tensor_valued(bindings[expression.value])
        if not isinstance(expression, cst.Call):
            return False
        imports = self.context.imports
        if fresh_cpu_tensor(expression, imports):
            return False
        if is_torch(imports.qualified_name(expression.func), TENSOR_FUNCTIONS):
            return True
        func = expression.func
        if cst_last_name(func) in NORM_CLIPPERS:
            return True
        if is_torch(imports.qualified_name(func), ELEMENTWISE) and expression.args:
            return self._tensor_valued(expression.args[0].value)
        if isinstance(func, cst.Attribute) and func.attr.value in ELEMENTWISE | SAME_DEVICE_METHODS:
            return self._tensor_valued(func.value, bindings)
        return (
            isinstance(func, cst.Attribute)
            and func.attr.value in TENSOR_METHODS
            and not expression.args
            and not plainly_host(func.value, imports)
            and not self.cpu_state(func.value)
            and not isinstance(func.value, (cst.List, cst.Tuple, cst.Dict, cst.SimpleString))
        )

    def _copied_tensor(self, expression) -> bool:
        """Whether an expression is `x.cpu()` of a tensor that may be on the device, maybe followed by
        calls that keep it a CPU tensor (`x.cpu().detach()`): converting it to a number waits for
        the device as `.item()` does (the copy is the wait)."""
        while _bare_method(expression) in KEEP_ON_CPU:
            expression = expression.func.value
        if _bare_method(expression) != "cpu":
            return False
        receiver, imports = expression.func.value, self.context.imports
        return not (plainly_host(receiver, imports) or fresh_cpu_tensor(receiver, imports) or self.cpu_state(receiver))

    def _detached_tensor(self, expression) -> bool:
        """Whether an expression is `x.detach()`, maybe followed by calls that keep it a tensor
        (`x.detach().float()`), of an `x` that may be on the device: only a tensor has `.detach()`."""
        detached = False
        while _bare_method(expression) in KEEP_ON_CPU:
            detached = detached or _bare_method(expression) == "detach"
            expression = expression.func.value
        imports = self.context.imports
        return detached and not (
            plainly_host(expression, imports) or fresh_cpu_tensor(expression, imports) or self.cpu_state(expression)
        )

    def _data_dependent(self, call) -> bool:
        func = call.func
        if is_torch(self.context.imports.qualified_name(func), DATA_DEPENDENT):
            return True
        return isinstance(func, cst.Attribute) and func.attr.value in DATA_DEPENDENT and not plainly_host(
            func.value, self.context.imports
        )

    def _host_bound(self, call, parents: Dict) -> bool:
        """A `.cpu()` TL003 reports (`.cpu().numpy()`), one of a host value, or the
        lengths `pack_padded_sequence` needs on the CPU."""
        imports = self.context.imports
        receiver = call.func.value
        if call.args or plainly_host(receiver, imports) or fresh_cpu_tensor(receiver, imports):
            return True
        parent = parents.get(call)
        while isinstance(parent, (cst.Attribute, cst.Call)):
            if isinstance(parent, cst.Attribute) and parent.attr.value in EXPLICIT_SYNCS:
                return True
            parent = parents.get(parent)
        if isinstance(parent, cst.Arg):
            outer = parents.get(parent)
            return isinstance(outer, cst.Call) and imports.qualified_name(outer.func) == LENGTHS_ON_CPU
        return False

    def _code(self, node) -> str:
        text = " ".join(self.context.module.code_for_node(node).split())
        return text if len(text) <= 40 else text[:37] + "..."
