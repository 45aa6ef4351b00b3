"""What the project pass knows of one file: one typed record, built once per file.

The per-file pass fills a `FileRecord`: the stdlib-ast facts of the selected rules
(`Rule.ast_facts`), then what the rules' LibCST pass adds (`RuleContext.record`), among
it the findings that wait for other files (`Pending`). The record is what the cache
keeps of a file and what a parallel run's parent holds until the project pass: one JSON
text per file (`to_json` / `from_json`, the only place its shape is written down),
decoded once per project pass (`torchlint.index.project.ProjectIndex`).

Each section is empty where no selected rule asked for it.

Cost: encoding and decoding are linear in the record.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Mapping, Optional, Tuple

from torchlint.analysis.flow_facts import FlowFacts
from torchlint.analysis.loop_facts import LoopFacts
from torchlint.analysis.modules import ClassFacts
from torchlint.analysis.submodule_calls import SubmoduleCall
from torchlint.analysis.pending import Pending


@dataclass(frozen=True)
class SecondOrderSite:
    """A double-backward site (`create_graph=` on `torch.autograd.grad` / `.backward`):
    its row, what it is, whether cuDNN is off there, the modules of the tree it reaches
    (`reaches`) and the `[function, parameter]` pairs whose values it differentiates."""

    row: int
    what: str
    off: bool
    reaches: Tuple[str, ...]
    params: Tuple[Tuple[Any, Any], ...]

    def to_json(self) -> list:
        return [self.row, self.what, self.off, list(self.reaches), [list(pair) for pair in self.params]]

    @classmethod
    def from_json(cls, data: list) -> "SecondOrderSite":
        row, what, off, reaches, params = data
        return cls(row, what, off, tuple(reaches), tuple(tuple(pair) for pair in params))


@dataclass
class FileRecord:
    """One file's facts for the project pass."""

    # every class (stdlib ast: `torchlint.analysis.class_graph.class_graph`), with its evidence
    classes: Tuple[ClassFacts, ...] = ()
    # class -> method -> the methods it calls on `self`, and those it calls only now and then
    self_calls: Mapping[str, Mapping[str, List[str]]] = field(default_factory=dict)
    periodic_self_calls: Mapping[str, Mapping[str, List[str]]] = field(default_factory=dict)
    # training loops and step functions (`torchlint.analysis.training_loops.loop_facts`)
    loops: Optional[LoopFacts] = None
    # module instances that flow into function parameters (`torchlint.analysis.instance_flow.instance_flow`)
    flow: Optional[FlowFacts] = None
    # the modules imported at import time (absolute or relative dotted names)
    imported_modules: Tuple[str, ...] = ()
    # the names taken from other modules, as `module.name` (`torchlint.analysis.names.ast_names_taken`)
    names_taken: Tuple[str, ...] = ()
    # the heavy modules whose module-level import stays after every fix
    staying_imports: Tuple[str, ...] = ()
    # classes used as a submodule of another class, and the calls of submodules
    # (`torchlint.analysis.submodule_calls`)
    submodule_uses: Tuple[str, ...] = ()
    submodule_calls: Tuple[SubmoduleCall, ...] = ()
    # checkpoint sources this file loads with `weights_only=False` (or a pickle module)
    unrestricted_loads: Tuple[str, ...] = ()
    # checkpoint destinations this file saves a whole object to (`torch.save(model, f)`)
    object_saves: Tuple[str, ...] = ()
    # the file's import table, kept where a double-backward analysis ran on it (None: it did not)
    import_table: Optional[Mapping[str, str]] = None
    second_order_sites: Tuple[SecondOrderSite, ...] = ()
    # findings that wait for other files
    pending: List[Pending] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        data: Dict[str, Any] = {}
        if self.classes:
            data["classes"] = [facts.to_json() for facts in self.classes]
        for name in ("self_calls", "periodic_self_calls"):
            if getattr(self, name):
                data[name] = getattr(self, name)
        for name in ("loops", "flow"):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name).to_json()
        if self.import_table is not None:
            data["import_table"] = self.import_table
        for name in ("imported_modules", "names_taken", "staying_imports", "submodule_uses", "unrestricted_loads",
                     "object_saves"):
            if getattr(self, name):
                data[name] = list(getattr(self, name))
        if self.submodule_calls:
            data["submodule_calls"] = [call.to_json() for call in self.submodule_calls]
        if self.second_order_sites:
            data["second_order_sites"] = [site.to_json() for site in self.second_order_sites]
        if self.pending:
            data["pending"] = [pending.to_json() for pending in self.pending]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "FileRecord":
        return cls(
            classes=tuple(ClassFacts.from_json(item) for item in data.get("classes", ())),
            self_calls=data.get("self_calls", {}),
            periodic_self_calls=data.get("periodic_self_calls", {}),
            loops=LoopFacts.from_json(data["loops"]) if "loops" in data else None,
            flow=FlowFacts.from_json(data["flow"]) if "flow" in data else None,
            imported_modules=tuple(data.get("imported_modules", ())),
            names_taken=tuple(data.get("names_taken", ())),
            staying_imports=tuple(data.get("staying_imports", ())),
            submodule_uses=tuple(data.get("submodule_uses", ())),
            submodule_calls=tuple(SubmoduleCall.from_json(item) for item in data.get("submodule_calls", ())),
            unrestricted_loads=tuple(data.get("unrestricted_loads", ())),
            object_saves=tuple(data.get("object_saves", ())),
            import_table=data.get("import_table"),
            second_order_sites=tuple(SecondOrderSite.from_json(item) for item in data.get("second_order_sites", ())),
            pending=[Pending.from_json(item) for item in data.get("pending", ())],
        )

    def without_pending_of(self, codes) -> "FileRecord":
        """The record less the pending findings of these rules (rules that crashed)."""
        if not codes:
            return self
        kept = [pending for pending in self.pending if pending.diagnostic.code not in codes]
        return self if len(kept) == len(self.pending) else replace(self, pending=kept)
