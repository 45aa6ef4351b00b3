"""TL002's fix: the `torch._assert` that checks a convolution's input channels, laid out
within the line length.

Cost: O(the statement and the line layout) per fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from torchlint.core.diagnostics import Applicability, Fix
from torchlint.fixing.import_insertion import insert_import
from torchlint.fixing.layout import INDENT, argument_lines, comparison_lines, string_lines, width

if TYPE_CHECKING:
    from torchlint.rule_api.rule import Positions
    from torchlint.rules.training.unvalidated_conv_input.values import ConvCall


def input_check(context, conv: ConvCall, value: str, statement, positions: Positions) -> Fix:
    """The fix of a finding: a `torch._assert` before the statement that compares the
    input's channel axis with the layer's `in_channels` (and `import torch` if missing)."""
    label = conv.access.split(".", 1)[-1].split("[", 1)[0]
    indent, line_length = positions.indent_of(statement), context.config.line_length
    expected = f"{conv.access}.in_channels"
    # the channel axis counted from the end is the same for a batched and an unbatched
    # input; `size(axis)` names the valid range if the input has too few dims; a dim
    # too many is the layer's own error to raise
    room = line_length - width(f"{indent}{INDENT},")
    condition = comparison_lines(f"{value}.size({-(conv.dims + 1)})", "==", expected, room)
    message = string_lines(f"{label} expects {{{expected}}} input channels, got shape {{{value}.shape}}", room)
    lines = argument_lines("torch._assert", [condition, message], line_length, indent)
    newline = context.newline
    edits = [positions.insert_lines_before(statement, lines, newline)]
    if context.imports.table.get("torch") != "torch":
        edits.insert(0, insert_import(context.module, positions, newline))
    return Fix(f"Check the input of {label} with `torch._assert`", tuple(edits), Applicability.SAFE)
