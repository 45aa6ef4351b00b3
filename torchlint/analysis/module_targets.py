"""Which linted files a dotted name reaches in the project pass: a holder of a linted
module, a whole module, or a name a linted module re-exports.

Cost: per target, for each prefix cut (longest first, until one names a linted module),
the files whose module name ends with the prefix's last part (`ModuleIndex`, built once
per `files`), then their candidates; re-exports followed at most 4 deep. `reexported`:
O(the tree's packages) per name.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Tuple

from torchlint.analysis.module_names import absolute_import, suffix_matches


MAX_REEXPORTS = 4  # re-exports followed from one name, at most


def module_index(files) -> Dict[str, List[str]]:
    """`files`' display paths by the last part of their module name, in `files`' order."""
    index: Dict[str, List[str]] = {}
    for display, (module, _, _, _) in files.items():
        if module:
            index.setdefault(module.rsplit(".", 1)[-1], []).append(display)
    return index


def candidates_for(target: str, files, depth: int, index: Optional[Dict[str, List[str]]] = None) -> List[Tuple[str, int]]:
    """The (file, candidate index) pairs that the dotted name `target` reaches: a holder
    of a linted module, a whole module, or a name a linted module re-exports. `files`:
    display path -> (module name, is a package, its RNN layers waiting for a site
    (`Pending` of `SecondOrderReaches`), its import table); `index`: `module_index(files)`
    (built here when not given: pass it when asking for many targets).

    Cost: per prefix cut, the files whose module name ends with the prefix's last part."""
    if depth > MAX_REEXPORTS:
        return []
    if index is None:
        index = module_index(files)
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        prefix, rest = ".".join(parts[:cut]), parts[cut:]
        # a module that suffix-matches the prefix ends with its last part
        owners = [display for display in index.get(parts[cut - 1], ()) if suffix_matches(files[display][0], prefix)]
        if not owners:
            continue
        found: List[Tuple[str, int]] = []
        for owner in owners:
            module, package, candidates, imports = files[owner]
            if not rest:
                found.extend((owner, index) for index in range(len(candidates)))
                continue
            name = rest[0]
            found.extend((owner, i) for i, c in enumerate(candidates) if name in c.condition.holders)
            exported = imports.get(name)
            if exported is not None:
                if exported.startswith("."):
                    exported = absolute_import(module, package, exported)
                if exported:
                    found.extend(candidates_for(".".join([exported, *rest[1:]]), files, depth + 1, index))
        return found
    return []


# A package `__init__`'s import table, by its module name: (module name, is a package, name -> what it imports)
Exports = Mapping[str, Tuple[str, bool, Mapping[str, str]]]


def reexported(dotted: str, exports: Exports) -> Optional[str]:
    """The absolute name `dotted` (`pkg.Trainer`) stands for when its module is a package of the tree
    whose `__init__` imports that name (`from pkg.trainer import Trainer`: `pkg.trainer.Trainer`); None
    otherwise. One step: the caller follows a chain, to a depth it bounds."""
    module, _, last = dotted.rpartition(".")
    if not module:
        return None
    for package, (name, is_init, table) in exports.items():
        if suffix_matches(package, module) and last in table:
            target = table[last]
            return (absolute_import(name, is_init, target) if target.startswith(".") else target) or None
    return None
