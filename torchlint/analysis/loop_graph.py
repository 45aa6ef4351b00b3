"""Deciding over training-loop facts (`torchlint.analysis.loop_facts`, of one file or of
the whole tree): which owners are step functions, which loops are hot, what a hot loop
or a step function reaches a few calls deep (with the route, for the message), and
which instances such code calls as its criterion. A module-level function named as a
training loss (`dice_loss`) that no owner of the tree calls is an origin too (a training
loop outside the tree runs it), after the others.

A hook called by name (`loop_facts.DISPATCHED`) stands for every owner of that name: it is
replaced by them when the graph is built, so a loop dispatching to its hooks calls each.

Cost: linear in the facts and in the owners hooks called by name stand for (one call per
dispatch and owner of the name): callee names are resolved once each (by their last part,
then a suffix match among the owners sharing it); the step owners are a worklist over
the reverse call graph; `hot_loop` is memoized per (owner, loop), each loop knowing its
children; the routes are a breadth-first search `MAX_DEPTH` calls deep.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from torchlint.analysis.loop_facts import (
    DISPATCHED, MODULE_OWNER, NO_TRAINING, TRAINING_IN_BRANCH, LoopFacts, OwnerLoops,
)
from torchlint.analysis.loss_paths import is_training_loss_name
from torchlint.analysis.module_names import suffix_matches

MAX_DEPTH = 3  # calls followed from a hot loop or a step function


@dataclass(frozen=True)
class LoopRoute:
    """How a training loop (`loop`: its owner, `None` for a step function itself), a
    step function or a loss function reaches an owner: `origin` the owner holding the loop,
    the step or the loss function, `via` the calls on the way (the reached owner last);
    `loss`: the origin is a loss function no owner of the tree calls."""

    origin: str
    loop: bool
    via: Tuple[str, ...]
    loss: bool = False

    def describe(self, origin_file: Optional[str] = None) -> str:
        """"" for a step function itself, else ", reached from the training loop in
        `Trainer.fit` via ..." (naming the origin's file when it is another one)."""
        if not self.via:
            return " (a loss function runs on every training step)" if self.loss else ""
        steps = " -> ".join(f"`{short_name(name)}`" for name in self.via)
        return f" (reached from {self.describe_origin(origin_file)} via {steps})"

    def describe_origin(self, origin_file: Optional[str] = None) -> str:
        """"the training loop in `Trainer.fit`" or "the step function `train_step`",
        with " of `train.py`" when the origin is in another file."""
        if self.loop:
            where = f"the training loop in {describe_owner(self.origin)}"
        else:
            kind = "loss" if self.loss else "step"
            where = f"the {kind} function `{short_name(self.origin)}`"
        return where + (f" of `{origin_file}`" if origin_file else "")


@dataclass(frozen=True)
class CriterionUse:
    """A hot loop or step function (`route.origin`) that calls an instance as its
    criterion (`call`: `criterion`, `self.criterion`): what the instance runs is loss code."""

    call: str
    route: LoopRoute

    def describe(self, origin_file: Optional[str] = None) -> str:
        return f" (called as `{self.call}` by {self.route.describe_origin(origin_file)}, whose backward pass it feeds)"


def short_name(qualified: str) -> str:
    """`pkg.train.Trainer.fit` -> `Trainer.fit`, `pkg.train.main` -> `main` (a capitalised
    part before the last is taken as the class)."""
    parts = qualified.split(".")
    if len(parts) >= 2 and parts[-2][:1].isupper():
        return ".".join(parts[-2:])
    return parts[-1]


def describe_owner(qualified: str) -> str:
    if qualified.endswith("." + MODULE_OWNER) or qualified == MODULE_OWNER:
        return "the script"  # a module's own code: a script's or a notebook's
    return f"`{short_name(qualified)}`"


def _loss_function(owner: str) -> bool:
    """A function of a module (no class around it) named as a training loss (`dice_loss`,
    `si_snr_loss`): it runs on every training step, wherever the training loop is."""
    parts = owner.split(".")
    return len(parts) >= 2 and not parts[-2][:1].isupper() and parts[-2] != MODULE_OWNER and is_training_loss_name(parts[-1])


class LoopGraph:
    """Training loops, step functions and what they reach, over some files' loop facts
    (`facts_by_file`: display path -> facts). `evaluation`: evaluation loops count too;
    `periodic`: so do the calls an owner makes only in a branch taken now and then."""

    def __init__(self, facts_by_file: Mapping[str, Optional[LoopFacts]], evaluation: bool = False,
                 bases: Optional[Callable[[str], List[str]]] = None, periodic: bool = False) -> None:
        self.owners: Dict[str, OwnerLoops] = {}
        self.files: Dict[str, str] = {}  # owner -> the display path of its file
        self._by_last: Dict[str, List[str]] = {}
        for display, facts in facts_by_file.items():
            for name, owner in (facts.owners.items() if facts is not None else ()):
                self.owners.setdefault(name, owner)
                self.files.setdefault(name, display)
                self._by_last.setdefault(name.rsplit(".", 1)[-1], []).append(name)
        self.owners = {name: self._dispatched(owner) for name, owner in self.owners.items()}
        self.evaluation = evaluation
        self.periodic = periodic
        self._resolved: Dict[str, Optional[str]] = {}
        self._hot: Dict[Tuple[str, int], bool] = {}
        self._children: Dict[str, List[List[int]]] = {}  # owner -> per loop, its child loops
        # `pkg.Base.update` when a subclass's `update` steps: `self.update()` in the base's loop runs an override
        self._stepping_overrides: Set[str] = set()
        self.steps = self._step_owners(bases)
        # callee name -> how a hot loop or step function calls it, resolved or not
        # (`pkg.Base.compute_loss`, which a subclass's override answers: `override_route`)
        self.called: Dict[str, LoopRoute] = {}
        self._inherited: Dict[Tuple[str, str], Optional[LoopRoute]] = {}
        self._reverse: Optional[Dict[str, List[str]]] = None
        self._called_names: Optional[Set[str]] = None
        self.routes = self._routes()
        self._criteria: Optional[Dict[str, CriterionUse]] = None

    def _dispatched(self, owner: OwnerLoops) -> OwnerLoops:
        """`owner` with each hook called by name (`DISPATCHED`) replaced by the owners of that name.
        Cost: O(its callees) when it calls none such, else O(its callees + the owners they stand for)."""
        if not any(callee.startswith(DISPATCHED) for callee in owner.calls):
            return owner

        def expanded(callees: Tuple[str, ...]) -> Tuple[str, ...]:
            found: Dict[str, None] = {}
            for callee in callees:
                named = self._by_last.get(callee[len(DISPATCHED):], ()) if callee.startswith(DISPATCHED) else (callee,)
                found.update(dict.fromkeys(named))
            return tuple(found)

        loops = tuple(loop._replace(near=expanded(loop.near), calls=expanded(loop.calls)) for loop in owner.loops)
        now_and_then = set(owner.periodic)
        steady = set(expanded(tuple(callee for callee in owner.calls if callee not in now_and_then)))
        periodic = tuple(callee for callee in expanded(owner.periodic) if callee not in steady)
        return owner._replace(calls=expanded(owner.calls), flat=expanded(owner.flat), loops=loops, periodic=periodic)

    def resolve(self, callee: str) -> Optional[str]:
        """The owner a callee name stands for (exactly, or the run's path being longer)."""
        if callee not in self._resolved:
            if callee in self.owners:
                found: Optional[str] = callee
            else:
                matches = [n for n in self._by_last.get(callee.rsplit(".", 1)[-1], ()) if suffix_matches(n, callee)]
                found = min(matches) if matches else None
            self._resolved[callee] = found
        return self._resolved[callee]

    def _step_owners(self, bases: Optional[Callable[[str], List[str]]]) -> Set[str]:
        """The owners that step themselves and, transitively, those that call one: a
        worklist over the reverse call graph (each `flat` callee resolved once). With
        `bases` (a class's bases over the tree), a method that steps also makes the name
        it overrides step (`pkg.Base.update` for `pkg.Impl.update`, and up the bases), so
        a base calling `self.update()` steps through its subclasses' override.

        Cost: O(owners + flat calls + classes x stepping method names): each overridden
        name is marked once, and a climb stops at a name already marked."""
        callers: Dict[str, List[str]] = {}
        for name, owner in self.owners.items():
            for callee in owner.flat:
                callers.setdefault(self.resolve(callee) or callee, []).append(name)
        steps = {name for name, owner in self.owners.items() if owner.step}
        queue = list(steps)
        while queue:
            stepping = queue.pop()
            reached = list(callers.get(stepping, ()))
            if bases is not None:
                reached += (caller for name in self._overridden(stepping, bases) for caller in callers.get(name, ()))
            for caller in reached:
                if caller not in steps:
                    steps.add(caller)
                    queue.append(caller)
        return steps

    def _overridden(self, method: str, bases: Callable[[str], List[str]]) -> List[str]:
        """The names `method` (`pkg.Impl.update`) overrides up its class's bases, newly marked
        in `_stepping_overrides` (a name already marked, and what is above it, was climbed)."""
        class_name, _, attribute = method.rpartition(".")
        found: List[str] = []
        pending = list(bases(class_name)) if class_name else []
        while pending:
            base = pending.pop()
            name = f"{base}.{attribute}"
            if name not in self._stepping_overrides:
                self._stepping_overrides.add(name)
                found.append(name)
                pending.extend(bases(base))
        return found

    def hot_loop(self, owner: str, index: int) -> bool:
        """Whether loop `index` of `owner` is hot. Cost: memoized per (owner, loop); a
        loop is decided once, from its own calls and its children's answers."""
        key = (owner, index)
        hot = self._hot.get(key)
        if hot is None:
            hot = self._hot[key] = self._hot_loop(owner, index)
        return hot

    def _hot_loop(self, owner: str, index: int) -> bool:
        facts = self.owners.get(owner)
        if facts is None or index >= len(facts.loops):
            return False
        loops = facts.loops
        loop = loops[index]
        training = loop.training
        if training == TRAINING_IN_BRANCH and any(self.hot_loop(owner, i) for i in self._child_loops(owner)[index]):
            # an epoch loop: its batches train in a nested loop, and a step in a branch
            # after it finishes a last partial accumulation (`if not did_step: opt.step()`)
            training = NO_TRAINING
        return bool(training or (self.evaluation and loop.evaluation) or any(self._steps(c) for c in loop.near))

    def _steps(self, callee: str) -> bool:
        """Whether calling `callee` steps an optimizer: it resolves to a step owner, or a
        subclass's override of it does."""
        return self.resolve(callee) in self.steps or callee in self._stepping_overrides

    def _child_loops(self, owner: str) -> List[List[int]]:
        """Per loop of `owner`, the later loops whose parent it is, in order."""
        children = self._children.get(owner)
        if children is None:
            loops = self.owners[owner].loops
            children = self._children[owner] = [[] for _ in loops]
            for i, loop in enumerate(loops):
                if 0 <= loop.parent < i:
                    children[loop.parent].append(i)
        return children

    def _routes(self) -> Dict[str, LoopRoute]:
        routes: Dict[str, LoopRoute] = {}
        frontier: List[Tuple[str, LoopRoute]] = []
        for name in sorted(self.owners):
            facts = self.owners[name]
            if name in self.steps:
                routes[name] = LoopRoute(name, False, ())
                frontier.extend((c, LoopRoute(name, False, ())) for c in self._every_step(facts, facts.calls))
            for index, loop in enumerate(facts.loops):
                if self.hot_loop(name, index):
                    frontier.extend((c, LoopRoute(name, True, ())) for c in self._every_step(facts, loop.calls))
        self._follow(frontier, routes)
        # then the loss functions no code of the tree calls (a training loop elsewhere runs them); the tree's
        # callers decide the others, and what a hot loop reached keeps its route
        called = {self.resolve(c) for owner in self.owners.values() for c in owner.calls}
        frontier = []
        for name in sorted(self.owners):
            if _loss_function(name) and name not in routes and name not in called:
                routes[name] = LoopRoute(name, False, (), loss=True)
                facts = self.owners[name]
                frontier.extend((c, routes[name]) for c in self._every_step(facts, facts.calls))
        self._follow(frontier, routes)
        return routes

    def _follow(self, frontier: List[Tuple[str, LoopRoute]], routes: Dict[str, LoopRoute]) -> None:
        """Breadth first from `frontier` (callee, route to its caller), `MAX_DEPTH` calls, into
        the owners no route reached yet."""
        for _ in range(MAX_DEPTH):
            following = []
            for callee, route in frontier:
                self.called.setdefault(callee, route)
                target = self.resolve(callee)
                if target is None or target in routes:
                    continue
                reached = replace(route, via=route.via + (target,))
                routes[target] = reached
                facts = self.owners[target]
                following.extend((c, reached) for c in self._every_step(facts, facts.calls))
            frontier = following

    def _every_step(self, facts: OwnerLoops, callees: Tuple[str, ...]) -> Sequence[str]:
        """The `callees` of an owner (`facts`) that it runs whenever it runs: unless `periodic`, not those
        it calls only in a branch taken now and then (`OwnerLoops.periodic`) and that step no optimizer.
        Cost: O(callees)."""
        if self.periodic or not facts.periodic:
            return callees
        now_and_then = set(facts.periodic)
        return [callee for callee in callees if callee not in now_and_then or self._steps(callee)]

    def route(self, owner: str) -> Optional[LoopRoute]:
        """How a hot loop or step function reaches `owner` (itself, for a step function)."""
        return self.routes.get(owner)

    def override_route(self, owner: str, bases: Callable[[str], List[str]]) -> Optional[LoopRoute]:
        """How a hot loop or step function reaches a method `owner` (`pkg.Impl.compute_loss`)
        that overrides one it calls on a base (`self.compute_loss(...)` in `pkg.Base.update`
        runs the override on an `Impl`); `bases`: a class's bases over the tree.
        Cost: O(1) for a method name no hot code calls; otherwise memoized per (class, method),
        each answer O(the class's bases)."""
        class_name, _, method = owner.rpartition(".")
        if method not in self._called_methods():
            return None  # no hot code calls a method of that name: no base to climb to
        route = self._inherited_call(class_name, method, bases)
        return None if route is None else replace(route, via=route.via + (owner,))

    def reached_route(self, owner: str, bases: Callable[[str], List[str]]) -> Optional[LoopRoute]:
        """How a hot loop or step function reaches `owner`: directly, as an override (`override_route`),
        or through the calls an override makes on `self` (`pkg.Impl.compute_loss` overrides what a
        base's loop calls and calls `self._record(...)`, the owner): a breadth-first search up the
        callers in the owner's class, at most `MAX_DEPTH` calls, for the first one reached.
        Cost: O(the callers within that depth) per owner asked, the reverse call graph built once
        (O(owners + calls))."""
        route = self.routes.get(owner) or self.override_route(owner, bases)
        if route is not None or "." not in owner:
            return route
        below: Dict[str, str] = {owner: ""}  # caller -> the owner it calls on the way down
        frontier = [owner]
        for _ in range(MAX_DEPTH):
            following = []
            for callee in frontier:
                for caller in self._callers().get(callee, ()):
                    if caller in below:
                        continue
                    below[caller] = callee
                    found = self.routes.get(caller) or self.override_route(caller, bases)
                    if found is not None:
                        return replace(found, via=found.via + self._path_down(caller, below))
                    following.append(caller)
            frontier = following
        return None

    def _path_down(self, caller: str, below: Mapping[str, str]) -> Tuple[str, ...]:
        path = []
        while below[caller]:
            caller = below[caller]
            path.append(caller)
        return tuple(path)

    def _callers(self) -> Dict[str, List[str]]:
        """Method -> the methods of its own class that call it (each callee resolved once): the
        calls an override makes on `self`."""
        if self._reverse is None:
            self._reverse = {}
            for name, owner in self.owners.items():
                for callee in self._every_step(owner, owner.calls):
                    target = self.resolve(callee)
                    if target is not None and target != name and target.rpartition(".")[0] == name.rpartition(".")[0]:
                        self._reverse.setdefault(target, []).append(name)
        return self._reverse

    def _called_methods(self) -> Set[str]:
        """The last parts of the names hot code calls (`compute_loss` of `pkg.Base.compute_loss`)."""
        if self._called_names is None:
            self._called_names = {callee.rpartition(".")[2] for callee in self.called}
        return self._called_names

    def _inherited_call(self, class_name: str, method: str, bases: Callable[[str], List[str]]) -> Optional[LoopRoute]:
        key = (class_name, method)
        if key not in self._inherited:
            self._inherited[key] = None  # a cycle of bases finds nothing
            found = None
            for base in bases(class_name):
                found = self.called.get(f"{base}.{method}") or self._inherited_call(base, method, bases)
                if found is not None:
                    break
            self._inherited[key] = found
        return self._inherited[key]

    def criteria(self) -> Dict[str, CriterionUse]:
        """The names of what instances called as the criterion of a hot loop or a step
        function are built by (a class of the tree, if the class graph finds one), each with
        its first use: in a loop that is hot or inside one, or anywhere in a step function."""
        if self._criteria is None:
            self._criteria = {}
            for name in sorted(self.owners):
                for criterion in self.owners[name].criteria:
                    loop = self._in_hot_loop(name, criterion.loop)
                    if (loop or name in self.steps) and criterion.source not in self._criteria:
                        self._criteria[criterion.source] = CriterionUse(criterion.call, LoopRoute(name, loop, ()))
        return self._criteria

    def _in_hot_loop(self, owner: str, index: int) -> bool:
        loops = self.owners[owner].loops
        while 0 <= index < len(loops):
            if self.hot_loop(owner, index):
                return True
            index = loops[index].parent
        return False
