"""A statement that a fix made too long is split without changing what it means: the split code
parses to the same tree, and a comma is never added where it would make a tuple or a syntax
error (torchlint/fixing/layout.py)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from torchlint.fixing.layout import split_statement, width

LONG = "argument_number_" * 5


@pytest.mark.parametrize("line", [
    # a bare generator argument takes no trailing comma, nor is it cut at its target's comma
    "        same = all(left.dtype == right.dtype for left, right in zip(ema_values, model_values))",
    # parentheses that group an expression: a comma would make a tuple
    "            heads = (Head(c, p[-1], l[-1], enabled=i != 2) for i, (c, p, l) in enumerate(zip(a, b, c)))",
    "        total = (first_loss_value + second_loss_value + third_loss_value + fourth_loss_value_x)",
    # the layouts of a call chain and of a call before an empty call
    "    model = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V1, progress=False).to(device).eval()",
    "    head = models.resnet18(weights=models.ResNet18_Weights.IMAGENET1K_V1, progress=False, x=1).cuda()",
    f"    return f({LONG}x, {LONG}y)",
])
def test_a_split_statement_means_what_it_meant(line):
    assert width(line) > 88
    lines = split_statement(line, 88)
    if lines is None:
        return  # left as written: the fix keeps its long line
    assert all(width(text) <= 88 for text in lines)
    assert ast.dump(ast.parse(textwrap.dedent("\n".join(lines)))) == ast.dump(ast.parse(line.strip()))


def test_a_lone_generator_argument_is_split_only_inside_the_call_on_one_line():
    line = "        same = all(left.dtype == right.dtype for left, right in zip(ema_values, model_values))"
    assert split_statement(line, 88) == [
        "        same = all(",
        "            left.dtype == right.dtype for left, right in zip(ema_values, model_values)",
        "        )",
    ]
    # one character more inside: no line of its own fits, and a comma per item would break the generator
    assert split_statement(line.replace("model_values", "model_values_of_net"), 88) is None
