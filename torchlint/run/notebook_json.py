"""A notebook's JSON: read and checked with nbformat (version 4, Python kernel), and where each cell's `source` value
sits in the file's text, so that a fix replaces only those bytes."""

from __future__ import annotations

import json
import re
from json.decoder import scanstring
from typing import List, Optional, Tuple

WHITESPACE = re.compile(r"[ \t\n\r]*")


_DECODER = json.JSONDecoder()


class NotebookError(Exception):
    """The bytes are not a notebook torchlint can read."""


def parse_notebook(file_text: str) -> dict:
    import warnings

    from nbformat.reader import reads

    try:
        # not validated against the schema (13 times the cost): what Jupyter opens, we read
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            node = reads(file_text)
    except Exception as error:  # nbformat raises whatever its input provokes (ValueError, TypeError, ...)
        message = " ".join(str(error).split())[:120]
        raise NotebookError(f"not a notebook ({type(error).__name__}: {message})") from None
    version = node.get("nbformat") if isinstance(node, dict) else None
    if version != 4 or not isinstance(node.get("cells"), list):
        found = f"nbformat {version}" if isinstance(version, int) else "no `cells` list"
        raise NotebookError(f"not a version 4 notebook ({found})")
    if not all(isinstance(cell, dict) for cell in node["cells"]):
        raise NotebookError("a cell is not a JSON object")
    return node


def runs_python(metadata) -> bool:
    """Whether the notebook's kernel runs Python (an R or Julia notebook has nothing for us)."""
    if not isinstance(metadata, dict):
        return True
    for key, name_key in (("language_info", "name"), ("kernelspec", "language")):
        info = metadata.get(key)
        if isinstance(info, dict) and isinstance(info.get(name_key), str):
            return info[name_key].lower() == "python"
    return True


def source_values(file_text: str) -> List[Optional[Tuple[Tuple[int, int], Tuple[int, ...]]]]:
    """For each cell of the file's JSON text: the span of its `source` value and where
    each line's string starts if the value is a list (None: the cell has no source)."""
    found: List = []
    for key, start, end in object_members(file_text, skip_whitespace(file_text, 0)):
        if key != "cells":
            continue
        found = []
        for cell_start, _ in array_elements(file_text, start):
            value = None
            for cell_key, value_start, value_end in object_members(file_text, cell_start):
                if cell_key == "source":
                    in_list = file_text[value_start] == "["
                    lines = tuple(s for s, _ in array_elements(file_text, value_start)) if in_list else ()
                    value = ((value_start, value_end), lines)
            found.append(value)
    return found


def skip_whitespace(text: str, position: int) -> int:
    return WHITESPACE.match(text, position).end()


def object_members(text: str, position: int):
    """(key, value start, value end) of each member of the object at `position`."""
    position = skip_whitespace(text, position + 1)
    if text[position] == "}":
        return
    while True:
        key, position = scanstring(text, position + 1)
        position = skip_whitespace(text, skip_whitespace(text, position) + 1)  # past the colon
        _, end = _DECODER.raw_decode(text, position)
        yield key, position, end
        position = skip_whitespace(text, end)
        if text[position] == "}":
            return
        position = skip_whitespace(text, position + 1)


def array_elements(text: str, position: int):
    """(start, end) of each element of the array at `position`."""
    position = skip_whitespace(text, position + 1)
    if text[position] == "]":
        return
    while True:
        _, end = _DECODER.raw_decode(text, position)
        yield position, end
        position = skip_whitespace(text, end)
        if text[position] == "]":
            return
        position = skip_whitespace(text, position + 1)
