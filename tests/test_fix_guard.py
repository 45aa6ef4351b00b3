"""The post-fix guard: a fix changes only what its edits say, or it is not applied."""

from __future__ import annotations

import ast

import pytest

from cli_support import run_torchlint
from extra_rules import run_with_rules, write_rule
from torchlint.fixing import guard as fix_guard

# the rule means to rewrite `import wandb, json` as `import json`, but its span ends one
# column short, as a position miscounted after a form feed does: `import jsonn` parses
WRONG_RANGE = '''
    def visit_Import(self, node):
        def fix(positions):
            end = positions.end(node)
            short = Location(end.row, end.column - 1)
            return Fix("keep json", (Edit(positions.start(node), short, "import json"),), Applicability.SAFE)
        self.report(node, "wrong range", fix=fix)
'''

# the fix opens a string before `y = 1` and closes it after: the result parses, and a
# statement no edit touched has vanished into a string
SWALLOWS = '''
    def visit_Import(self, node):
        def fix(positions):
            row = positions.end(node).row
            return Fix("swallow", (
                Edit(positions.start(node), positions.end(node), '_ = """'),
                Edit(Location(row + 2, 1), Location(row + 2, 1), '"""' + chr(10)),
            ), Applicability.SAFE)
        self.report(node, "swallows", fix=fix)
'''

# a fix whose result does not parse, next to a real rule's good fixes
BREAKS = '''
    def visit_Global(self, node):
        self.report(node, "breaks", fix=lambda p: Fix("break", (Edit(p.start(node), p.end(node), "global ("),), Applicability.SAFE))
'''


def _fix_with(tmp_path, code: str, visitor: str, select: str, name: str, source: bytes):
    """`torchlint check --fix` on one file with a test rule (`code`, its visitor method)
    added; (result, file, its stderr lines)."""
    write_rule(tmp_path / "plugins", code, visitor)
    target = tmp_path / "work" / name
    target.parent.mkdir()
    target.write_bytes(source)
    result = run_with_rules(tmp_path / "plugins", "check", "--fix", "--no-cache", "--select", select, name, cwd=target.parent)
    lines = [line for line in result.stderr.decode().splitlines() if line.strip()]
    return result, target, lines


@pytest.mark.parametrize(
    "code, visitor, source, problem",
    [
        ("TL990", WRONG_RANGE, b"import wandb, json\n\n\ndef f():\n    return json\n", "an edit at line 1 cuts a token in two"),
        ("TL991", SWALLOWS, b"import wandb\ny = 1\nprint(y)\n", "the statement at line 2 changed although no edit touched it"),
    ],
    ids=["wrong-range", "swallows-a-statement"],
)
def test_a_fix_that_changes_more_than_it_says_leaves_the_file_unchanged(tmp_path, code, visitor, source, problem):
    # the guard doing its job is a warning, not an internal error: the finding stays (exit 1)
    result, target, lines = _fix_with(tmp_path, code, visitor, code, "a.py", source)
    assert target.read_bytes() == source
    assert result.returncode == 1
    assert lines == [f"warning: a.py:1:1: the {code} fix was not applied ({problem}); the finding stays"]
    assert f"a.py:1:1: {code}" in result.stdout.decode()
    assert "internal error" not in result.stdout.decode()


def test_one_bad_fix_is_dropped_and_the_others_are_kept(tmp_path):
    source = b"import wandb\n\n\ndef f():\n    global g\n    wandb.init()\n"
    result, target, lines = _fix_with(tmp_path, "TL992", BREAKS, "TL001,TL992", "c.py", source)
    fixed = target.read_text()
    assert "import wandb" not in fixed.split("def f():")[0]  # TL001's fix was kept
    assert "    import wandb\n" in fixed and "    global g\n" in fixed
    assert result.returncode == 1
    assert len(lines) == 1 and lines[0].startswith("warning: c.py:5:5: the TL992 fix was not applied"), lines
    assert "does not parse" in lines[0]
    assert "c.py:4:5: TL992" in result.stdout.decode()  # where it is in the fixed file


CRITIC = (
    "import torch\nimport wandb\nfrom torch import nn\n\n\n"
    "class Critic(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.rnn = nn.GRU(8, 16, batch_first=True)\n\n    def forward(self, x):\n"
    "        out, _ = self.rnn(x)\n        return out[:, -1].sum(-1)\n\n\n"
    "def penalty(critic, real):\n    wandb.log(1)\n"
    "    grad, = torch.autograd.grad(critic(real).sum(), real, create_graph=True)\n    return grad\n\n\n"
    "def step(batch):\n    return penalty(Critic(), batch)\n"
)


def test_tab_indented_first_block_does_not_break_the_fixes_of_space_indented_blocks(tmp_path):
    # defect 13: TL004 indented its `with` body by the module's first indent (a tab), the
    # result did not parse, and TL001's good fix was dropped with it
    path = tmp_path / "tabs.py"
    path.write_text("def helper():\n\treturn 1\n\n\n" + CRITIC)
    result = run_torchlint("check", "--fix", "--unsafe-fixes", "--no-cache", "tabs.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode() + result.stdout.decode()
    fixed = path.read_text()
    ast.parse(fixed)
    assert "        with torch.backends.cudnn.flags(enabled=False):\n            out, _ = self.rnn(x)\n" in fixed
    assert "    import wandb\n\n    wandb.log(1)\n" in fixed and "\nimport wandb\n" not in fixed


def test_tab_indented_block_gets_a_tab_indented_wrapper(tmp_path):
    path = tmp_path / "alltabs.py"
    path.write_text(CRITIC.replace("    ", "\t"))
    result = run_torchlint("check", "--fix", "--unsafe-fixes", "--no-cache", "alltabs.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode() + result.stdout.decode()
    assert "\t\twith torch.backends.cudnn.flags(enabled=False):\n\t\t\tout, _ = self.rnn(x)\n" in path.read_text()


def _spans(before: str, edits):
    """(row, col, end_row, end_col, content), 1-based, as offsets."""
    starts = [0]
    for line in before.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return [(starts[r - 1] + c - 1, starts[er - 1] + ec - 1, text) for r, c, er, ec, text in edits]


def _apply(before: str, spans):
    for start, end, content in sorted(spans, reverse=True):
        before = before[:start] + content + before[end:]
    return before


def _check(before, edits):
    spans = _spans(before, edits)
    return fix_guard.check(before, _apply(before, spans), spans)


def test_guard_accepts_what_the_rules_do():
    module = "import wandb\n\n\n@decorator\ndef f():\n    '''doc'''\n    x = 1; y = 2\n    return wandb\n"
    # delete the import's line; insert an import after the docstring
    assert _check(module, [(1, 1, 2, 1, ""), (7, 1, 7, 1, "    import wandb\n")]) is None
    # wrap a statement in a `with` block
    assert _check(module, [(8, 1, 9, 1, "    with ctx():\n        return wandb\n")]) is None
    # append to a comment, replace a name
    assert _check("x = 1  # noqa: A\ny = x\n", [(1, 17, 1, 17, ",B"), (2, 5, 2, 6, "int(x)")]) is None


def test_guard_refuses_what_no_edit_says():
    module = "def f():\n    if x:\n        a = 1\n    b = 2\n"
    # an edit that re-nests `b = 2` under the `if` (the edit touches only line 3's end)
    assert _check(module, [(3, 14, 4, 1, "\n    ")]) is not None
    # an edit that cuts `wandb` in two
    assert "cuts a token" in _check("import wandb\n", [(1, 8, 1, 10, "")])


def test_a_form_feed_in_indentation_does_not_refuse_the_fixes(tmp_path):
    # the fixer's re-parse check gives LibCST the text as the engine does (form feeds
    # before indentation removed); given the raw text, LibCST refused every fix in the file
    path = tmp_path / "ff.py"
    path.write_text("import wandb\n\n\nclass A:\n\f    def f(self):\n        pass\n\n\ndef g():\n    return wandb\n")
    result = run_torchlint("check", "--fix", "--no-cache", "ff.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()
    assert path.read_text() == (
        "class A:\n\f    def f(self):\n        pass\n\n\ndef g():\n    import wandb\n\n    return wandb\n"
    )
