"""The code frame under a finding: context lines, line numbers, `^` under the span."""

from __future__ import annotations

import unicodedata
from typing import Optional

from torchlint.core.diagnostics import Diagnostic
from torchlint.report.sources import SourceLines
from torchlint.report.styled import Line
from torchlint.core.visible import CONTROL, escaped

CONTEXT = 2
MAX_SPAN_ROWS = 5
TAB_WIDTH = 4


def _display(text: str) -> tuple[str, list[int]]:
    """Printable text for a source line and each code point's display offset.

    Tabs become spaces, C0 control characters their Unicode pictures and C1 ones a
    `\x9b` escape, so that a hostile file cannot drive the terminal and the carets
    stay aligned.
    """
    if text.isascii() and text.isprintable():  # most source lines: one column per code point
        return text, list(range(len(text) + 1))
    shown: list[str] = []
    offsets: list[int] = []
    width = 0
    for char in text:
        offsets.append(width)
        if char == "\t":
            step = TAB_WIDTH - width % TAB_WIDTH
            shown.append(" " * step)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            step = 1
            shown.append(chr(0x2400 + ord(char)) if ord(char) < 0x20 else "\u2421")
        elif CONTROL.match(char):  # C1: no picture exists
            step = len(escaped(char))
            shown.append(escaped(char))
        else:
            step = 2 if unicodedata.east_asian_width(char) in "WF" else 1
            shown.append(char)
        width += step
    offsets.append(width)
    return "".join(shown), offsets


def _caret_range(text: str, row: int, diagnostic: Diagnostic) -> Optional[tuple[int, int]]:
    """Code-point columns [start, end) covered on `row`, at least one wide."""
    start, end = diagnostic.location, diagnostic.end_location
    if not start.row <= row <= max(start.row, end.row):
        return None
    first = start.column - 1 if row == start.row else len(text) - len(text.lstrip())
    last = end.column - 1 if row == end.row else len(text)
    first = min(first, len(text))
    last = min(max(last, first + 1), len(text) + 1)
    if row != start.row and last <= first:
        return None
    return first, last


def frame_lines(diagnostic: Diagnostic, sources: SourceLines) -> list[Line]:
    """The frame, or nothing when the source is unavailable or the row is out of range."""
    lines = sources.lines(diagnostic.source_name)
    start_row = diagnostic.location.row
    if lines is None or not 1 <= start_row <= len(lines):
        return []
    span_end = min(max(diagnostic.end_location.row, start_row), start_row + MAX_SPAN_ROWS - 1)
    first_row = max(1, start_row - CONTEXT)
    last_row = min(len(lines), span_end + CONTEXT)
    gutter = len(str(last_row))
    blank_gutter = (" " * gutter + " |", "bold blue")
    out: list[Line] = [[blank_gutter]]
    for row in range(first_row, last_row + 1):
        text = lines[row - 1]
        shown, offsets = _display(text)
        out.append([(f"{row:>{gutter}} |", "bold blue"), (" " + shown if shown else "", "")])
        carets = _caret_range(text, row, diagnostic) if row <= span_end else None
        if carets is not None:
            begin = offsets[carets[0]]
            end = offsets[carets[1]] if carets[1] < len(offsets) else offsets[-1] + 1
            label = f" {diagnostic.code}" if row == span_end else ""
            out.append(
                [blank_gutter, (" " + " " * begin, ""), ("^" * max(end - begin, 1) + label, "bold red")]
            )
    out.append([blank_gutter])
    return out
