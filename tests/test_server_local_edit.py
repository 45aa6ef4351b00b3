"""After an edit inside top-level definitions the language server lints those definitions
alone (torchlint/integrations/server/local_edit.py) and shows their findings with the
others carried over; once typing pauses, a complete lint of the same text follows. Each
version's findings are compared with `torchlint check`'s on the same text."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from test_server_reuse import finding_key, _replaced, cli_findings, linted_versions  # noqa: E402
from torchlint.integrations.server import documents as documents_module  # noqa: E402
from torchlint.integrations.server import local_edit, reuse  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

SOURCE = '''import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dropout=0.1):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.conv(x))


def train(model, loader, optimizer):
    for images, targets in loader:
        optimizer.zero_grad(set_to_none=False)
        loss = (model(images) - targets).pow(2).mean()
        loss.backward()
        optimizer.step()
        print(loss.item())


def evaluate(model, loader):
    return [model(images).mean() for images, _ in loader]
'''

# (what the edit does, the edit, whether its findings come from a local lint)
EDITS = [
    ("a default inside a class", _replaced("dropout=0.1", "dropout=0.2"), True),
    ("a finding goes, inside the loop", _replaced("print(loss.item())", "print(loss.detach())"), True),
    ("it comes back", _replaced("print(loss.detach())", "print(loss.item())"), True),
    ("a finding appears in another function", _replaced("model(images).mean()", "model(images).mean().item()"), True),
    ("set_to_none=True", _replaced("set_to_none=False", "set_to_none=True"), True),
    ("an import: the module's context", _replaced("from torch import nn\n", "from torch import nn, optim\n"), False),
    ("a line added above findings: they move",
     _replaced("        super().__init__()\n", "        super().__init__()\n        pass\n"), True),
    ("a line added below every finding", _replaced("for images, _ in loader]", "for images, _ in loader\n    ]"), True),
]


def texts():
    text = SOURCE
    yield "opened", text, False
    for what, edit, local in EDITS:
        text = edit(text)
        yield what, text, local


def _found(linted) -> list:
    return _keys(linted.findings.diagnostics)


def test_an_edit_inside_definitions_is_linted_locally_and_settled_by_a_complete_lint(tmp_path, monkeypatch):
    monkeypatch.setattr(documents_module, "SETTLE_DELAY", 0.05)
    cli_root = tmp_path / "cli"
    cli_root.mkdir()
    shown, settled = linted_versions(tmp_path, [text for _, text, _ in texts()], pause=0.5)
    for latest, (what, text, expected_local) in zip(shown, texts()):
        assert _found(latest) == cli_findings(cli_root, text), what
        assert latest.local == expected_local, what
        assert (not latest.complete) == latest.local, what  # a local version is not complete: no fixes until it settles
    assert settled.complete and not settled.local
    assert _found(settled) == cli_findings(cli_root, list(texts())[-1][1])


def test_a_finding_outside_the_edit_that_depends_on_it_is_right_once_the_edit_settles(tmp_path, monkeypatch):
    """The double backward in `score` reaches the GRU of the class above it: a second
    `autograd.grad(create_graph=True)` line there adds "(and 1 more)" to the class's finding,
    which the local lint of `score` carries over unchanged until the complete lint."""
    monkeypatch.setattr(documents_module, "SETTLE_DELAY", 0.05)
    source = (FIXTURES / "seqgan" / "energy.py").read_text(encoding="utf-8")
    assert "    (grad,) = torch.autograd.grad(energy, x, create_graph=True)\n" in source
    edited = source.replace("    return -grad\n", "    _again = torch.autograd.grad(energy, x, create_graph=True)\n", 1)
    cli_root = tmp_path / "cli"
    cli_root.mkdir()
    (_, local), settled = linted_versions(tmp_path, [source, edited], pause=0.5)
    expected = cli_findings(cli_root, edited)
    assert local.local and _found(local) != expected
    assert any("(and 1 more)" in finding[-1] for finding in expected)
    assert settled.complete and _found(settled) == expected


@pytest.mark.parametrize("path", sorted(p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*.py")))
def test_a_default_changed_inside_a_definition_gives_the_clis_findings(path, tmp_path):
    """Every fixture: the first numeric default or literal of each top-level definition
    changed (the line count kept), its local findings against `torchlint check`'s."""
    source = (FIXTURES / path).read_text(encoding="utf-8")
    before = local_edit.outline(source)
    if before is None:
        pytest.skip("does not parse")
    from torchlint.core.config import Config
    from torchlint.engine import lint_text
    from torchlint.rule_api.registry import all_rules, selected_codes

    config = Config()
    codes = set(selected_codes(config))
    rules = [rule for rule in all_rules() if rule.code in codes]
    found = lint_text(source, "model.py", config, rules).diagnostics
    compared = 0
    for index, source_of in enumerate(map(before.source, range(len(before.offsets)))):
        edited_statement = _changed_digit(source_of)
        if edited_statement is None or source.count(source_of) != 1:
            continue
        edited = source.replace(source_of, edited_statement, 1)
        edit = local_edit.edited(before, edited)
        if edit is None:
            continue
        after = edit.after
        assert edit.changed == [index]
        assert after.tree.body[index].lineno == before.tree.body[index].lineno
        whole = ast.dump(ast.parse(edited), include_attributes=True)
        assert ast.dump(after.tree, include_attributes=True) == whole, "the outline is the whole text's parse"
        got = local_edit.local_findings(before, found, edit, "model.py", config, rules)
        if got is None:
            continue
        full = lint_text(edited, "model.py", config, rules).diagnostics
        assert _keys(got) == _keys(full), (path, index)
        compared += 1
    if not compared:
        pytest.skip("no definition with a digit to change that other definitions leave room to lint alone")


def test_lines_added_above_a_finding_whose_message_names_a_row_need_the_complete_lint():
    """TL208 names the row where CUDA came into use ("line 35"); a line added above it in
    another function moves that row, which a finding carried over cannot say."""
    from torchlint.core.config import Config
    from torchlint.engine import lint_text
    from torchlint.rule_api.registry import all_rules, selected_codes

    source = (FIXTURES / "correctness" / "training.py").read_text(encoding="utf-8")
    config = Config()
    rules = [rule for rule in all_rules() if rule.code in set(selected_codes(config))]
    found = lint_text(source, "model.py", config, rules).diagnostics
    assert any("(line " in d.message for d in found)
    before = local_edit.outline(source)
    first = next(i for i, s in enumerate(before.tree.body) if isinstance(s, ast.FunctionDef))
    assert before.spans[first][1] < min(d.location.row for d in found if "(line " in d.message)
    row = before.tree.body[first].body[0].lineno
    lines = source.splitlines(keepends=True)
    indent = lines[row - 1][: len(lines[row - 1]) - len(lines[row - 1].lstrip())]
    moved = "".join(lines[: row - 1] + [indent + "pass\n"] + lines[row - 1 :])
    edit = local_edit.edited(before, moved)
    assert edit is not None and edit.changed == [first]
    assert local_edit.local_findings(before, found, edit, "model.py", config, rules) is None
    lines[row - 1] = lines[row - 1].rstrip("\n") + "  # edited\n"  # an edit of the same function that keeps the rows
    same_rows = local_edit.edited(before, "".join(lines))
    assert local_edit.local_findings(before, found, same_rows, "model.py", config, rules) is not None


def _changed_digit(text: str):
    for position, character in enumerate(text):
        if character.isdigit() and (position == 0 or not (text[position - 1].isalnum() or text[position - 1] == "_")):
            return text[:position] + ("7" if character != "7" else "3") + text[position + 1 :]
    return None


def _keys(diagnostics) -> list:
    return sorted(finding_key(d) for d in diagnostics)


@pytest.mark.parametrize("edited_method", ["step_0", "last"])
def test_the_local_lint_is_linear_in_the_class_it_reads(edited_method):
    """A trainer whose methods call each other in a chain (tests/complexity_shapes.py): an
    edit of the first method (kept with everything that calls it) and of the last (which
    every method reaches), at n and 2n methods: the work may grow at most 2.2 times."""
    from complexity_shapes import self_call_chain
    from torchlint.core.config import Config
    from torchlint.engine import lint_text
    from torchlint.rule_api.registry import all_rules, selected_codes
    from work_counter import count_calls

    config = Config()
    rules = [rule for rule in all_rules() if rule.code in set(selected_codes(config))]

    def work(n: int) -> int:
        source = self_call_chain(n)["trainer.py"]
        name = "step_0" if edited_method == "step_0" else f"step_{n - 1}"
        found = lint_text(source, "trainer.py", config, rules).diagnostics
        before = local_edit.outline(source)
        line = f"        value = self.model(batch) * {0 if name == 'step_0' else n - 1}\n"
        header = f"    def {name}(self, batch):\n"
        edited = source.replace(header + line, header + line.replace("* ", "* 2 * "), 1)
        assert edited != source
        outcome = {}

        def run():
            edit = local_edit.edited(before, edited)
            outcome["found"] = local_edit.local_findings(before, found, edit, "trainer.py", config, rules)

        calls = count_calls(run)
        assert outcome["found"] is not None
        return sum(calls.values())

    work(5)  # imports and lookups happen before anything is counted
    small, large = work(60), work(120)
    assert large <= 2.2 * small, (small, large)


def test_a_method_under_an_if_in_the_class_body_is_not_blanked_out_of_its_block():
    """Blanking a method that is the only statement of an `if` in the class body would
    leave the block empty (a syntax error, TL000): only the body's own methods are blanked."""
    from torchlint.core.config import Config
    from torchlint.engine import lint_text
    from torchlint.rule_api.registry import all_rules, selected_codes

    config = Config()
    rules = [rule for rule in all_rules() if rule.code in set(selected_codes(config))]
    source = (
        "import torch\nfrom typing import TYPE_CHECKING\n\n\nclass Trainer:\n    if TYPE_CHECKING:\n"
        "        def helper(self):\n            return 1\n\n    def unused(self):\n        return 2\n\n"
        "    def step(self, batch):\n        loss = batch.sum() * 2\n        return loss\n"
    )
    edited = source.replace("* 2", "* 3")
    before = local_edit.outline(source)
    found = lint_text(source, "model.py", config, rules).diagnostics
    edit = local_edit.edited(before, edited)
    assert edit.rows is not None  # the method-level path
    got = local_edit.local_findings(before, found, edit, "model.py", config, rules)
    assert got is not None and _keys(got) == _keys(lint_text(edited, "model.py", config, rules).diagnostics)
    assert not any(d.code == "TL000" for d in got)


def test_an_edit_inside_a_method_parses_that_method_alone():
    """The outline after an edit inside one method of a class is the whole text's parse,
    with the class's other methods the very nodes of the version before (only the edited
    method was parsed), also for a decorated method and one whose rows follow a comment."""
    source = (
        "import torch\n\n\nclass Trainer:\n    scale = 2\n\n    def __init__(self):\n        self.steps = 0\n\n"
        "    # the step\n    @torch.no_grad()\n    def step(self, batch):\n        \"\"\"One step.\n\n        Twice.\"\"\"\n"
        "        return batch.sum() * 2\n\n"
        "    def other(self):\n        return 1\n"
    )
    before = local_edit.outline(source)
    edits = (("* 2", "* 3"), ("torch.no_grad()", "torch.inference_mode()"), ("steps = 0", "steps = 1"),
             ('Twice."""', 'Thrice."""'), ('"""One step.\n\n        Twice."""', "# One step.\n\n        pass  # Twice."))
    for old, new in edits:
        edited = source.replace(old, new)
        edit = local_edit.edited(before, edited)
        assert edit is not None and edit.rows is not None, new
        whole = ast.dump(ast.parse(edited), include_attributes=True)
        assert ast.dump(edit.after.tree, include_attributes=True) == whole, new
        assert edit.after.strings == reuse.string_rows(edited), new  # the rows inside strings, known at once
        kept = [a is b for a, b in zip(before.tree.body[1].body, edit.after.tree.body[1].body)]
        assert kept.count(False) == 1, new
    # the class-level statement alone too; an edit between statements (the comment) parses the
    # class, one that breaks the method nothing
    edit = local_edit.edited(before, source.replace("scale = 2", "scale = 3"))
    assert [a is b for a, b in zip(before.tree.body[1].body, edit.after.tree.body[1].body)].count(False) == 1
    edit = local_edit.edited(before, source.replace("# the step", "# the steps"))
    assert edit is not None and all(a is not b for a, b in zip(before.tree.body[1].body, edit.after.tree.body[1].body))
    assert local_edit.edited(before, source.replace("return 1", "return (1")) is None


def test_an_edit_of_a_class_docstring_lints_no_method_of_the_class(monkeypatch):
    """An edit inside a trainer's docstring is focused on the docstring: no rule has a site
    there, so LibCST parses nothing, and the methods' findings are carried over."""
    from torchlint.core.config import Config
    from torchlint.engine import lint_text
    from torchlint.rule_api.registry import all_rules, selected_codes
    import torchlint.engine as engine

    config = Config()
    rules = [rule for rule in all_rules() if rule.code in set(selected_codes(config))]
    source = (
        "import torch\n\n\nclass Trainer:\n    \"\"\"Runs 10 steps.\"\"\"\n\n"
        "    def training_step(self, batch):\n        loss = batch.sum()\n        print(loss.item())\n        return loss\n"
    )
    found = lint_text(source, "model.py", config, rules).diagnostics
    assert [d.code for d in found] == ["TL003"]
    before = local_edit.outline(source)
    edited = source.replace("10 steps", "20 steps")
    edit = local_edit.edited(before, edited)
    parsed = []
    monkeypatch.setattr(engine, "parse_module", lambda text: parsed.append(text))
    got = local_edit.local_findings(before, found, edit, "model.py", config, rules)
    assert parsed == [] and _keys(got) == _keys(found)


def test_a_focused_lint_resolves_no_finding_for_the_project_pass():
    """A method no code of its file calls may still run per step (a training loop in another
    file): its `.item()` waits for the project pass, with its position and fix resolved. The
    local lint keeps only the findings in its focus and leaves the project to the complete
    lint, so it resolves none of those; what it finds in the focus is the CLI's."""
    from torchlint.core.config import Config
    from torchlint.core.partial_parse import statement_span
    from torchlint.engine import lint_text
    from torchlint.rule_api.registry import all_rules, selected_codes

    source = (
        "import torch\n\n\nclass Trainer:\n"
        "    def update(self, batch):\n        loss = self.model(batch).mean()\n        loss.backward()\n"
        "        self.optimizer.step()\n        return loss\n\n"
        "    def record(self, loss):\n        self.history.append(loss.item())\n"
    )
    config = Config()
    rules = [rule for rule in all_rules() if rule.code in set(selected_codes(config))]
    whole = lint_text(source, "trainer.py", config, rules)
    assert {(pending.diagnostic.code, pending.diagnostic.location.row) for pending in whole.facts.pending} == {
        ("TL003", 12)
    }
    record = ast.parse(source).body[1].body[1]
    focused = lint_text(source, "trainer.py", config, rules, focus=[statement_span(record)])
    assert focused.facts.pending == []
    assert _keys(focused.diagnostics) == _keys(whole.diagnostics)
