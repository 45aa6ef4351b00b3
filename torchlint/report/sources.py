"""Source lines as the engine counts them, and UTF-16 columns for SARIF."""

from __future__ import annotations

import re
from typing import Mapping, Optional

# Python's tokenizer ends lines only here; str.splitlines would also split on
# form feeds, U+2028 and friends and shift every row after them.
_NEWLINE = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Lines without terminators; a final newline does not start another line."""
    lines = _NEWLINE.split(text)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


class SourceLines:
    """Lazily split sources, one split per file however many findings it has."""

    def __init__(self, sources: Mapping[str, str]):
        self._sources = sources
        self._lines: dict[str, Optional[list[str]]] = {}

    def lines(self, filename: str) -> Optional[list[str]]:
        if filename not in self._lines:
            text = self._sources.get(filename)
            self._lines[filename] = None if text is None else split_lines(text)
        return self._lines[filename]

    def line(self, filename: str, row: int) -> Optional[str]:
        """The text of 1-based `row` without its newline, or None when unknown."""
        lines = self.lines(filename)
        if lines is None or not 1 <= row <= len(lines):
            return None
        return lines[row - 1]

    def utf16_column(self, filename: str, row: int, column: int) -> int:
        """Convert a 1-based code-point column to a 1-based UTF-16 code-unit column."""
        text = self.line(filename, row)
        if text is None:
            return column
        astral = sum(1 for char in text[: column - 1] if ord(char) > 0xFFFF)
        return column + astral
