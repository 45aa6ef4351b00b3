"""`# noqa` is read from the innermost run of whole logical lines around a row
(torchlint/core/logical_rows.py), not from the whole top-level statement: the answers must
be the same for every row, in the shapes where a run's rows are not plainly whole lines."""

from __future__ import annotations

import ast

from torchlint.core.logical_rows import LogicalRows
from torchlint.core.noqa import StatementSuppressions
from torchlint.core.partial_parse import statement_spans
from torchlint.core.source import split_lines

TRICKY = '''\
import os
class A:
    def f(self):
        x = (1,
             2); y = x.item()  # noqa: TL003
        if (a and
                b): c = x.item()  # noqa
        z = 1; \\
y = 2  # noqa: E501
        w = 3 \\
            ; v = 4  # noqa
        s = """
        # noqa
        """; t = 5
        u = f(a,  # noqa: TL001
              b)
        @dec
        def g():  # noqa
            pass
        @ dec2 \\
        (3)
        def h(): pass
        for i in x: q = 1  # noqa
        else: r = 2  # noqa: X1
        try: pass
        except E: pass  # noqa
        finally: k = 1
        match x:
            case 1: y = 2  # noqa
            case _:
                y = 3  # noqa: TL003
        while True:
            pass  # a comment that ends in a backslash \\
        m = 1
        n = '\\
  # noqa'; o = 9
        if x:
            pass
        elif y:  # noqa
            pass
        else:
            pass
\t# a tab
        \u00fcn\u00ef = 1  # noqa
        p = [
    1,  # noqa
        ]
        with open(x) as f, \\
             open(y) as g:  # noqa
            pass
def k(): return 1  # noqa
async def m():
    async with a: pass  # noqa
    async for b in c:
        await d  # noqa: TL1
x = 1; y = 2  # noqa
class B:
    def f(self):
\x0c        x = 1  # noqa
        if y:
    \x0c            z = 2  # noqa
'''


def _answers(suppressions: StatementSuppressions, rows: int):
    codes = ("TL003", "TL001", "E501", "X1")
    return [(suppressions.noqa_row(row), [suppressions.suppresses(row, code) for code in codes]) for row in range(rows + 2)]


def test_every_row_reads_as_in_its_whole_top_level_statement():
    tree = ast.parse(TRICKY)
    lines = split_lines(TRICKY)
    spans = statement_spans(tree)
    whole = StatementSuppressions(lines, spans)
    nested = StatementSuppressions(lines, spans, statements=tree.body)
    assert _answers(nested, len(lines)) == _answers(whole, len(lines))


def test_a_row_of_a_method_is_read_in_its_own_statement():
    source = "class A:\n    def f(self):\n        x = 1\n        y = g(\n            x)  # noqa\n\n    def h(self):\n        pass\n"
    tree = ast.parse(source)
    assert LogicalRows(split_lines(source)).inside(tree.body[0], 5) == [(4, 5), (2, 5)]
    assert LogicalRows(split_lines(source)).inside(tree.body[0], 6) == []
