"""Styled text as plain data, so that formats choose plain, ANSI or rich output late.

A line is a list of (text, style) segments; a style is "" or space-separated
names from `_SGR`, which rich also understands.
"""

from __future__ import annotations

from typing import List, Tuple

Segment = Tuple[str, str]
Line = List[Segment]

_SGR = {"bold": "1", "red": "31", "green": "32", "blue": "34", "cyan": "36"}


def plain(line: Line) -> str:
    return "".join(text for text, _ in line)


def ansi(line: Line) -> str:
    """The line with ANSI SGR escapes; used where importing rich would cost too much."""
    parts = []
    for text, style in line:
        codes = ";".join(_SGR[name] for name in style.split())
        parts.append(f"\x1b[{codes}m{text}\x1b[0m" if codes and text else text)
    return "".join(parts)


def write_lines(lines: List[Line], color: bool, out) -> None:
    """Write lines with ANSI colour or as plain text."""
    render = ansi if color else plain
    out.write("".join(render(line) + "\n" for line in lines))
