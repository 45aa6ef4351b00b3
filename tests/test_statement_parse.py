"""StatementParser (the language server's parse of successive versions) gives the tree
`cst.parse_module` gives, and a lint with it the findings a lint without it gives."""

from __future__ import annotations

import ast

import pytest

from cli_support import FIXTURES, REPO
from torchlint.core.config import Config
from torchlint.engine import lint_text
from torchlint.core.lazy import cst
from torchlint.core.parse import cst_source, parse_module
from torchlint.core.positions import KEPT_STATEMENT_ROWS
from torchlint.rule_api.registry import all_rules, select_rules
from torchlint.core.incremental_parse import StatementParser

SOURCES = sorted(FIXTURES.rglob("*.py")) + sorted((REPO / "rules").rglob("*.py"))

TRICKY = [
    "# header\n\n\nimport os\n  # indented comment between statements\nx = 1\n",
    "def f():\n  return 1\n\n# two-space indent\nclass A:\n    pass\n",  # two indent units: whole parse
    "x = 1; y = 2\nz = 3\r\nw = 4\r\n",  # statements sharing a row; mixed line endings
    "if x: pass\n\ndef f():\n  pass\n",
    "def f():\n    x = 1\n    # a comment the block owns\n\ny = 2\n# footer\n",
    "@decorator\n# between\n@other\ndef f():\n    pass\n\n\nz = [\n    1,\n]",  # no final newline
    "import torch\n\x0c\ndef f():\n    pass\n\x0cdef g():\n    pass\n",  # form feeds
]


def rules():
    return select_rules(all_rules(), (), (), ())


@pytest.mark.parametrize("text", TRICKY + [path.read_text(encoding="utf-8") for path in SOURCES[:40]])
def test_the_joined_module_is_the_whole_parse(text):
    try:
        tree = ast.parse(text)
    except SyntaxError:
        pytest.skip("CPython rejects it; the engine never parses it with LibCST")
    text = cst_source(text).text  # as the engine gives it to LibCST
    joined, whole = StatementParser().parse(text, tree), cst.parse_module(text)
    assert joined.code == whole.code and joined.deep_equals(whole)


def _edits(text: str):
    """Successive versions: a statement changed, one added, one removed, and back."""
    lines = text.splitlines(keepends=True)
    middle = len(lines) // 2
    yield text
    yield "".join(lines[:middle] + ["CHANGED = 1\n"] + lines[middle:])
    yield "".join(lines[:middle] + ["CHANGED = 2\n", "\n", "def added():\n    return loss.item()\n"] + lines[middle:])
    yield "".join(lines[: max(0, middle - 3)] + lines[middle:])
    yield text


@pytest.mark.parametrize("path", SOURCES[:25], ids=lambda path: path.name)
def test_a_lint_through_the_parser_finds_what_a_lint_without_it_finds(path):
    config, selected = Config(root=REPO), rules()
    parser = StatementParser()
    for version in _edits(path.read_text(encoding="utf-8")):
        fresh = lint_text(version, path.name, config, selected)
        reused = lint_text(version, path.name, config, selected, parser=parser)
        assert reused.diagnostics == fresh.diagnostics
        assert reused.facts == fresh.facts and reused.errors == fresh.errors


def test_an_unchanged_statement_is_not_parsed_again():
    parser = StatementParser()
    text = "import torch\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n"
    first = parser.parse(text, ast.parse(text))
    edited = text.replace("return 2", "return 3")
    second = parser.parse(edited, ast.parse(edited))
    assert second.body[1] is first.body[1] and second.body[2] is not first.body[2]


def test_a_statement_written_twice_has_two_nodes_and_two_positions():
    text = "def reset(o):\n    o.zero_grad(set_to_none=False)\n\n\ndef reset(o):\n    o.zero_grad(set_to_none=False)\n"
    parser = StatementParser()
    module = parser.parse(text, ast.parse(text))
    assert module.body[0] is not module.body[1]
    config, selected = Config(root=REPO), rules()
    for version in (text, text + "\n\nx = 1\n"):
        found = lint_text(version, "twice.py", config, selected, parser=parser).diagnostics
        assert [d.location.row for d in found] == [2, 6]
        assert found == lint_text(version, "twice.py", config, selected).diagnostics


def test_a_class_too_long_to_keep_whole_gets_the_positions_a_lint_without_the_parser_gives():
    methods = "".join(
        f"    def reset_{i}(self, o):\n        # step {i}\n        o.zero_grad(set_to_none=False)\n\n" for i in range(KEPT_STATEMENT_ROWS // 4 + 5)
    )
    text = f"import torch\n\n\nclass Trainer:\n{methods}\nx = 1\n"
    assert len(text.splitlines()) > KEPT_STATEMENT_ROWS
    config, selected = Config(root=REPO), rules()
    parser = StatementParser()
    for version in (text, text.replace("# step 7\n", "# step 7, edited\n"), text.replace("# step 9\n", "\n")):
        reused = lint_text(version, "trainer.py", config, selected, parser=parser).diagnostics
        assert len(reused) > KEPT_STATEMENT_ROWS // 4
        assert reused == lint_text(version, "trainer.py", config, selected).diagnostics


def test_the_unchecked_parse_is_libcsts_and_leaves_its_checks_on():
    for path in sorted(FIXTURES.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            expected = cst.parse_module(text)
        except cst.ParserSyntaxError:  # the fixtures of bad input
            continue
        assert parse_module(text).deep_equals(expected), path
    # a node built after the parse (by a fix) is checked as LibCST checks it
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
    # also after a parse that failed
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("def f(:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
