"""Runs of rows that hold whole logical lines, from the stdlib ast: what a tokenizer can
be given instead of a whole top-level statement to learn a row's logical line.

A run is the rows of one statement of a block (the small statements that share its rows
with it included), nested as deep as a row allows: the rows of one statement of a
method, not of the 3,000-line class around it. A run is offered only where its text
plainly starts and ends a logical line: its first statement begins its row (after
indentation, or an `@` for a decorator), neither the row above it nor its own last row
ends in a backslash, and no statement before or after it shares its first or last row.
Elsewhere (a one-line `if x: y`, a continued line) the run of the statement around it
is offered instead, up to the top-level statement.

Cost: a statement's runs are computed once, the first time a row inside it is asked
about (linear in its child statements); each question then descends one level per
nesting depth, at most `DEEPEST` levels, with a bisection at each level. A row deeper
than that is read in its run at that depth: a run of rows is tokenized once, and a row
lies in at most `DEEPEST` runs, so all the runs tokenized hold at most `DEEPEST` times
the statement's rows.
"""

from __future__ import annotations

import ast
import bisect
from typing import Dict, List, Sequence, Tuple

from torchlint.core.walk import blocks

Rows = Tuple[int, int]

# the nesting depth runs are offered to: a method's statements in a class sit at depth 2,
# a loop's body in a method at 3
DEEPEST = 8


class _Run:
    __slots__ = ("first", "last", "statement", "whole")

    def __init__(self, first: int, last: int, statement: ast.stmt, whole: bool) -> None:
        self.first = first  # rows of the file, 1-based
        self.last = last
        self.statement = statement  # its first statement (the only one when it has blocks)
        self.whole = whole  # its rows are whole logical lines


class LogicalRows:
    """The runs of rows around a row, for the statements of one file."""

    def __init__(self, lines: Sequence[str]) -> None:
        self._lines = lines  # the file's rows, line ends kept
        self._runs: Dict[int, Tuple[List[int], List[_Run]]] = {}  # id(statement) -> its blocks' runs

    def inside(self, statement: ast.stmt, row: int) -> List[Rows]:
        """The runs that hold `row` inside `statement` (whose rows are taken to be whole
        logical lines), innermost first, down to `DEEPEST` levels; none for a row of its
        own (a header, an `else:`)."""
        found: List[Rows] = []
        while len(found) < DEEPEST:
            firsts, runs = self._runs_of(statement)
            at = bisect.bisect_right(firsts, row) - 1
            if at < 0 or runs[at].last < row or not runs[at].whole:
                break
            run = runs[at]
            found.append((run.first, run.last))
            statement = run.statement
        found.reverse()
        return found

    def _runs_of(self, statement: ast.stmt) -> Tuple[List[int], List[_Run]]:
        known = self._runs.get(id(statement))
        if known is None:
            runs = [run for block in blocks(statement) for run in self._block_runs(block)]
            known = self._runs[id(statement)] = ([run.first for run in runs], runs)
        return known

    def _block_runs(self, block: Sequence[ast.stmt]) -> List[_Run]:
        runs: List[_Run] = []
        for statement in block:
            first, last = _anchor_row(statement), statement.end_lineno or statement.lineno
            if runs and first <= runs[-1].last:  # `a = 1; b = 2`: small statements, one logical line
                runs[-1].last = max(runs[-1].last, last)
                continue
            runs.append(_Run(first, last, statement, self._starts_line(statement, first)))
        for run in runs:
            run.whole = run.whole and not self._continued(run.last)
        return runs

    def _starts_line(self, statement: ast.stmt, row: int) -> bool:
        """Whether the statement is the first thing on its first row (a decorator's `@`
        aside) and that row continues no backslash-ended row."""
        decorators = getattr(statement, "decorator_list", None)
        column = decorators[0].col_offset if decorators else statement.col_offset
        # a byte offset: on a row of ASCII indentation it counts characters; any other
        # prefix holds more than whitespace either way
        before = self._lines[row - 1][:column].strip()
        return before in (("", "@") if decorators else ("",)) and not (row > 1 and self._continued(row - 1))

    def _continued(self, row: int) -> bool:
        return self._lines[row - 1].rstrip("\r\n").endswith("\\")


def _anchor_row(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", None)
    return min(decorator.lineno for decorator in decorators) if decorators else statement.lineno
