"""Which RNN layers of the tree a double-backward site reaches (TL004's project pass):
the sites and the layers no site of their own file reaches (`SecondOrderReaches`) are
joined through module instances passed into function parameters and through imports.

Cost: per site, `instances_into` per parameter it reads and `candidates_for` per target
(over a module index built once); each layer keeps its sites as an ordered set."""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Sequence, Tuple

from torchlint.analysis.module_targets import candidates_for, module_index
from torchlint.analysis.modules import RNN_LAYERS, canonical, root_kind, torch_base
from torchlint.core.diagnostics import Diagnostic
from torchlint.fixing.cudnn_off import layer_message
from torchlint.analysis.module_names import absolute_import, is_package, module_name
from torchlint.analysis.pending import Pending, SecondOrderReaches
from torchlint.index.record import FileRecord


def second_order_findings(project, pending: Sequence[Tuple[str, Pending]]) -> List[Diagnostic]:
    """The `SecondOrderReaches` findings (`pending`: (display path, pending) pairs) that
    a double-backward site of the tree reaches, each naming the first such site."""
    layers: Dict[str, List[Pending]] = {}
    for display, item in pending:
        if isinstance(item.condition, SecondOrderReaches):
            layers.setdefault(display, []).append(item)
    files = {
        display: (module_name(display), is_package(display), layers.get(display, []), record.import_table or {})
        for display, record in project.records.items()
        if _analysed(record)
    }
    index = module_index(files)
    hits: Dict[Tuple[str, int], Dict[Tuple[str, int, str], None]] = {}  # ordered sets
    for display, (module, package, candidates, _) in files.items():
        for site in project.records[display].second_order_sites:
            targets, reached = set(site.reaches), set()
            for function, param in site.params:
                names, bound = project.flow.instances_into(function, param) if function else (set(), False)
                targets |= names
                if not bound:  # nobody passes it in: the modules of the same file are the candidates
                    reached.update((display, i) for i, c in enumerate(candidates) if c.condition.module_class)
            for dotted in targets:
                target = absolute_import(module, package, dotted) if dotted.startswith(".") else dotted
                reached.update(candidates_for(target, files, 0, index) if target else ())
            for owner, number in reached:
                layer = files[owner][2][number].condition.layer
                if site.off and not layer.projection:
                    continue
                entry = (display, site.row, site.what)
                hits.setdefault((owner, number), {}).setdefault(entry, None)
    diagnostics = []
    for (owner, number), sites in sorted(hits.items()):
        candidate = files[owner][2][number]
        if torch_base(project.classes, candidate.condition.class_name, RNN_LAYERS) is None:
            continue
        display, row, what = min(sites)
        message = layer_message(candidate.condition.layer, f"{display}:{row}", what, len(sites) - 1)
        diagnostics.append(replace(candidate.diagnostic, message=message, filename=owner))
    return diagnostics


def _analysed(record: FileRecord) -> bool:
    """Whether the double-backward analysis recorded anything of the file: instance
    flow, a class that may be an RNN layer, or (its LibCST pass ran) its imports."""
    return record.flow is not None or record.import_table is not None or any(
        any(base is None or root_kind(base) is None or canonical(base) in RNN_LAYERS for base in facts.bases)
        for facts in record.classes
    )
