"""Prose laid out for a terminal: the width it has (COLUMNS too when piped), and lines
wrapped at spaces without ever breaking a `code span`, a URL or a path, so commands and
links stay copyable."""

from __future__ import annotations

import re
import shutil
from typing import List

# a `code span` (with what is glued to it, e.g. "(`a b`)."), else a run of non-spaces
_WORD = re.compile(r"[^\s`]*(?:`[^`]*`[^\s`]*)+|\S+")
_FENCE = re.compile(r"^\s*(```|~~~)")
_KEPT = re.compile(r"^\s*(#{1,6}\s|\||<!--)")  # headings, tables, comments
_LIST_ITEM = re.compile(r"^(\s*(?:[-*+]|\d+\.)\s+)")


def columns(fallback: int) -> int:
    """The terminal's width: COLUMNS when set (also when piped), else the terminal's,
    else `fallback`."""
    return shutil.get_terminal_size((fallback, 24)).columns


def wrap(text: str, width: int, indent: str = "", subsequent_indent: str = "") -> List[str]:
    """`text` filled to `width`; a word longer than the line gets a line of its own."""
    lines: List[str] = []
    line, empty = indent, True
    words = []
    for word in _WORD.findall(text):  # a code span too long for any line breaks at its spaces
        words += word.split() if len(word) > width - len(subsequent_indent) else [word]
    for word in words:
        if empty:
            line, empty = line + word, False
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = subsequent_indent + word
    if not empty:
        lines.append(line)
    return lines


def wrap_markdown(text: str, width: int) -> str:
    """Markdown with its paragraphs and list items refilled to `width`; code blocks,
    headings and tables kept as they are."""
    out: List[str] = []
    paragraph: List[str] = []

    def flush() -> None:
        if paragraph:
            item = _LIST_ITEM.match(paragraph[0])
            lead = item.group(1) if item else re.match(r"\s*", paragraph[0]).group(0)
            body = " ".join(part.strip() for part in paragraph)
            if item:
                body = body[len(item.group(1).strip()):].strip()
            out.extend(wrap(body, width, lead, " " * len(lead)))
            paragraph.clear()

    in_code = False
    for line in text.splitlines():
        if _FENCE.match(line):
            flush()
            in_code = not in_code
            out.append(line)
        elif in_code or not line.strip() or _KEPT.match(line):
            flush()
            out.append(line)
        else:
            if _LIST_ITEM.match(line):
                flush()
            paragraph.append(line)
    flush()
    return "\n".join(out)
