"""TL003 host-sync-in-hot-path: the rule, which reports explicit host syncs in what runs on every step,
and its fixes (log the tensor, accumulate the tensor, keep a count on the GPU).

Cost per owner with a sync: one pass over its own nodes (`nodes`), its parents (shared with TL005),
`name_uses`, `NameKinds` and `repeated_syncs` once; per sync O(depth) plus the expressions around it, the
uses of a bound name and an accumulator's name asked once per name (`UseMemo`, `OwnerNames`).
"""

from __future__ import annotations

import ast
from typing import FrozenSet, Iterator, List, Optional, Set, Tuple

from torchlint.analysis.accumulation import AccumulationPlan, OwnerNames, accumulation_plan, accumulator
from torchlint.analysis.classes import self_name
from torchlint.analysis.loss_paths import host_value_rewrite, is_loss_code, may_be_criterion
from torchlint.analysis.scopes import own_nodes
from torchlint.analysis.sync_history import repeated_syncs
from torchlint.analysis.training_loops import trains
from torchlint.analysis.value_kinds import Kind, NameKinds, ast_fresh_cpu_tensor, cst_bindings, fresh_cpu_tensor
from torchlint.rule_api.bases.hot_path import HotPathRule
from torchlint.core.diagnostics import Applicability, Fix
from torchlint.core.lazy import cst
from torchlint.fixing.layout import edit_fits, split_statement, width
from torchlint.analysis.source_view import SourceView
from torchlint.rule_api.rule import Positions, Report
from torchlint.rules.training.host_sync_in_hot_path import examples
from torchlint.rules.training.host_sync_in_hot_path.lightning_log import logged_values
from torchlint.rules.training.host_sync_in_hot_path.mining_fix import MiningPlan, mining_plan
from torchlint.rules.training.host_sync_in_hot_path.returned_values import ReturnedUses
from torchlint.rules.training.host_sync_in_hot_path.syncs import (
    SYNCHRONIZE,
    after_sync,
    ast_is_sync,
    calls_a_timer,
    is_sync,
    sync_method,
    sync_receiver,
)
from torchlint.rules.training.host_sync_in_hot_path.value_uses import (
    UseMemo, arithmetic_only, handed_back, name_uses, recorded, recorded_then_returned,
)


# the syncs whose number a running total folds in (`total += loss.item()`, `+= loss.cpu().numpy()`)
_SUMMED = ("item", "numpy")


class HostSyncInHotPath(HotPathRule):
    """
    ## What it does
    Flags `.item()`, `.tolist()`, `.numpy()` and `torch.cuda.synchronize()` on every step: in a hot
    path or what it calls on `self` (up to three calls deep, through the class and its bases in any
    file; also a method of a submodule `__init__` builds, `self.head.loss_fn(...)`, a method handed
    to a call, `redirect(model, self._compute_loss, batch)`, and one `__init__` stores on `self`,
    `self.loss_method = self.mat_loss`); the message names the route ("reached
    from `Model.training_step` via `_shared_step`").
    Hot paths: `forward` and `forward_train` of a module (mmcv-era OpenMMLab detectors, segmentors and
    heads run `forward_train` on every step), and its `train_step` where no method of the tree calls it
    (OpenMMLab's runners call `model.train_step(data, optimizer)` on every iteration); `training_step`, `validation_step`,
    `test_step`, `predict_step` of a `LightningModule`; `forward` / `backward` of an `autograd.Function`;
    `training_step` / `compute_loss` of a Hugging Face `Trainer` subclass (trl's trainers are ones), and
    `get_batch_loss_metrics` of a subclass of trl's preference trainers (DPO, KTO, ORPO, CPO, BCO: their
    `compute_loss` calls it on every step); in any class, `training_step` (a
    task object a LightningModule's step delegates to, a custom trainer) and the per-batch hooks of
    Lightning's modules and callbacks (`on_train_batch_start`/`_end`, `on_before_backward`,
    `on_after_backward`, `on_before_optimizer_step`) and of Avalanche's plugins (`before_training_iteration`,
    `after_training_iteration`, `before_backward`, `after_backward`), also where a base defines the hook (the
    instance's own methods run from it); `update` of a metric (a class of torchmetrics', Ignite's or
    Avalanche's metric bases, or of the project's own: with an `update` and a `reset`, named `...Metric` or
    `...Metrics` or inheriting such a class, as baal's `Metrics` and its `ECE`): it runs on every batch it
    measures, in training or in evaluation alike, since which loop uses a metric is not known where it is
    defined; a module's methods named as a training loss or losses (`loss`, `loss_by_feat`, `compute_loss`,
    `losses`, `_compute_losses`; not `val_loss` or `_log_loss`) and module-level functions so named
    (`dice_loss`) that no code of the tree calls: a runner outside it (mmengine's `model(data, mode='loss')`,
    a training script) calls them on every step; where the tree calls them, its callers decide. A class is a module if a base resolves, across the linted files, to `nn.Module`,
    `LightningModule`, the module bases of mmengine, mmcv, transformers and diffusers, or a class of an
    OpenMMLab codebase's `models` package (`mmdet.models.dense_heads.AnchorHead`), or, for a base from
    outside the tree, if its body says so (layers set on `self` in `__init__`, `register_buffer`,
    `self.log(...)`). Training loops are hot too (a loop that runs a backward pass or an optimizer step, not a
    scheduler's alone, directly or through a step function or a hook it calls by name, `self.call_hook(
    "after_train_step")`, which stands for every method of that name in the tree; also a loop over data whose
    items each get repeated updates in a counting loop, `for _ in range(critic_iters): opt.step()`; a loop over
    the optimizers, `for optimizer in optimizers: optimizer.step()`, makes the loop around it train) with what
    they call on every iteration, in any linted file, also a method of an object the class's `__init__` builds
    (`self.discriminator.compute_loss(...)` after `self.discriminator = Discriminator(...)`); not a loop that
    only calls a function holding its own training loop.

    Reported by default: values only recorded or reported (given to `self.log`, a logger, `print` or a method
    so named (`accelerator.print`), also formatted for one with an f-string, `%` or `str.format`, or in a list
    given to one (`metrics.update([loss.item(), acc])`), a progress bar, a recorder (`logger.record(...)`,
    `self.track_data(...)`, a logger's `store`: `self.logger.store(LossPi=...)`), an event of callbacks
    (`callbacks.on_batch(batch_loss=...)`), the project's own logging routine named for what it logs
    (`self._log_performance(itr, loss.item())`) or a function of the file that only prints or logs what it is
    given (`self._printlog(message)`), a stats dict (also a
    comprehension, `{name: fn(out).item() for ...}`, and numbers formatted into one,
    `bar.set_postfix({"loss": f"{loss.item():.3f}"})`) kept,
    returned or handed to one of them, a stats record (`TrainingStats(loss=loss.item())`, a class named
    `...Stats`, `...Statistics` or `...Metrics`), a list or deque of losses (`append`, `extend`), an attribute
    of `self` the method does not compare or branch on, a `nonlocal` or `global` name (an optimizer's
    closure keeping `batch_loss = loss.item()` for the loop around it)), summed or averaged (`running += loss.item()`,
    `total += loss.cpu().numpy()`, a sum started on the first step, `total = x.item() if total is None else
    total + x.item()`, also into such an attribute, a stats dict or an array's item: `self.total +=
    loss.item()`, `epoch_losses[epoch] += loss`), either arm of a conditional so used, or used in
    arithmetic that works as well on the tensor (`x / x.sum().item()`); each also through a name bound to the
    number, once or again in straight-line code (`loss = loss.item(); history.append(loss)`: what the name holds
    until it is bound again, and on a loop's next turn, is read so); a number a function returns when every
    call of it in the file (by name, on `self`, or on an instance of its class the file builds: `self.trainer =
    Trainer(...)`, `self.trainer.update(batch)`) only sums, logs or drops it (`total += train_step(batch)`, also
    each part of a tuple it returns: `loss, acc = step(batch)`, `fmt.format(step, loss)` given to a logger), or,
    where no code of the file calls it (an agent's `learn`, called by a training loop in another file), that it
    also records (`loss = loss.item()`, `self.metrics.log("loss", loss)`, `return loss`), or, where that
    function is itself a training step (it runs the backward pass or an optimizer step: an agent's `update`), that it
    returns (`return -actor_loss.item(), critic_loss.item()`);
    `torch.cuda.synchronize()` except around a timer. A value
    needed on the host (a size, an index, a split, a loop, a branch, a returned number, a dict handed
    to another function) only with `check-host-values`, except in a metric's `update` (what it reads
    goes into the metric's state) and in loss code (`forward` of a class
    named `...Loss` or `...Criterion`, a function named `...loss` or `loss_...`, a criterion a training loop
    differentiates, built there, passed in as a parameter or returned by a factory of the tree), where the
    message gives the sync-free rewrite that fits (sort once and mask by rank instead of `topk` of a
    count; `clamp_min`/`clamp_max` for Python `min`/`max`; `torch.where` for a branch).

    Not reported: values plainly not tensors (numpy arrays, Python numbers and lists), and the code of
    another array framework (a file that imports JAX, TensorFlow, Warp, MLX, Paddle, MindSpore,
    OneFlow or CuPy and not torch: a JAX agent beside its PyTorch twin); `.item()` of a
    fresh CPU tensor (`torch.rand(1).item()`); look-alikes (`dict.items()`, `arr.item(0)`); a second
    read of a tensor the step already read on the host on every path to it, or of a copy of it
    (`gp.clone().detach().item()` after `torch.isnan(gp)`), until rebound or changed in place, or
    until a backward pass or an optimizer step queues the step's kernels again (the read after
    `loss.backward(); optimizer.step()` waits for them); a second sync on one value
    (`x.numpy().tolist()`); epoch-level hooks and helpers no hot path calls; error paths (a `raise`, a
    block ending in one, an `assert`'s message); a `forward` under `torch.no_grad()` /
    `torch.inference_mode()` (a predictor's) as a hot path of its own (reached from a
    training step it is reported; with `check-evaluation-loops` it is one; a per-batch hook so decorated
    still runs on every step). Implicit
    syncs (`if t.any():`, `float(t)`, `t.cpu()`) are TL005's.

    ## Why is this bad?
    CUDA runs asynchronously. Reading a value on the host waits for every queued kernel, so the GPU
    idles while Python prepares the next step (typically 5-30 % of throughput), and CUDA errors
    surface at the sync, far from the kernel at fault.

    ## Example
    ```python
    class Detector(pl.LightningModule):
        def training_step(self, batch, batch_idx):
            loss = self.criterion(self(batch["image"]), batch["gt"])
            self.log("train/loss", loss.item())
            return loss
    ```

    ## Use instead
    ```python
            self.log("train/loss", loss.detach())
    ```

    ## Fix safety
    Safe: in what a `*_step` hook of a `LightningModule` reaches, `self.log(name, x.item())` and
    `self.log_dict({...: x.item()})` become `x.detach()` (Lightning reduces tensors and reads them only
    when it must). A value logged with `prog_bar=True` on step from `training_step` is not reported:
    the progress bar reads it each batch anyway. Elsewhere (`self.log` of a plain `nn.Module` may need
    a number), or on a value plainly not a tensor, no fix. A count of matches summed in a loop,
    `correct += (pred == y).sum().item()`, `correct` set to an int just before the loop and read after
    it only as a number, becomes `correct += (pred == y).sum()` and `correct = int(correct)` after the
    loop: an integer tensor adds exactly as Python did.

    Unsafe: any other sum in a loop, `total += x.item()` (a number start, read after the loop only as a
    number), becomes `total += x.detach()` and `total = float(total)` after the loop. The tensor adds in
    its own dtype: a float32 total differs from Python's float64 sum in the last digits (float64 on the
    device would be exact, but Apple's MPS has no float64); started at an int, the total becomes a float
    where the tensor held integers. A later read that is not a number context keeps the fix unsafe too.

    Unsafe: `n = x.item()` or `n = int(x.item())`, `n` bound once and only an operand of arithmetic with
    a tensor (so its result was a tensor already) that needs no Python number, becomes `n = x.detach()`
    (or `.long()`): a 0-dim tensor, so the result's dtype can change and later formatting or branching
    syncs there. Arithmetic with numbers only (`x.shape[0] - n`) may feed a size, a slice, NumPy or
    JSON: no fix.

    Unsafe, in loss code: the counts of hard-negative mining (`k = int(m.sum().item())`,
    `min(..., int(k * ratio))`, `max(n, 1)`, a branch on a count as `a if c else b` or an `if`/`else`
    assigning one name, `v, _ = x.topk(k)` or `s[:k]` of `s = x.view(-1).sort(descending=True)[0]`, read
    only as `v.sum()` / `v.mean()`) become tensor code:
    `.detach().long()`, `clamp_max` / `clamp_min`, `torch.where`, and the selection sorts once and masks
    by rank (`x.sort(descending=True).values.where(torch.arange(n) < k, 0)`, a mean becomes the sum over
    `k`). The loss and its gradients stay the same, except: a count above the number of elements takes
    them all where `topk` raised; among tied values the gradient may go to another of the ties; the
    sort is O(n log n) over the whole row; a count is an integer 0-dim tensor, so a divisor built from
    it is float32, not float64. Only where every count is read so or in arithmetic with a tensor, and
    no comment sits in what becomes one line.
    Other syncs: no fix.

    ## Options
    - `check-host-values` (default `false`): also values needed on the host (`k = int(n.sum().item())`).
    - `check-error-paths` (default `false`): also the condition of an `if` whose block raises and an
      `assert`'s test (their message and block never).
    - `check-periodic-branches` (default `false`): also blocks that do not run on every step: under a
      modulo (`if step % 100 == 0:`, also through a name bound once to one: `apply = step % 4 == 0; if apply:`)
      or a first-steps test (`if batch_idx < 10:`), or after an early exit on
      one (`if step % 100 != 0: return`), unless that block steps an optimizer (gradient accumulation's
      `if (i + 1) % accumulation == 0: optimizer.step()`, a delayed actor update: it runs on every
      optimizer step, and is reported by default; and a modulo by a parameter that defaults to 1,
      `def fit(self, data, log=1)` and `if step % log == 0:`, which holds on every step by default); under a logging
      switch (`if self.debug:`) or a setting not plainly on by default (set only in `__init__`, to an
      argument, a config value or a literal other than `True`; not `self.training`); a block that
      assigns what its condition tests (`if x is None: x = ...`, not a parameter: a default filled in on
      every call that leaves it out); a None-check of a value the step made (not of a parameter); the
      evaluation side of a module's mode (`if not model.training:`, the `else:` of `if self.training:`) or of a
      phase (`if mode == "val":`, `if phase != "train":`, the `else:` of `if phase == "train":`). The
      other side of such a test is the usual path and is reported by default: the `else:` of `if self.debug:`
      or of `if step % 100 == 0:`, the body of `if not self.debug:` or of `if step % 100 != 0:`. By
      default a function called only under an interval or a logging switch (`if step % 100 == 0:
      self._log_stuff(loss)`) is not followed from the training loop either; with the option it is.
    - `check-evaluation-loops` (default `false`): also loops under `torch.no_grad()` / `inference_mode()`, and
      a module's `forward` so decorated.
    """

    code = "TL003"
    options = {**HotPathRule.options, "check-host-values": False, "check-evaluation-loops": False}
    training_loops = True
    name = "host-sync-in-hot-path"
    summary = "Host-device sync (.item(), .tolist(), .numpy(), synchronize) on every step"
    fixable = True
    triggers = (".item(", ".tolist(", ".numpy(", "synchronize")

    VALID = examples.VALID
    INVALID = examples.INVALID

    def __init__(self, context) -> None:
        super().__init__(context)
        self._progress_bar: Set[int] = set()
        self._returned_uses = ReturnedUses(context.view)

    @classmethod
    def ast_candidate(cls, node: ast.AST, view: SourceView) -> bool:
        if not ast_is_sync(node, view.imports):
            return False
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
        return receiver is None or not ast_fresh_cpu_tensor(receiver, view.imports)

    def method_reports(self, class_name: str, function) -> Iterator[Tuple[Report, bool]]:
        return self.owner_reports(function, self._class_node, f"`{class_name}.{function.name.value}`")

    def owner_reports(self, function, class_node, where: str) -> Iterator[Tuple[Report, bool]]:
        self._progress_bar.clear()  # ids of this method's reports, alive until placed
        module_code = isinstance(function, cst.Module)
        body = function if module_code else function.body
        instance = self_name(function) if class_node is not None and not module_code else None
        imports = self.context.imports
        nodes = list(own_nodes(body))  # walked once, read by each helper
        if not any(type(node) is cst.Call and is_sync(node, imports) for node in nodes):
            return  # nothing here to report: spare the analyses below (most owners a loop pass asks about)
        parents = self._parents(body)  # shared with TL005 and the loop pass
        logged = logged_values(nodes, instance, imports)
        timed = calls_a_timer(nodes, imports)
        loss_path = not module_code and is_loss_code(function, class_node)
        host_values = bool(self.settings["check-host-values"]) or loss_path or self.metric_update(function, class_node)
        # loss code too if a hot loop calls an instance as its criterion (decided by `_place`)
        criterion = not loss_path and not module_code and may_be_criterion(function, class_node)
        repeated = repeated_syncs(body, imports, sync_receiver)
        # a training step whose callers are in other files: what it hands back is read there on every step
        called_elsewhere = self._called_elsewhere(function)
        stepping_elsewhere = called_elsewhere and trains(nodes, imports)
        uses = name_uses(nodes, parents)
        routines = self._returned_uses.routines
        outer_names = frozenset(
            name.name.value for node in nodes if type(node) in (cst.Nonlocal, cst.Global) for name in node.names
        )
        # what the uses of each name say, asked once per name; the same, where a `return` counts as recorded
        memo = UseMemo(routines=routines, outer_names=outer_names)
        returned_memo = UseMemo(routines=routines, outer_names=outer_names)
        owner_names = OwnerNames(body, parents)  # the accumulators' names, indexed once
        kinds = NameKinds(imports, cst_bindings(nodes))
        counts = None
        if loss_path or criterion:  # the counts a loss reads on the host, rewritten once per function
            counts = mining_plan(function, parents, uses, kinds, imports, self.context.module)
        for node in nodes:
            if type(node) is not cst.Call:
                continue
            if imports.qualified_name(node.func) == SYNCHRONIZE:
                # around a timer it is what makes the measurement right
                if not self.off_step(node, parents) and not timed:
                    message = (
                        f"`torch.cuda.synchronize()` in {where} makes the host wait for all queued GPU work"
                        " on every step"
                    )
                    yield Report(self, node, message), False
                continue
            method_name = sync_method(node)
            receiver = node.func.value if method_name is not None else None
            if method_name is None or node in repeated or after_sync(receiver) or fresh_cpu_tensor(receiver, imports):
                continue
            if kinds.kind(receiver) is Kind.HOST or self.cpu_state(receiver):
                continue
            if self.off_step(node, parents):
                continue
            message = (
                f"`.{method_name}()` in {where} waits for the GPU to finish and copies to the host "
                "on every step"
            )
            if method_name == "item" and node in logged:
                # only when a Lightning step reaches it is `self.log` Lightning's, which takes tensors
                report = Report(self, node, message, lambda positions, call=node: self._log_fix(call, positions))
                if logged[node]:
                    self._progress_bar.add(id(report))
                yield report, True
                continue
            unsafe = arithmetic_only(node, parents, uses, kinds, memo) if method_name == "item" else None
            if unsafe is not None:
                fix = lambda positions, call=node, whole=unsafe: self._unsafe_fix(call, whole, positions)  # noqa: E731
                yield Report(self, node, message, fix), False
                continue
            statement = accumulator(node, parents) if method_name in _SUMMED else None
            if statement is not None:
                # the fix turns `.item()` into the tensor; a summed NumPy copy keeps the advice
                plan = accumulation_plan(node, statement, parents, body, owner_names) if method_name == "item" else None
                message += "; accumulate the tensor and read it once after the loop"
                fix = None
                if plan is not None:
                    fix = lambda positions, call=node, plan=plan: self._accumulation_fix(call, plan, positions)  # noqa: E731
                yield Report(self, node, message, fix), False
                continue
            if recorded(node, parents, uses, memo):
                yield Report(self, node, message), False
            elif self._returned_to_recorders(function, class_node) and recorded(
                node, parents, uses, returned_memo, returned=True
            ):
                message += "; its callers here only sum, log or drop the number it returns"
                yield Report(self, node, message), False
            elif called_elsewhere and recorded_then_returned(node, parents, uses, routines):
                message += (
                    "; it is recorded here and returned to callers in other files: where they only record it"
                    " too, return the tensor"
                )
                yield Report(self, node, message), False
            elif stepping_elsewhere and handed_back(node, parents, uses, routines):
                message += (
                    "; this training step returns it to callers in other files: return the detached tensor and"
                    " read it where it is logged"
                )
                yield Report(self, node, message), False
            elif host_values or criterion:
                hint = host_value_rewrite(node, parents, uses, memo.rewrites) if loss_path or not host_values else None
                mined = counts is not None and id(node) in counts.syncs
                if hint is not None:
                    message += f"; {hint}" + ("" if mined else " (no automatic fix)")
                carries = mined and id(node) == counts.first  # the others are fixed with it
                fix = (lambda positions, plan=counts: self._mining_fix(plan, positions)) if carries else None
                report = Report(self, node, message, fix)
                if not host_values:
                    self.criterion_only.add(id(report))
                yield report, False

    def _returned_to_recorders(self, function, class_node) -> bool:
        """Whether `function` (not the module's own code; a method of `class_node`, if given) is called here
        only where its result is summed, logged or dropped."""
        if isinstance(function, cst.Module):
            return False
        class_name = class_node.name.value if class_node is not None else None
        return self._returned_uses.only_recorded(function.name.value, class_name)

    def _called_elsewhere(self, function) -> bool:
        """Whether `function` (not the module's own code) has no caller in this file, on any object: its
        callers, if any, are in other files or outside the tree."""
        return not isinstance(function, cst.Module) and not self._returned_uses.called_here(function.name.value)

    def quiet_hooks(self, report: Report) -> FrozenSet[str]:
        # Lightning's progress bar reads every `prog_bar=True` value logged on step with
        # `.item()` at the end of each training batch: there `.detach()` saves no wait
        return _TRAINING_ONLY if id(report) in self._progress_bar else frozenset()

    def _log_fix(self, call, positions: Positions) -> Fix:
        return Fix(
            "Log the tensor: `.detach()` instead of `.item()`",
            (positions.replace(call.func.attr, "detach"),),
            Applicability.SAFE,
        )

    def _accumulation_fix(self, call, plan: AccumulationPlan, positions: Positions) -> Fix:
        receiver = self.context.module.code_for_node(call.func.value)
        content = f"{receiver}.detach()" if plan.detach else receiver
        after = positions.insert_lines_after(
            plan.loop,
            [f"{plan.name} = {plan.convert}({plan.name})"],
            self.context.newline,
            positions.indent_of(plan.loop),
        )
        applicability = Applicability.SAFE if plan.safe else Applicability.UNSAFE
        return Fix(
            f"Accumulate the tensor and read `{plan.name}` once after the loop",
            (positions.replace(call, content), after),
            applicability,
        )

    def _mining_fix(self, plan: MiningPlan, positions: Positions) -> Optional[Fix]:
        edits = []
        for node, text in plan.edits:
            if isinstance(text, tuple):  # lines at the statement's indentation
                indent = positions.indent_of(node)
                text = (self.context.newline + indent).join(
                    line for written in text for line in self._statement_lines(indent, written)
                )
            edits.append(positions.replace(node, text))
        # a statement its author split to keep the line length is not joined past it
        if not all(edit_fits(edit, positions.lines, self.context.config.line_length) for edit in edits):
            return None
        return Fix(
            "Keep the counts on the GPU: sort once and mask by rank, clamp for min/max, torch.where for the branch",
            tuple(edits),
            Applicability.UNSAFE,
        )

    def _statement_lines(self, indent: str, statement: str) -> List[str]:
        """A statement the fix writes, split as a formatter would when it is past the line length."""
        lines = None
        if width(indent + statement) > self.context.config.line_length:
            lines = split_statement(indent + statement, self.context.config.line_length)
        return [statement] if lines is None else [line[len(indent) :] for line in lines]

    def _unsafe_fix(self, call, whole, positions: Positions) -> Fix:
        if whole is call:
            edit = positions.replace(call.func.attr, "detach")
        else:
            receiver = self.context.module.code_for_node(call.func.value)
            edit = positions.replace(whole, f"{receiver}.detach().long()")
        return Fix("Keep the value on the GPU as a 0-dim tensor", (edit,), Applicability.UNSAFE)


_TRAINING_ONLY = frozenset({"training_step"})
