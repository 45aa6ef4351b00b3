"""The training-loop facts of one file, as the file record keeps them: per owner
(function, method or the module's own code, by qualified name) its loops, the calls it
makes and the criteria it calls (`torchlint.analysis.training_loops.loop_facts` builds
them, `torchlint.analysis.loop_graph.LoopGraph` decides over them).

Named tuples, their names interned when decoded: a parallel run's parent holds every
file's facts at once, and the same names recur across files.

Cost: encoding and decoding are linear in the facts.
"""

from __future__ import annotations

from sys import intern
from typing import Any, Dict, Mapping, NamedTuple, Tuple

MODULE_OWNER = "<module>"  # the owner name of a module's own code
# a callee standing for every owner of the name after it: a hook called by its name
# (`self.call_hook("after_train_step")` runs each registered hook's `after_train_step`)
DISPATCHED = "*."
# how a loop runs a training call outside its nested loops
NO_TRAINING, TRAINING_IN_BRANCH, TRAINING = 0, 1, 2


class Loop(NamedTuple):
    """One loop of an owner, in source order."""

    # NO_TRAINING, TRAINING_IN_BRANCH (only in a branch) or TRAINING (unconditionally),
    # counting the calls outside its nested loops
    training: int
    # the callees outside its nested loops, and anywhere in it
    near: Tuple[str, ...]
    calls: Tuple[str, ...]
    # under `no_grad` / `inference_mode` with no training call
    evaluation: bool
    # the index of the loop around it, or -1
    parent: int

    def to_json(self) -> list:
        return [self.training, list(self.near), list(self.calls), self.evaluation, self.parent]

    @classmethod
    def from_json(cls, data: list) -> "Loop":
        training, near, calls, evaluation, parent = data
        return cls(training, tuple(map(intern, near)), tuple(map(intern, calls)), evaluation, parent)


class Criterion(NamedTuple):
    """A call of an instance as an owner's criterion (`loss = criterion(out, y)`)."""

    # the absolute name of what the instance is built by
    source: str
    # the index of the innermost loop around the call, or -1
    loop: int
    # the callee as written (`criterion`, `self.criterion`)
    call: str

    def to_json(self) -> list:
        return [self.source, self.loop, self.call]

    @classmethod
    def from_json(cls, data: list) -> "Criterion":
        source, loop, call = data
        return cls(source, loop, call)


class OwnerLoops(NamedTuple):
    """What one owner runs."""

    # a training call outside its loops (a step function)
    step: bool
    # the callees anywhere, and outside its loops
    calls: Tuple[str, ...]
    flat: Tuple[str, ...]
    loops: Tuple[Loop, ...]
    criteria: Tuple[Criterion, ...] = ()
    # the callees it calls only now and then (`if step % 100 == 0: self._log(loss)`, `periodic_calls`)
    periodic: Tuple[str, ...] = ()

    def to_json(self) -> list:
        data = [self.step, list(self.calls), list(self.flat), [loop.to_json() for loop in self.loops]]
        if self.criteria or self.periodic:
            data.append([criterion.to_json() for criterion in self.criteria])
        if self.periodic:
            data.append(list(self.periodic))
        return data

    @classmethod
    def from_json(cls, data: list) -> "OwnerLoops":
        step, calls, flat, loops, *optional = data
        criteria, periodic = (optional + [(), ()])[:2]
        return cls(
            step,
            tuple(map(intern, calls)),
            tuple(map(intern, flat)),
            tuple(Loop.from_json(loop) for loop in loops),
            tuple(Criterion.from_json(item) for item in criteria),
            tuple(map(intern, periodic)),
        )


class LoopFacts(NamedTuple):
    """A file's owners worth keeping (qualified name -> what it runs), in source order."""

    owners: Mapping[str, OwnerLoops]

    def to_json(self) -> Dict[str, Any]:
        return {name: owner.to_json() for name, owner in self.owners.items()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "LoopFacts":
        return cls({intern(name): OwnerLoops.from_json(owner) for name, owner in data.items()})
