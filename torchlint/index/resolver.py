"""The one resolver: decides, once every file's record is known, which pending findings
(`torchlint.analysis.pending`) the project pass reports.

Each kind of condition has one decision here; a decision sees all the pending findings
of one rule with its kinds at once (a site reaching several layers, a finding reached
both from a class and from a loop is reported once). Decisions run in the order of
`DECISIONS`, rule by rule in the registry's order.

Cost: the pending findings are grouped by condition kind once per rule (O(rules × kinds
× pending)); each decision is linear in its findings plus the index it reads
(`_skip_input` and `_model_input` read every record's submodule calls and uses once per
rule, `_name_taken` every record's names taken; a pending name is checked against the
takers of names with its last part).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from torchlint.analysis.hot_paths import hot_path_findings
from torchlint.analysis.module_names import absolute_import, is_package, module_name, suffix_matches
from torchlint.analysis.modules import RNN_LAYERS, torch_base
from torchlint.analysis.submodule_calls import SubmoduleCall, passes_own_outputs
from torchlint.core.config import Config
from torchlint.fixing.apply import without_unfixable
from torchlint.core.diagnostics import Diagnostic
from torchlint.index.import_graph import ImportGraph
from torchlint.analysis.pending import (
    ClassIs, HotPathReaches, ImportNotKeptElsewhere, LoopReaches, ModelInput, NameNotTakenElsewhere, Pending,
    SecondOrderReaches, SkipInput, SourceLoadedUnrestricted,
)
from torchlint.index.project import ProjectIndex
from torchlint.index.record import FileRecord
from torchlint.index.second_order_reach import second_order_findings

Located = Tuple[str, Pending]  # (display path, pending finding)


def project_findings(records: Mapping[str, FileRecord], rules: Sequence[type], config: Config) -> List[Diagnostic]:
    """The project pass over these files' records (display path -> record) for the
    project rules among `rules` (selected, in the registry's order)."""
    project_rules = [rule for rule in rules if rule.project_rule]
    return without_unfixable(resolve(ProjectIndex(records), project_rules, config), config) if project_rules else []


def resolve(project: ProjectIndex, rules: Sequence[type], config: Config) -> List[Diagnostic]:
    """The pending findings of `rules` (the selected project rules) that hold."""
    by_code: Dict[str, List[Located]] = {}
    for display, record in project.records.items():
        for item in record.pending:
            by_code.setdefault(item.diagnostic.code, []).append((display, item))
    found: List[Diagnostic] = []
    for rule in rules:
        pending = by_code.get(rule.code, [])
        for kinds, decide in DECISIONS:
            mine = [located for located in pending if isinstance(located[1].condition, kinds)]
            if mine:
                found.extend(decide(project, mine, rule, config))
    return found


def _class_is(project: ProjectIndex, pending: Sequence[Located], rule: type, config: Config) -> List[Diagnostic]:
    index = project.classes
    found = []
    for _, item in pending:
        name, kind = item.condition.class_name, item.condition.kind
        if kind == "rnn":
            holds = torch_base(index, name, RNN_LAYERS) is not None
        else:
            facts = index.find(name)
            holds = facts is not None and index.decides(facts, kind, evidence=False)
        if holds:
            found.append(item.diagnostic)
    return found


def _model_input(project: ProjectIndex, pending: Sequence[Located], rule: type, config: Config) -> List[Diagnostic]:
    uses = {name for record in project.records.values() for name in record.submodule_uses}
    index = project.classes
    found = []
    for _, item in pending:
        name = item.condition.class_name
        if name.rsplit(".", 1)[-1] in uses:
            continue  # a block of a bigger model: that model's input is where to check
        facts = index.find(name)
        if facts is not None and index.decides(facts, "module", evidence=False):
            found.append(item.diagnostic)
    return found


def _skip_input(project: ProjectIndex, pending: Sequence[Located], rule: type, config: Config) -> List[Diagnostic]:
    calls: Dict[str, List[SubmoduleCall]] = {}
    for record in project.records.values():
        for call in record.submodule_calls:
            calls.setdefault(call.callee, []).append(call)
    index = project.classes
    found = []
    for _, item in pending:
        skip = item.condition
        facts = index.find(skip.class_name)
        if facts is None or not index.decides(facts, "module", evidence=False):
            continue
        callers = calls.get(skip.class_name.rsplit(".", 1)[-1], ())
        if not callers or not all(passes_own_outputs(call, skip.parameters) for call in callers):
            found.append(item.diagnostic)
    return found


def _second_order(project: ProjectIndex, pending: Sequence[Located], rule: type, config: Config) -> List[Diagnostic]:
    return second_order_findings(project, pending)


def _import_not_kept(project: ProjectIndex, pending: Sequence[Located], rule: type, config: Config) -> List[Diagnostic]:
    graph = ImportGraph(project.records)
    staying: Dict[str, set] = {}
    found = []
    for display, item in pending:
        if display not in staying:
            staying[display] = graph.staying_beyond(display)
        if item.condition.module not in staying[display]:
            found.append(item.diagnostic)
    return found


def _source_loaded(project: ProjectIndex, pending: Sequence[Located], rule: type, config: Config) -> List[Diagnostic]:
    # source -> how another file shows it holds objects
    holds_objects: Dict[str, str] = {}
    for display in sorted(project.records):
        for source in project.records[display].unrestricted_loads:
            holds_objects.setdefault(source, f"is loaded with `weights_only=False` in {display}")
        for source in project.records[display].object_saves:
            holds_objects.setdefault(source, f"is where {display} saves a whole object with `torch.save`")
    return [_unless_elsewhere(item, holds_objects.get(item.condition.source)) for _, item in pending]


def _name_taken(project: ProjectIndex, pending: Sequence[Located], rule: type, config: Config) -> List[Diagnostic]:
    # by last part: (the module and name taken, the file that takes it)
    taken: Dict[str, List[Tuple[str, str]]] = {}
    for display in sorted(project.records):
        module, package = module_name(display), is_package(display)
        for name in project.records[display].names_taken:
            target = absolute_import(module, package, name) if name.startswith(".") else name
            if target:
                taken.setdefault(target.rsplit(".", 1)[-1], []).append((target, display))
    found = []
    for display, item in pending:
        own = f"{module_name(display)}.{item.condition.name}"
        takers = taken.get(item.condition.name, ())
        where = next((other for target, other in takers if other != display and suffix_matches(own, target)), None)
        found.append(_unless_elsewhere(item, where))
    return found


def _unless_elsewhere(item: Pending, where: Optional[str]) -> Diagnostic:
    """The pending finding, or, if another file (`where`) decides it, its `otherwise`."""
    if where is None:
        return item.diagnostic
    otherwise = item.condition.otherwise
    return replace(otherwise, message=otherwise.message.replace("{where}", where))


Decide = Callable[[ProjectIndex, Sequence[Located], type, Config], List[Diagnostic]]
DECISIONS: Tuple[Tuple[Tuple[type, ...], Decide], ...] = (
    ((SecondOrderReaches,), _second_order),
    ((ClassIs,), _class_is),
    ((ModelInput,), _model_input),
    ((SkipInput,), _skip_input),
    ((HotPathReaches, LoopReaches), hot_path_findings),
    ((ImportNotKeptElsewhere,), _import_not_kept),
    ((SourceLoadedUnrestricted,), _source_loaded),
    ((NameNotTakenElsewhere,), _name_taken),
)
