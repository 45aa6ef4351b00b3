"""A rule gate from the stdlib ast nodes where the rule can fire ("sites").

The same nodes answer both engine questions: whether the file needs LibCST at all (any
site) and which top-level definitions it needs parsed (those holding a site), so a
large model file with one checkpoint call parses one class, not the file.
"""

from __future__ import annotations

from typing import AbstractSet, List, Optional

from torchlint.core.partial_parse import definitions_around


class SiteGate:
    """Rule mixin: define `sites(view, config)`; `gate` and `needed_definitions` follow."""

    @classmethod
    def sites(cls, view, config) -> List:
        raise NotImplementedError

    @classmethod
    def _cached_sites(cls, view, config) -> List:
        # gate and needed_definitions ask in turn: one walk per file and rule
        cache = view.__dict__.setdefault("_rule_sites", {})
        found = cache.get(cls.code)
        if found is None:
            found = cache[cls.code] = cls.sites(view, config) if view.tree is not None else []
        return found

    @classmethod
    def gate(cls, view, config) -> bool:
        return bool(cls._cached_sites(view, config))

    @classmethod
    def needed_definitions(cls, view, config) -> Optional[AbstractSet[int]]:
        return definitions_around(view, cls._cached_sites(view, config))
