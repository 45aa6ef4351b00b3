"""IPython syntax in a code cell (`%magic`, `!shell`, `name?`, `x = !cmd`) masked as `pass` at the same indentation,
one line for one line, so that rows and columns of the rest stay exact."""

from __future__ import annotations

import ast
import re
from typing import Tuple

from torchlint.core.source import split_lines

# `%magic`, `!shell`, `?name`, `name?`, and their assigned forms `x = %time f()`, `x = !ls`
IPYTHON_LINE = re.compile(r"\s*(?:[%!?]|[\w.]+\?\??\s*$|[\w.,\s()\[\]]+=\s*[%!])")


def mask_ipython(source: str) -> Tuple[str, Tuple[Tuple[int, str], ...]]:
    """The source with IPython lines replaced by `pass` (same indentation), and the
    (row, original line) of each; untouched if it parses as it is."""
    lines = split_lines(source)
    if not any(IPYTHON_LINE.match(line) for line in lines):
        return source, ()
    try:
        ast.parse(source)
        return source, ()
    except (SyntaxError, ValueError):
        pass
    masked = []
    continued = False
    for row, line in enumerate(lines, start=1):
        body = line.rstrip("\r\n")
        if continued or (IPYTHON_LINE.match(body) and not body.lstrip().startswith("#")):
            indent = body[: len(body) - len(body.lstrip())]
            lines[row - 1] = indent + "pass" + line[len(body) :]
            masked.append((row, body))
            continued = body.endswith("\\")
    return "".join(lines), tuple(masked)
