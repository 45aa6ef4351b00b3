from report_builders import diag, fix, output

SOURCE = "import os\nimport torch\nimport wandb\n\n\ndef main():\n    pass\n"


def test_code_frame_with_context_underline_and_help(make_ctx):
    ctx = make_ctx(sources={"train.py": SOURCE})
    text = output("full", [diag(row=3, col=8, end=(3, 13), fix=fix())], ctx)
    assert text == (
        "train.py:3:8: TL001 [*] Module-level import of `wandb`\n"
        "  |\n"
        "1 | import os\n"
        "2 | import torch\n"
        "3 | import wandb\n"
        "  |        ^^^^^ TL001\n"
        "4 |\n"
        "5 |\n"
        "  |\n"
        "  = help: Move the import into the function\n"
        "\n"
    )


def test_frame_is_clipped_at_the_file_start_and_gutter_widens(make_ctx):
    source = "".join(f"x{n} = {n}\n" for n in range(1, 12))
    ctx = make_ctx(sources={"train.py": source})
    text = output("full", [diag(row=10, col=1, end=(10, 4))], ctx)
    assert " 8 | x8 = 8\n" in text
    assert "11 | x11 = 11\n" in text
    assert "   | ^^^ TL001\n" in text
    assert "help" not in text
    assert output("full", [diag(row=1, col=1, end=(1, 3))], ctx).split("\n")[2] == "1 | x1 = 1"


def test_header_only_when_source_is_missing(make_ctx):
    assert output("full", [diag(row=3, col=8)], make_ctx()) == (
        "train.py:3:8: TL001 Module-level import of `wandb`\n\n"
    )


def test_row_beyond_the_source_gives_header_only(make_ctx):
    ctx = make_ctx(sources={"train.py": "x = 1\n"})
    assert output("full", [diag(row=5)], ctx) == "train.py:5:1: TL001 Module-level import of `wandb`\n\n"


def test_empty_span_gets_one_caret(make_ctx):
    ctx = make_ctx(sources={"train.py": "x = (\n"})
    assert "  |      ^ TL001\n" in output("full", [diag(row=1, col=6, end=(1, 6))], ctx)


def test_carets_follow_tabs_and_wide_characters(make_ctx):
    ctx = make_ctx(sources={"train.py": "\tx = '日本'; f()\n"})
    lines = output("full", [diag(row=1, col=11, end=(1, 14))], ctx).splitlines()
    code_line, caret_line = lines[2], lines[3]
    assert code_line == "1 |     x = '日本'; f()"
    # tab -> 4 columns, each CJK character -> 2 columns
    assert caret_line == "  |" + " " * 16 + "^^^ TL001"


def test_control_characters_are_shown_as_pictures(make_ctx):
    ctx = make_ctx(sources={"train.py": "x = '\x1b[31m'\n"})
    text = output("full", [diag()], ctx)
    assert "\x1b" not in text
    assert "x = '\u241b[31m'" in text


def test_multiline_span_underlines_each_line_and_labels_the_last(make_ctx):
    source = "y = f(\n    a,\n    b)\nz = 1\n"
    ctx = make_ctx(sources={"train.py": source})
    lines = output("full", [diag(row=1, col=5, end=(3, 7))], ctx).splitlines()
    assert lines[2:9] == [
        "1 | y = f(",
        "  |     ^^",
        "2 |     a,",
        "  |     ^^",
        "3 |     b)",
        "  |     ^^ TL001",
        "4 | z = 1",
    ]


def test_final_newline_does_not_add_a_context_line(make_ctx):
    ctx = make_ctx(sources={"train.py": "a = 1\nb = 2\n"})
    assert output("full", [diag(row=2)], ctx).splitlines()[2:6] == ["1 | a = 1", "2 | b = 2", "  | ^ TL001", "  |"]


def test_crlf_sources_keep_rows(make_ctx):
    ctx = make_ctx(sources={"train.py": "a = 1\r\nb = 2\r\n"})
    assert "2 | b = 2\n  | ^ TL001\n" in output("full", [diag(row=2)], ctx)


def test_no_ansi_without_colour_and_ansi_with_it(make_ctx):
    ctx = make_ctx(sources={"train.py": SOURCE})
    diagnostics = [diag(row=3, col=8, end=(3, 13), fix=fix())]
    assert "\x1b" not in output("full", diagnostics, ctx)
    coloured = output("full", diagnostics, make_ctx(sources={"train.py": SOURCE}, color=True))
    assert "\x1b[" in coloured
    assert "import wandb" in coloured


def test_rich_markup_in_messages_is_printed_verbatim(make_ctx):
    text = output("full", [diag(message="use [bold]x[/bold]")], make_ctx(color=True))
    assert "use [bold]x[/bold]" in text


def test_show_fixes_follows_the_findings(make_ctx):
    ctx = make_ctx(show_fixes=True, fixed={"train.py": 1}, fixed_codes={"train.py": {"TL001": 1}})
    text = output("full", [diag(code="TL003", message="m")], ctx)
    assert text.endswith("\n\nFixed 1 finding:\n- train.py:\n    1 × TL001 (heavy-import-at-module-level)\n\n")
