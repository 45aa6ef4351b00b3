"""Which linted files a dotted name reaches in the project pass: a holder of a linted
module, a whole module, or a name a linted module re-exports.
"""

from __future__ import annotations

from typing import List, Tuple

from torchlint.analysis.module_names import absolute_import, suffix_matches


def candidates_for(target: str, files, depth: int) -> List[Tuple[str, int]]:
    """The (file, candidate index) pairs that the dotted name `target` reaches: a holder
    of a linted module, a whole module, or a name a linted module re-exports. `files`:
    display path -> (module name, is a package, its RNN layers waiting for a site
    (`Pending` of `SecondOrderReaches`), its import table)."""
    if depth > 4:
        return []
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        prefix, rest = ".".join(parts[:cut]), parts[cut:]
        owners = [display for display, (module, _, _, _) in files.items() if module and suffix_matches(module, prefix)]
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
                    found.extend(candidates_for(".".join([exported, *rest[1:]]), files, depth + 1))
        return found
    return []
