"""Jupyter notebooks as sources: the code cells joined into one module, IPython syntax
masked, positions mapped back to (cell, row, column), fixed cells spliced back in.

A cell is numbered as ruff numbers it: 1-based among all the notebook's cells, markdown
included, so `cell 3` is the third cell the user sees. IPython lines (`%magic`,
`!shell`, `name?`, `x = !cmd`) become `pass` at the same indentation, one line for one
line, so rows and columns of everything else are exact; a cell that starts with a
`%%cell magic` is not Python and is left out. Cells are only masked when they do not
parse as they are, so a `%` at the start of a line inside a string is never touched.

Writing back replaces only the JSON value of each changed cell's `source`, in the style
it had (a list of lines or one string, the same indentation): outputs, metadata, ids,
key order, indentation and the final newline keep every byte. nbformat reads and checks
the notebook; it does not write it, because it re-indents the whole file to one space
and sorts keys.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Tuple

from torchlint.core.diagnostics import Diagnostic, Edit, Fix, Location, cell_name
from torchlint.core.source import BOM, split_lines
from torchlint.fixing.apply import line_offsets, text_offset
from torchlint.run.ipython_lines import mask_ipython
from torchlint.run.notebook_json import WHITESPACE, NotebookError, parse_notebook, runs_python, source_values

NOTEBOOK_SUFFIX = ".ipynb"


def is_notebook(name: str) -> bool:
    return name.endswith(NOTEBOOK_SUFFIX)


@dataclass(frozen=True)
class Cell:
    """One code cell that is part of the module."""

    number: int  # 1-based among all cells
    source: str
    chunk: str  # the masked source, ending with a newline: its part of the module
    masked: Tuple[Tuple[int, str], ...]  # (row in the cell, original line) of each masked line
    value_span: Tuple[int, int]  # the `source` value in the file's JSON text
    line_offsets: Tuple[int, ...]  # where each source line's JSON string starts (list form)


@dataclass
class Layout:
    """Where each cell, and each masked line, is in the module text as fixes change it:
    cell starts and masked-line starts as offsets into the current module text."""

    starts: List[int]
    masks: List[Tuple[int, int]]  # (offset, length of the `pass` placeholder line)

    def copy(self) -> "Layout":
        return Layout(list(self.starts), list(self.masks))

    def admits(self, text: str, fix: Fix) -> bool:
        """Whether every edit stays inside one cell, keeps cells apart and leaves the
        masked lines alone."""
        starts = line_offsets(text)
        ends = self.starts[1:] + [len(text)]
        for edit in fix.edits:
            begin, end = text_offset(starts, edit.start), text_offset(starts, edit.end)
            cell = _cell_of(self.starts, begin)
            if end > ends[cell]:
                return False
            whole_lines = begin == 0 or text[begin - 1] == "\n"
            if end == ends[cell] and begin < end and not whole_lines:
                return False  # would take the cell's last newline and join it to the next cell
            if any(end > mask and begin <= mask + length for mask, length in self.masks):
                return False
        return True

    def moved(self, spans: Sequence[Tuple[int, int, str]]) -> None:
        """Follow the applied edits (start, end, content in the old text). An insertion
        where a cell starts belongs to that cell; one where a masked line starts goes
        before it."""

        def shift(offset: int, before_insertions: bool) -> int:
            moved_by = 0
            for begin, end, content in spans:
                if end < offset or (end == offset and (begin < end or before_insertions)):
                    moved_by += len(content) - (end - begin)
            return offset + moved_by

        self.starts = [0] + [shift(start, False) for start in self.starts[1:]]
        self.masks = [(shift(offset, True), length) for offset, length in self.masks]

    def chunks(self, text: str) -> List[str]:
        ends = self.starts[1:] + [len(text)]
        return [text[start:end] for start, end in zip(self.starts, ends)]


@dataclass
class Notebook:
    """A notebook read from bytes; `text` is the module the engine lints."""

    file_text: str
    bom: bool
    cells: List[Cell]
    text: str
    layout: Layout
    ensure_ascii: bool
    newline: str = "\n"
    _cell_rows: Dict[str, List[int]] = field(default_factory=dict, repr=False)

    def sources(self, module_text: str, layout: Layout) -> List[str]:
        """Each cell's source for a module text (the fixed one): masked lines restored,
        the newline the module added dropped."""
        sources = []
        masks = iter(layout.masks)
        for cell, chunk, start in zip(self.cells, layout.chunks(module_text), layout.starts):
            lines = split_lines(chunk)
            mask_rows = [_row_in(chunk, next(masks)[0] - start) for _ in cell.masked]
            for row, (_, original) in zip(mask_rows, cell.masked):
                ending = lines[row - 1][len(lines[row - 1].rstrip("\r\n")) :]
                lines[row - 1] = original + ending
            source = "".join(lines)
            if not cell.source.endswith("\n") and source.endswith("\n"):
                source = source[:-1]
            sources.append(source)
        return sources

    def encode(self, module_text: str, layout: Layout) -> bytes:
        """The file's bytes with each changed cell's `source` value replaced."""
        pieces, position = [], 0
        changed = {}
        for cell, source in zip(self.cells, self.sources(module_text, layout)):
            if source == cell.source:
                continue
            start, end = cell.value_span
            pieces += [self.file_text[position:start], self._json_value(cell, source)]
            position = end
            changed[cell.number] = source
        text = "".join(pieces) + self.file_text[position:]
        self._check_written(text, changed)
        data = text.encode("utf-8")
        return BOM + data if self.bom else data

    def _check_written(self, text: str, changed: Dict[int, str]) -> None:
        """The spliced JSON must read back as the notebook with exactly those sources."""
        expected, written = json.loads(self.file_text), json.loads(text)
        for number, source in changed.items():
            expected["cells"][number - 1]["source"] = source
        for cell in written["cells"]:
            if isinstance(cell.get("source"), list):
                cell["source"] = "".join(cell["source"])
        for number, cell in enumerate(expected["cells"], start=1):
            if number not in changed and isinstance(cell.get("source"), list):
                cell["source"] = "".join(cell["source"])
        if written != expected:
            raise NotebookError("the fixed cells would not write back as they were fixed; file left unchanged")

    def _json_value(self, cell: Cell, source: str) -> str:
        """`source` as JSON in the form the cell's value had: a list of lines laid out
        as before, or one string."""
        start, end = cell.value_span
        old = self.file_text[start:end]
        dump = lambda line: json.dumps(line, ensure_ascii=self.ensure_ascii)  # noqa: E731
        if not old.startswith("["):
            return dump(source)
        lines = re.findall(r"[^\n]*\n|[^\n]+$", source)
        inner = old[1:-1]
        opening = WHITESPACE.match(inner).group()
        closing = inner[len(inner.rstrip(" \t\n\r")) :]
        separator = "," + opening
        if len(cell.line_offsets) > 1:  # as written between the first two lines: ",\n    " or ", "
            second = cell.line_offsets[1]
            separator = self.file_text[self.file_text.rfind(",", 0, second) : second]
        return "[" + opening + separator.join(dump(line) for line in lines) + closing + "]"

    def diff(self, display: str, module_text: str, layout: Layout) -> str:
        """A unified diff per changed cell, headed `a/nb.ipynb:cell 3` (ruff's naming)."""
        import difflib

        out = []
        for cell, source in zip(self.cells, self.sources(module_text, layout)):
            if source == cell.source:
                continue
            name = cell_name(display, cell.number)
            lines = difflib.unified_diff(
                cell.source.splitlines(keepends=True), source.splitlines(keepends=True), f"a/{name}", f"b/{name}"
            )
            out.append("".join(line if line.endswith("\n") else line + "\n" for line in lines))
        return "".join(out)

    def cell_sources(self, display: str, module_text: str, layout: Layout) -> Dict[str, str]:
        """Each cell's text as the module holds it, under the name reporters look it up by
        (`Diagnostic.source_name`)."""
        return {
            cell_name(display, cell.number): chunk
            for cell, chunk in zip(self.cells, layout.chunks(module_text))
        }

    def in_cells(self, diagnostic: Diagnostic, module_text: str, layout: Layout) -> Diagnostic:
        """The diagnostic with positions in its cell (`cell` set; an end past the cell is
        put at the cell's end), without a fix that `--fix` would not apply (one that
        straddles cells or touches a masked line)."""
        first_rows = self._first_rows(module_text, layout)
        if not first_rows:
            return diagnostic
        index = _cell_of(first_rows, diagnostic.location.row)
        cell_rows = _cell_row_counts(first_rows, module_text)

        def local(location: Location, index: int) -> Location:
            row = location.row - first_rows[index] + 1
            if row > max(cell_rows[index], 1):
                return Location(max(cell_rows[index], 1) + 1, 1)
            return Location(max(row, 1), location.column)

        fix = diagnostic.fix
        if fix is not None and not layout.admits(module_text, fix):
            fix = None
        if fix is not None:
            edits = tuple(
                Edit(
                    local(e.start, _cell_of(first_rows, e.start.row)),
                    local(e.end, _cell_of(first_rows, e.start.row)),
                    e.content,
                )
                for e in fix.edits
            )
            fix = Fix(fix.message, edits, fix.applicability)
        noqa = diagnostic.noqa_row
        return Diagnostic(
            diagnostic.code,
            diagnostic.message,
            diagnostic.filename,
            local(diagnostic.location, index),
            local(diagnostic.end_location, index),
            fix,
            None if noqa is None else local(Location(noqa, 1), index).row,
            cell=self.cells[index].number,
        )

    def name_rows(self, message: str, display: str, module_text: str, layout: Layout) -> str:
        """`message` with each `nb.ipynb:ROW` it quotes (a project rule naming where
        something happens) written `nb.ipynb:cell N:ROW`."""
        first_rows = self._first_rows(module_text, layout)

        def in_cell(match) -> str:
            row = int(match.group(1))
            index = _cell_of(first_rows, row)
            return f"{cell_name(display, self.cells[index].number)}:{row - first_rows[index] + 1}"

        if not first_rows or display not in message:
            return message
        return re.sub(re.escape(display) + r":(\d+)\b(?!:)", in_cell, message)

    def _first_rows(self, module_text: str, layout: Layout) -> List[int]:
        key = module_text
        if key not in self._cell_rows:
            self._cell_rows.clear()
            self._cell_rows[key] = [module_text.count("\n", 0, start) + 1 for start in layout.starts]
        return self._cell_rows[key]

    def file_position(self, cell_number: int, row: int, column: int) -> Tuple[int, int]:
        """Where a cell position (1-based row, 0-based column) is in the JSON file, as
        flake8 counts (1-based row, 0-based column): in the line's string when the
        source is a list of lines (exact unless the line has escapes before it), else
        at the value's start."""
        cell = next(c for c in self.cells if c.number == cell_number)
        offsets = cell.line_offsets
        in_line = bool(offsets) and 1 <= row <= len(offsets)
        offset = offsets[row - 1] if in_line else cell.value_span[0]
        file_row = self.file_text.count("\n", 0, offset) + 1
        line_start = self.file_text.rfind("\n", 0, offset) + 1
        return file_row, offset - line_start + (1 + column if in_line else 0)


def _cell_row_counts(first_rows: List[int], module_text: str) -> List[int]:
    total = module_text.count("\n") + (0 if module_text.endswith("\n") or not module_text else 1)
    ends = first_rows[1:] + [total + 1]
    return [end - start for start, end in zip(first_rows, ends)]


def _cell_of(starts: Sequence[int], value: int) -> int:
    """The index of the last start at or before `value` (the first cell if none);
    empty cells share a start with the next, which takes the position."""
    import bisect

    return max(bisect.bisect_right(starts, value) - 1, 0)


def _row_in(chunk: str, offset: int) -> int:
    return chunk.count("\n", 0, offset) + 1


def read_notebook(data: bytes) -> Notebook:
    """The notebook in `data`, or NotebookError (one line: why it cannot be read)."""
    bom = data.startswith(BOM)
    try:
        file_text = data[len(BOM) :].decode("utf-8") if bom else data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise NotebookError(f"not UTF-8: {error}") from None
    node = parse_notebook(file_text)
    raw_cells = node["cells"] if runs_python(node.get("metadata")) else []
    cells: List[Cell] = []
    values = source_values(file_text) if raw_cells else []
    for number, (raw, value) in enumerate(zip(raw_cells, values), start=1):
        if raw.get("cell_type") != "code" or value is None:
            continue
        source = raw.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if not isinstance(source, str):
            raise NotebookError(f"cell {number}: `source` is not text")
        if source.lstrip().startswith("%%"):
            continue
        chunk, masked = mask_ipython(source)
        if chunk and not chunk.endswith("\n"):
            chunk += "\n"
        cells.append(Cell(number, source, chunk, masked, value[0], value[1]))
    text = "".join(cell.chunk for cell in cells)
    starts, masks, position = [], [], 0
    for cell in cells:
        starts.append(position)
        lines = split_lines(cell.chunk)
        line_starts = line_offsets(cell.chunk)
        for row, _ in cell.masked:
            masks.append((position + line_starts[row - 1], len(lines[row - 1].rstrip("\r\n"))))
        position += len(cell.chunk)
    layout = Layout(starts or [0], masks)
    return Notebook(file_text, bom, cells, text, layout, file_text.isascii())
