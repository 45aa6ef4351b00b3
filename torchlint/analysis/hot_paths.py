"""Hot paths: what a hot path runs, across the classes of the whole linted tree.

Which classes are modules (with `torchlint.analysis.modules.ClassIndex`), which methods a
hot path reaches (`forward` of a module, the `*_step` hooks of a LightningModule,
`forward`/`backward` of an `autograd.Function`, and the `self.method(...)` calls they
make, a few calls deep, through the class and its bases in any file), and the base of
the rules that report what a hot path reaches (TL003, TL005).

The class facts come from the stdlib ast of every file
(`torchlint.analysis.class_graph`), gated or not, so a base defined in a file no rule
parses with LibCST still resolves; they are the `classes` of each file's record
(`torchlint.index.record`), and the project pass builds one `Reach` from all of them
(`torchlint.index.project.ProjectIndex.reach`).

A module's methods named as a training loss (`loss`, `loss_by_feat`) that no method of the
tree calls are hot paths too: a runner outside the tree (mmengine's) calls them; they are
walked last, and leave what another hot path reached as it was. So is a module's
`train_step` that no method of the tree calls (OpenMMLab's runners call it), walked from
each class that runs it, as `forward` is.

Cost: `lookup` and `inherits` are memoized per class (each class costs O(bases));
`_walk` is a breadth-first search at most 3 calls deep per origin class; the call targets
(for the loss methods) one lookup per call of the index.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple

from torchlint.analysis.class_graph import SUBMODULE_CALL
from torchlint.analysis.flow_graph import InstanceFlow
from torchlint.analysis.instance_flow import PARAM
from torchlint.analysis.loss_paths import CRITERION_METHODS, is_training_loss_name
from torchlint.analysis.loop_graph import CriterionUse, LoopGraph
from torchlint.analysis.loop_reach import loop_findings
from torchlint.core.config import Config
from torchlint.core.diagnostics import Diagnostic
from torchlint.analysis.modules import LIGHTNING_STEPS, ClassFacts, ClassIndex, Kind
from torchlint.analysis.pending import HotPathReaches, Pending

MAX_DEPTH = 3  # self-calls followed from a hot path


def _trl_names(trainers: Sequence[str]) -> FrozenSet[str]:
    """The names trl exports its trainers under (`trl.DPOTrainer`, `trl.trainer.DPOTrainer`,
    `trl.trainer.dpo_trainer.DPOTrainer`, and the same under `trl.experimental.dpo`)."""
    names = set()
    for trainer in trainers:
        short = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", trainer[: -len("Trainer")]).lower()
        for package in ("trl.trainer", f"trl.experimental.{short}"):
            names.update((f"{package}.{trainer}", f"{package}.{short}_trainer.{trainer}"))
        names.add(f"trl.{trainer}")
    return frozenset(names)


# trl's preference trainers call `get_batch_loss_metrics` (which subclasses override) from `compute_loss`
TRL_PREFERENCE_TRAINERS = _trl_names(("DPOTrainer", "KTOTrainer", "ORPOTrainer", "CPOTrainer", "BCOTrainer"))
TRL_BATCH_METRICS = "get_batch_loss_metrics"
# a Hugging Face `Trainer` subclass runs these on every training step; trl's trainers are ones
TRL_TRAINERS = TRL_PREFERENCE_TRAINERS | _trl_names(
    ("SFTTrainer", "RewardTrainer", "GRPOTrainer", "RLOOTrainer", "OnlineDPOTrainer", "XPOTrainer", "NashMDTrainer",
     "GKDTrainer", "PRMTrainer", "PPOTrainer", "IterativeSFTTrainer", "DistillationTrainer")
)
HF_TRAINERS = frozenset({"transformers.Trainer", "transformers.trainer.Trainer"}) | TRL_TRAINERS
HF_TRAINER_STEPS = ("training_step", "compute_loss")
# Methods that run on every training batch whatever class defines them: Lightning's name for the step (a task
# object the LightningModule's own step delegates to, a custom trainer's step), the per-batch hooks of
# Lightning's modules and callbacks, and the per-iteration callbacks of Avalanche's strategies and plugins
PER_BATCH_HOOKS = (
    "training_step",
    "on_train_batch_start", "on_train_batch_end", "on_before_backward", "on_after_backward",
    "on_before_optimizer_step",
    "before_training_iteration", "after_training_iteration", "before_backward", "after_backward",
)
# OpenMMLab's runners (mmcv's EpochBasedRunner and IterBasedRunner, mmengine's loops) call a model's
# `train_step(data, optimizer)` on every iteration
RUNNER_STEP = "train_step"
# mmcv-era OpenMMLab models (mmdet 2, mmseg 0.x, mmrotate 0.x) run a detector's, segmentor's or head's
# `forward_train` from `forward(return_loss=True)` on every iteration, as `forward` is
TRAINING_FORWARD = "forward_train"
# A metric's `update` runs on every batch: the training step calls it (torchmetrics, Ignite), or a
# per-iteration plugin does (Avalanche); `compute` / `result` run once per epoch
METRIC_BASES = frozenset(
    {
        "torchmetrics.Metric", "torchmetrics.metric.Metric",
        "ignite.metrics.Metric", "ignite.metrics.metric.Metric",
        "avalanche.evaluation.Metric", "avalanche.evaluation.metric_definitions.Metric",
        "avalanche.evaluation.PluginMetric", "avalanche.evaluation.metric_definitions.PluginMetric",
        "avalanche.evaluation.GenericPluginMetric", "avalanche.evaluation.metric_definitions.GenericPluginMetric",
    }
)
METRIC_UPDATE = "update"
# a project's own metric classes keep the same protocol: an instance updated on every batch and reset
# between epochs, in a class named as a metric or inheriting one (baal's `Metrics` and its `ECE`, `Accuracy`)
METRIC_PROTOCOL = (METRIC_UPDATE, "reset")
METRIC_NAME_ENDINGS = ("Metric", "Metrics")


def _metric_named(qualified: str) -> bool:
    return qualified.rsplit(".", 1)[-1].endswith(METRIC_NAME_ENDINGS)


AUTOGRAD_FUNCTIONS = frozenset(
    {"torch.autograd.Function", "torch.autograd.function.Function", "torch.autograd.function.InplaceFunction"}
)


# ---- hot paths and what they reach -------------------------------------------------


@dataclass(frozen=True)
class Route:
    """How a hot path reaches a method: the class whose instance runs it (`origin`), the
    hot method (`hot`), the methods called on the way (`via`, the reached one last),
    whether any hot path reaching it is a Lightning step (`lightning`), and the names of
    all the hot methods that reach it (`hooks`); `loss_method`: the hot method is a module's
    loss method no code of the tree calls (`Reach.loss_methods`)."""

    origin: str
    hot: str
    via: Tuple[str, ...]
    lightning: bool
    hooks: FrozenSet[str] = frozenset()
    loss_method: bool = False

    def describe(self) -> str:
        """"" for a hot path itself, else ", reached from `Model.training_step` via ..."."""
        if not self.via:  # the hot path itself; a metric's `update` and a module's loss say why they are one
            if self.hot == METRIC_UPDATE:
                return " (a metric's `update` runs on every batch it measures)"
            if self.hot == RUNNER_STEP:
                return " (OpenMMLab's runners call a module's `train_step` on every iteration)"
            if self.hot == TRAINING_FORWARD:
                return " (a module's `forward_train` runs on every training step)"
            if self.hot == TRL_BATCH_METRICS:
                return " (trl's preference trainers call it from `compute_loss` on every training step)"
            return " (a module's loss method runs on every training step)" if self.loss_method else ""
        steps = " -> ".join(f"`{name}`" for name in self.via)
        return f" (reached from `{self.origin.rsplit('.', 1)[-1]}.{self.hot}` via {steps})"


class Reach:
    """The methods that hot paths reach, over a set of files' class graphs. With
    `decided_only`, classes whose kind depends on classes not in the set are no origin
    (a single file's view: the rest waits for the project pass)."""

    def __init__(
        self,
        index: ClassIndex,
        calls: Mapping[str, Mapping[str, Sequence[str]]],
        decided_only: bool = False,
        depth: int = MAX_DEPTH,
        skipped: Optional[Mapping[str, Mapping[str, Sequence[str]]]] = None,
    ) -> None:
        self.index = index
        self.calls = calls
        # class -> method -> the calls of `calls` not followed (made only now and then)
        self.skipped = {
            name: {method: frozenset(callees) for method, callees in methods.items()}
            for name, methods in (skipped or {}).items()
        }
        self.decided_only = decided_only
        self.depth = depth
        self._lookups: Dict[Tuple[str, str], Optional[str]] = {}
        self._inheritance: Dict[Tuple[str, object], bool] = {}  # `_any_base`'s answers
        self._defined: Set[str] = {method for facts in index.classes.values() for method in facts.methods}
        self._routes: Optional[Dict[Tuple[str, str], Route]] = None

    def route(self, class_name: str, method_name: str) -> Optional[Route]:
        """The shortest route from a hot path to `class_name.method_name`, or None."""
        if self._routes is None:
            self._routes = self._all_routes()
        return self._routes.get((class_name, method_name))

    def hot_methods(self, facts: ClassFacts) -> List[Tuple[str, bool]]:
        """The hot paths an instance of the class runs: (method name, is a Lightning step)."""
        hot: List[Tuple[str, bool]] = []
        decided = not (self.decided_only and self.index.kind(facts.name) is Kind.UNKNOWN)
        if decided:
            if self.index.is_module(facts):
                hot.append(("forward", False))
                if self.lookup(facts.name, TRAINING_FORWARD) is not None:
                    hot.append((TRAINING_FORWARD, False))
                runner_step = self.lookup(facts.name, RUNNER_STEP)
                if runner_step is not None and (runner_step, RUNNER_STEP) not in self._called:
                    hot.append((RUNNER_STEP, False))
            if self.index.is_lightning(facts):
                hot.extend((step, True) for step in LIGHTNING_STEPS)
        if self._inherits(facts, AUTOGRAD_FUNCTIONS):
            hot.extend((("forward", False), ("backward", False)))
        if self._inherits(facts, HF_TRAINERS):
            hot.extend((step, False) for step in HF_TRAINER_STEPS)
        if self._inherits(facts, TRL_PREFERENCE_TRAINERS):
            hot.append((TRL_BATCH_METRICS, False))
        if self._is_metric(facts):
            hot.append((METRIC_UPDATE, False))
        if decided:  # a hook the class inherits runs the instance's own methods too
            named = {name for name, _ in hot}
            hot.extend(
                (hook, False)
                for hook in PER_BATCH_HOOKS
                if hook not in named and self.lookup(facts.name, hook) is not None
            )
        return hot

    def is_metric(self, class_name: str) -> bool:
        """Whether the class is a metric (`_is_metric`, through the index)."""
        facts = self.index.find(class_name)
        return facts is not None and self._is_metric(facts)

    def _is_metric(self, facts: ClassFacts) -> bool:
        """Whether the class inherits one of `METRIC_BASES`, or is a metric of the project's own: its
        instances run an `update` and a `reset` the index defines (`METRIC_PROTOCOL`) and it or a base
        it inherits is named `...Metric` or `...Metrics`. Cost: O(its bases), memoised per class."""
        if self._inherits(facts, METRIC_BASES):
            return True
        if not all(self.lookup(facts.name, method) is not None for method in METRIC_PROTOCOL):
            return False
        return _metric_named(facts.name) or self._any_base(facts, METRIC_NAME_ENDINGS, _metric_named)

    def bases(self, class_name: str) -> List[str]:
        """The classes of the index that `class_name` names as its bases, in order (empty for a
        class the index does not know). Cost: O(its bases)."""
        facts = self.index.find(class_name)
        found = (self.index.find(base) for base in (facts.bases if facts is not None else ()) if base is not None)
        return [parent.name for parent in found if parent is not None]

    def _inherits(self, facts: ClassFacts, targets: frozenset) -> bool:
        """Whether the class has one of `targets` among its bases, through the index."""
        return self._any_base(facts, targets, targets.__contains__)

    def _any_base(self, facts: ClassFacts, key, test: Callable[[str], bool]) -> bool:
        """Whether `test` holds for a base of the class, or of a class of the index it inherits (each
        class answered once per `key`, what names the test; a cycle of bases adds nothing)."""
        memo_key = (facts.name, key)
        if memo_key not in self._inheritance:
            self._inheritance[memo_key] = False  # what a cycle back to this class adds
            self._inheritance[memo_key] = any(
                test(base) or (found is not None and self._any_base(found, key, test))
                for base, found in ((base, self.index.find(base)) for base in facts.bases if base is not None)
            )
        return self._inheritance[memo_key]

    def lookup(self, class_name: str, method_name: str) -> Optional[str]:
        """The class that defines the method an instance of `class_name` runs (its own,
        else its bases', depth first as in single inheritance), or None. Memoised per
        class and method; a name no class of the index defines costs nothing."""
        if method_name not in self._defined:
            return None  # an attribute called like a method (`self.conv(x)`), or a method from outside
        key = (class_name, method_name)
        if key not in self._lookups:
            self._lookups[key] = None  # a cycle of bases finds nothing
            self._lookups[key] = self._lookup(class_name, method_name)
        return self._lookups[key]

    def _lookup(self, class_name: str, method_name: str) -> Optional[str]:
        facts = self.index.find(class_name)
        if facts is None:
            return None
        if method_name in facts.methods:
            return facts.name
        for base in facts.bases:
            if base is not None:
                found = self.lookup(base, method_name)
                if found is not None:
                    return found
        return None

    def loss_methods(self, facts: ClassFacts) -> List[str]:
        """A module's methods named as a training loss (`loss`, `loss_by_feat`, `compute_loss`):
        code outside the tree (a framework's runner: mmengine's `model(data, mode='loss')`)
        calls them on every training step."""
        if (self.decided_only and self.index.kind(facts.name) is Kind.UNKNOWN) or not self.index.is_module(facts):
            return []
        return [name for name in facts.methods if is_training_loss_name(name)]

    def _all_routes(self) -> Dict[Tuple[str, str], Route]:
        routes: Dict[Tuple[str, str], Route] = {}
        for facts in self.index.classes.values():
            for hot, lightning in self.hot_methods(facts):
                owner = self.lookup(facts.name, hot)
                if owner is not None:
                    self._walk(facts.name, hot, lightning, owner, routes)
        # then a module's loss methods that no code of the tree calls (the tree's callers decide the others:
        # a loss only an epoch hook calls is not per step), walked only where no hot path reached first
        called = self._called
        for facts in self.index.classes.values():
            for name in self.loss_methods(facts):
                owner = self.lookup(facts.name, name)
                if owner is not None and (owner, name) not in called and (owner, name) not in routes:
                    self._walk(facts.name, name, False, owner, routes, fallback=True)
        return routes

    @cached_property
    def _called(self) -> Set[Tuple[str, str]]:
        """(class defining it, method) of every call a method of the tree makes on `self`, on a
        submodule or by handing a bound method on; computed once. Cost: one lookup per call of the index."""
        targets: Set[Tuple[str, str]] = set()
        for class_name, by_method in self.calls.items():
            for callees in by_method.values():
                for callee in callees:
                    held, _, method = callee.rpartition(SUBMODULE_CALL)
                    defined = self.lookup(held or class_name, method)
                    if defined is not None:
                        targets.add((defined, method))
        return targets

    def _walk(self, origin: str, hot: str, lightning: bool, owner: str, routes: Dict, fallback: bool = False) -> None:
        """Breadth first from one hot path; which method `self.name()` runs depends on the
        instance's class (`origin`, or the class of the submodule a method was called on),
        so each origin walks on its own. A `fallback` walk (from a loss method) leaves what
        another hot path reached as it was."""
        seen: Set[Tuple[str, str]] = set()
        # (the instance's class, the class defining the method, the method, the calls on the way)
        frontier: List[Tuple[str, str, str, Tuple[str, ...]]] = [(origin, owner, hot, ())]
        for level in range(self.depth + 1):
            following = []
            for instance, owner_name, method_name, via in frontier:
                key = (owner_name, method_name)
                if key in seen or (fallback and key in routes):
                    continue
                seen.add(key)
                known = routes.get(key)
                hooks = frozenset({hot}) | (known.hooks if known is not None else frozenset())
                if known is None or len(via) < len(known.via):
                    routes[key] = Route(origin, hot, via, lightning or (known is not None and known.lightning), hooks,
                                        fallback)
                else:
                    routes[key] = replace(known, lightning=known.lightning or lightning, hooks=hooks)
                if level == self.depth:
                    continue
                skipped = self.skipped.get(owner_name, {}).get(method_name, ())
                for callee in self.calls.get(owner_name, {}).get(method_name, ()):
                    if callee in skipped:
                        continue
                    held, _, method = callee.rpartition(SUBMODULE_CALL)
                    receiver = held or instance  # a submodule's method runs on the submodule
                    defined = self.lookup(receiver, method)
                    if defined is not None:
                        step = f"{held.rsplit('.', 1)[-1]}.{method}" if held else method
                        following.append((receiver, defined, method, via + (step,)))
            frontier = following


# ---- rules that report what a hot path reaches (TL003, TL005) ----------------------


def criterion_methods(reach: Reach, loops: LoopGraph, flow: Optional[InstanceFlow] = None) -> Dict[Tuple[str, str], CriterionUse]:
    """(class, method) -> how a hot loop uses it as its criterion: the `forward` or
    `__call__` an instance of a class of the tree runs (its own or a base's). With the
    tree's instance `flow`, a criterion that is a parameter of the loop's owner is what its
    callers pass (`train(model, loader, FocalLoss())`), and one a factory builds is what
    the factory returns (`criterion = build_loss(cfg)`).
    Cost: one class lookup per source; with `flow`, its `instances_into` / `returned` per
    parameter or function source."""
    found: Dict[Tuple[str, str], CriterionUse] = {}
    for source, use in loops.criteria().items():
        for built in _criterion_sources(source, flow):
            facts = reach.index.find(built)
            if facts is None:
                continue  # a function's result, or a class from outside the tree
            for method in CRITERION_METHODS:
                owner = reach.lookup(facts.name, method)
                if owner is not None:
                    found.setdefault((owner, method), use)
    return found


def _criterion_sources(source: str, flow: Optional[InstanceFlow]) -> Set[str]:
    if flow is None:
        return {source}
    if source.startswith(PARAM):  # `param:NAME@FUNCTION`
        name, _, function = source[len(PARAM):].partition("@")
        return flow.instances_into(function, name)[0]
    return flow.returned(source, 0)


def hot_path_findings(project, pending: Sequence[Tuple[str, Pending]], rule: type, config: Config) -> List[Diagnostic]:
    """The findings of a hot-path rule that wait for the tree (`HotPathReaches`,
    `LoopReaches`; `pending`: (display path, pending) pairs) that it reaches."""
    options = config.options_for(rule.name)
    periodic = bool(options.get("check-periodic-branches", False))
    reach = project.reach(periodic)
    loops = None
    criteria: Dict[Tuple[str, str], CriterionUse] = {}
    if rule.training_loops:
        loops = project.loops(bool(options.get("check-evaluation-loops", False)), periodic)
        criteria = criterion_methods(reach, loops, project.flow)
    found = []
    for display, item in pending:
        candidate, diagnostic = item.condition, item.diagnostic
        if not isinstance(candidate, HotPathReaches):
            continue
        route = reach.route(candidate.class_name, candidate.method)
        use = criteria.get((candidate.class_name, candidate.method))
        if use is not None and (candidate.criterion or route is None):
            origin_file = loops.files.get(use.route.origin)
            message = diagnostic.message + use.describe(origin_file if origin_file != display else None)
            found.append(replace(diagnostic, message=message, fix=None if candidate.lightning_fix else diagnostic.fix))
            continue
        if candidate.criterion or route is None or (candidate.quiet_hooks and route.hooks <= candidate.quiet_hooks):
            continue
        fix = None if candidate.lightning_fix and not route.lightning else diagnostic.fix
        found.append(replace(diagnostic, message=diagnostic.message + route.describe(), fix=fix))
    if loops is not None:
        seen = {(d.filename, d.location, d.cell) for d in found}
        for diagnostic in loop_findings(pending, loops, reach.bases):
            if (diagnostic.filename, diagnostic.location, diagnostic.cell) not in seen:
                found.append(diagnostic)
    return found
