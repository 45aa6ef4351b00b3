"""A file's record as the runner keeps it until the project pass: JSON text.

A parallel run's parent holds every file's record until the project pass. Kept as text,
records take a fraction of the memory of the objects they decode to; the project pass
decodes each once (`ProjectIndex`). A cached file's record is read from the cache only
when a project pass asks for it.

Cost: linear in the record's text.
"""

from __future__ import annotations

import json
from typing import Callable, Optional

from torchlint.index.record import FileRecord
from torchlint.core.bounded_read import loads_json


def encode(record: Optional[FileRecord]) -> Optional[str]:
    """The record as JSON text; None for no record or an empty one."""
    if record is None:
        return None
    data = record.to_json()
    return json.dumps(data, separators=(",", ":")) if data else None


def decode(text: Optional[str]) -> Optional[FileRecord]:
    """The record of JSON text; None for none, or for text altered behind our back
    (a cache entry): no facts, not a crash."""
    if text is None:
        return None
    try:
        return FileRecord.from_json(loads_json(text))
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


class RecordText:
    """A file's record as text, read on first use: `load` gives it (from the cache, or
    by linting the file again), unless the text is known already."""

    def __init__(self, text: Optional[str] = None, load: Optional[Callable[[], Optional[str]]] = None) -> None:
        self._text = text
        self._load = load

    @classmethod
    def of(cls, record) -> "RecordText":
        """From a `FileRecord`, a `RecordText` (kept) or None."""
        return record if isinstance(record, RecordText) else cls(encode(record))

    @property
    def text(self) -> Optional[str]:
        if self._load is not None:
            self._text, self._load = self._load(), None
        return self._text

    def decode(self) -> Optional[FileRecord]:
        return decode(self.text)
