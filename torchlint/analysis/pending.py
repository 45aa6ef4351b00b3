"""Findings that wait for other files, and the closed set of conditions they wait on.

A rule that cannot decide a finding from its file alone records it as a `Pending`: the
finding as it would be reported (position, `# noqa` and fix already resolved) and the
condition under which the project pass keeps it. `torchlint.index.resolver` decides
every condition, once every file's record is known. A rule never decides in the
project pass by itself, and a condition is one of the kinds below, nothing else:

- `ClassIs`: the class resolves to a module (or an RNN layer) through bases in any file;
- `ModelInput` / `SkipInput`: a module's input is its callers' (TL002's two questions
  about who calls a module, and with what);
- `HotPathReaches` / `LoopReaches`: a hot path (or a training loop) of the tree runs
  the method (or function) the finding is in;
- `SecondOrderReaches`: a parameter (or name) differentiated twice receives the RNN
  layer the finding is about;
- `ImportNotKeptElsewhere`: the heavy module is not still imported elsewhere on import;
- `SourceLoadedUnrestricted`: whether another file loads the same checkpoint source
  with `weights_only=False` or saves a whole object there, which picks the finding's
  wording and fix;
- `NameNotTakenElsewhere`: whether another file imports the name from this file (then
  an import that looks unused here stays).

Cost: encoding and decoding are linear in the findings and their conditions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, Mapping, Optional, Tuple, Type

from torchlint.core.diagnostics import Diagnostic


@dataclass(frozen=True)
class ClassIs:
    """The class resolves to `kind`: "module" (by its bases; if they stay unknown, by a
    `forward` method) or "rnn" (it inherits a torch RNN layer)."""

    class_name: str
    kind: str


@dataclass(frozen=True)
class ModelInput:
    """The class is a module that no class of the tree uses as a block."""

    class_name: str


@dataclass(frozen=True)
class SkipInput:
    """The class is a module that some caller does not pass its own layers' outputs
    for these `forward` parameters (`(position or None, name)` pairs)."""

    class_name: str
    parameters: Tuple[Tuple[Optional[int], str], ...]


@dataclass(frozen=True)
class HotPathReaches:
    """A hot path reaches `class_name.method`. `lightning_fix`: the fix holds only when a
    Lightning step reaches it; `quiet_hooks`: the hot methods it does not hold for;
    `criterion`: kept only where a training loop calls an instance as its criterion."""

    class_name: str
    method: str
    lightning_fix: bool
    quiet_hooks: FrozenSet[str] = frozenset()
    criterion: bool = False


@dataclass(frozen=True)
class LoopReaches:
    """A hot training loop encloses the finding (one of the `enclosing` loops of `owner`,
    by index) or reaches `owner`; `where` is how the message names the owner."""

    owner: str
    enclosing: Tuple[int, ...]
    where: str


@dataclass(frozen=True)
class RnnLayerNote:
    """What a TL004 message says of an RNN layer: its call's label (`nn.LSTM`), its
    projection (`proj_size=64`) if any, and why it gets no fix, if it gets none."""

    label: str
    projection: Optional[str]
    no_fix: Optional[str]


@dataclass(frozen=True)
class SecondOrderReaches:
    """A double-backward site of the tree reaches the RNN layer the finding is about:
    `layer` (label, projection, why no fix), held by `holders` of its file;
    `module_class`: the layer is held by a module class of its file; `class_name`: the
    layer's class, which must resolve to an RNN layer."""

    class_name: str
    layer: RnnLayerNote
    holders: Tuple[str, ...]
    module_class: bool


@dataclass(frozen=True)
class ImportNotKeptElsewhere:
    """No module this file imports at import time (directly or through others) keeps
    importing `module` at import time."""

    module: str


@dataclass(frozen=True)
class SourceLoadedUnrestricted:
    """If another file loads checkpoint `source` with `weights_only=False` or saves a whole
    object to it, report `otherwise` instead (with `{where}` in its message saying so and
    naming that file)."""

    source: str
    otherwise: Diagnostic


@dataclass(frozen=True)
class NameNotTakenElsewhere:
    """If another file takes `name` from this file's module (`from pkg import name`,
    `pkg.name`), report `otherwise` instead (with `{where}` in its message naming that file)."""

    name: str
    otherwise: Diagnostic


Condition = Any  # one of CONDITIONS
CONDITIONS: Tuple[Type, ...] = (
    ClassIs, ModelInput, SkipInput, HotPathReaches, LoopReaches, SecondOrderReaches, ImportNotKeptElsewhere,
    SourceLoadedUnrestricted, NameNotTakenElsewhere,
)
_BY_NAME: Dict[str, Type] = {kind.__name__: kind for kind in CONDITIONS}


@dataclass(frozen=True)
class Pending:
    """A finding kept if its condition holds once every file is known."""

    diagnostic: Diagnostic
    condition: Condition

    def to_json(self) -> list:
        return [self.diagnostic.to_json(), type(self.condition).__name__, _condition_json(self.condition)]

    @classmethod
    def from_json(cls, data: list) -> "Pending":
        diagnostic, kind, fields = data
        return cls(Diagnostic.from_json(diagnostic), _condition(_BY_NAME[kind], fields))


def _condition_json(condition: Condition) -> Dict[str, Any]:
    data = dict(vars(condition))
    if isinstance(condition, HotPathReaches):
        data["quiet_hooks"] = sorted(condition.quiet_hooks)
    elif isinstance(condition, (SourceLoadedUnrestricted, NameNotTakenElsewhere)):
        data["otherwise"] = condition.otherwise.to_json()
    elif isinstance(condition, SecondOrderReaches):
        data["layer"] = list(vars(condition.layer).values())
    return data


def _condition(kind: Type, fields: Mapping[str, Any]) -> Condition:
    data = dict(fields)
    if kind is HotPathReaches:
        data["quiet_hooks"] = frozenset(data["quiet_hooks"])
    elif kind in (SourceLoadedUnrestricted, NameNotTakenElsewhere):
        data["otherwise"] = Diagnostic.from_json(data["otherwise"])
    elif kind is SkipInput:
        data["parameters"] = tuple(tuple(pair) for pair in data["parameters"])
    elif kind in (LoopReaches, SecondOrderReaches):
        key = "enclosing" if kind is LoopReaches else "holders"
        data[key] = tuple(data[key])
    if kind is SecondOrderReaches:
        data["layer"] = RnnLayerNote(*data["layer"])
    return kind(**data)
