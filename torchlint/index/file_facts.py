"""A file's facts (what project rules record of it, by rule code) as the runner keeps them.

A parallel run's parent holds every file's facts until the project pass. Kept as each
rule's JSON text, they take a fraction of the memory of the objects they decode to, and
the project pass decodes one rule's facts at a time (each read decodes afresh, and the
objects go when that rule is done). A cached file's facts are read from the cache only
when a project pass asks for them.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterator, Mapping, Optional

from torchlint.run.bounded_read import loads_json


class EncodedFacts(Mapping):
    """Facts as `{code: JSON text}`, decoded on each read."""

    def __init__(self, texts: Mapping[str, str]) -> None:
        self.texts = texts

    @classmethod
    def of(cls, facts: Mapping[str, Any]) -> "EncodedFacts":
        if isinstance(facts, EncodedFacts):
            return facts
        return cls({code: json.dumps(value, separators=(",", ":")) for code, value in facts.items()})

    def __getitem__(self, code: str) -> Any:
        try:
            return loads_json(self.texts[code])
        except ValueError:  # a cache entry altered behind our back: no facts, not a crash
            raise KeyError(code) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.texts)

    def __len__(self) -> int:
        return len(self.texts)


class StoredFacts(Mapping):
    """Facts read on first use: `load` gives them (from the cache, or by linting again)."""

    def __init__(self, load: Callable[[], EncodedFacts]) -> None:
        self._load = load
        self._facts: Optional[EncodedFacts] = None

    def _read(self) -> EncodedFacts:
        if self._facts is None:
            self._facts = self._load()
        return self._facts

    def __getitem__(self, code: str) -> Any:
        return self._read()[code]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())
