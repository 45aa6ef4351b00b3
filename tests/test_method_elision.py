"""The methods of a class that hold no rule's site are left out of the LibCST parse
(torchlint/core/partial_parse.py): their rows stay, empty, and what TL003/TL005 read of
the whole class (its settings, its CPU state) comes from the stdlib ast."""

from __future__ import annotations

import ast

import libcst as cst

from cli_support import run_torchlint
from torchlint.core.config import Config
from torchlint.core.partial_parse import elide_statements
from torchlint.core.source import split_lines
from torchlint.engine import lint_text
from torchlint.rule_api.registry import all_rules

TRAINER = '''import torch


class Trainer:
    def __init__(self, model):
        self.model = model
        self.steps = torch.zeros(1)

    # kept on the host: reading it syncs nothing
    def reset(self):
        self.steps = torch.zeros(1)

    def training_step(self, batch):
        loss = self.model(batch).mean()
        loss.backward()
        self.steps += 1
        print(self.steps.item(), loss.item())
        return loss

    def describe(self):
        return "trainer"
'''

MOVED_TO_GPU = TRAINER.replace(
    "    def describe(self):", "    def to_gpu(self):\n        self.steps = self.steps.cuda()\n\n    def describe(self):"
)


def _rows(text: str, needle: str) -> int:
    return next(row for row, line in enumerate(split_lines(text), 1) if needle in line)


def test_a_method_without_a_site_keeps_its_rows_as_one_string_and_the_others_stay_as_written():
    tree = ast.parse(TRAINER)
    sites = [_rows(TRAINER, "print(self.steps.item()")]
    elided = elide_statements(TRAINER, tree, {1}, sites)
    parsed = split_lines(elided.text)
    assert len(parsed) == len(split_lines(TRAINER))  # every row where the file has it
    for needle in ("def __init__", "def reset", "# kept on the host", "def describe", 'return "trainer"'):
        assert needle not in elided.text
    for needle in ("class Trainer", "def training_step", "print(self.steps.item()"):
        row = _rows(TRAINER, needle)
        assert parsed[row - 1] == split_lines(TRAINER)[row - 1]
    klass = elided.tree.body[1]
    assert [type(node).__name__ for node in klass.body] == ["Expr", "Expr", "FunctionDef", "Expr"]
    assert klass.body[2].name == "training_step"
    assert elided.whole(klass) is tree.body[1]  # the file's own class, whole
    # each left-out method is one string statement where the statement tree has it, and nothing else
    module = cst.parse_module(elided.text)
    statements = module.body[1].body.body
    kinds = [type(s).__name__ for s in statements]
    assert kinds == ["SimpleStatementLine", "SimpleStatementLine", "FunctionDef", "SimpleStatementLine"]
    assert sum(len(s.leading_lines) for s in statements) == 1  # the row between __init__ and reset is in a string
    for statement, placeholder in zip(statements, klass.body):
        if isinstance(placeholder, ast.Expr):
            assert placeholder.lineno <= placeholder.end_lineno
            assert isinstance(statement.body[0].value, cst.SimpleString)


ODD_LAYOUT = (
    "import torch\r\n\r\n\r\nclass Trainer:\r\n"
    "\tdef setup(self): self.steps = torch.zeros(1)\r\n"
    "\t# one row each\r\n"
    "\tdef training_step(self, batch):\r\n"
    "\t\tloss = self.model(batch).mean()\r\n"
    "\t\tloss.backward()\r\n"
    "\t\tprint(loss.item())\r\n"
    "\tdef name(self): return 'trainer'"
)


def test_left_out_methods_of_one_row_tabs_crlf_and_no_last_newline_keep_every_position():
    tree = ast.parse(ODD_LAYOUT)
    row = _rows(ODD_LAYOUT, "print(loss.item())")
    elided = elide_statements(ODD_LAYOUT, tree, {1}, [row])
    kept = split_lines(ODD_LAYOUT)
    assert split_lines(elided.text) == kept[:4] + ['\t""\r\n'] + kept[5:10] + ['\t""']
    assert len(split_lines(elided.text)) == len(split_lines(ODD_LAYOUT))
    assert "def setup" not in elided.text and "def name" not in elided.text
    ast.parse(elided.text)
    cst.parse_module(elided.text)
    rules = [rule for rule in all_rules() if rule.code == "TL003"]
    (finding,) = lint_text(ODD_LAYOUT, "trainer.py", Config(), rules).diagnostics
    line = split_lines(ODD_LAYOUT)[row - 1]
    assert (finding.location.row, finding.location.column) == (row, line.index("loss.item()") + 1)


NAMED = '''import torch


class Builder:
    pass


class Helper:
    pass


class Trainer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.builder = Builder()

    def training_step(self, batch):
        loss = Helper.loss(batch)
        print(loss.item())
        return loss
'''


def test_what_only_a_left_out_method_names_is_left_out_too():
    """`Builder` is named in `__init__` alone, which LibCST does not parse: no rule can
    follow the name there, so the class goes too; `Helper`, named where the site is, stays."""
    tree = ast.parse(NAMED)
    trainer = next(index for index, statement in enumerate(tree.body) if getattr(statement, "name", "") == "Trainer")
    elided = elide_statements(NAMED, tree, {trainer}, [_rows(NAMED, "print(loss.item())")])
    assert "class Builder" not in elided.text and "self.builder = Builder()" not in elided.text
    assert "class Helper" in elided.text and "class Trainer(torch.nn.Module)" in elided.text
    # a site in `__init__` turns it round: `training_step` is left out, and `Helper` with it
    elided = elide_statements(NAMED, tree, {trainer}, [_rows(NAMED, "self.builder = Builder()")])
    assert "class Builder" in elided.text and "class Helper" not in elided.text


ATTENTION_MAP = '''import torch


class EagerAttention(torch.nn.Module):
    def forward(self, x):
        return x.softmax(-1)


ATTENTION = {"eager": EagerAttention}


def train(model, loader, optimizer):
    for batch in loader:
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
        print(loss.item())
'''


def test_what_kept_code_names_is_parsed_only_for_a_rule_that_follows_names():
    """TL003 and TL005 read the definitions holding their sites alone: the class a
    module-level map names stays out of their parse, and is parsed again when a rule that
    follows names (any other, by default) runs on the file too."""
    from torchlint.analysis.source_view import SourceView
    from torchlint.engine import libcst_input

    by_code = {rule.code: rule for rule in all_rules()}
    assert not by_code["TL003"].follows_names and not by_code["TL005"].follows_names
    view = SourceView(ATTENTION_MAP, "train.py")
    _, elided = libcst_input(view, Config(), [by_code["TL003"], by_code["TL005"]])
    assert "class EagerAttention" not in elided.text and 'ATTENTION = {"eager": EagerAttention}' in elided.text

    class FollowsNames(by_code["TL003"]):
        follows_names = True

    _, elided = libcst_input(view, Config(), [by_code["TL003"], FollowsNames])
    assert elided is None  # every definition kept: nothing left out
    (finding,) = lint_text(ATTENTION_MAP, "train.py", Config(), [by_code["TL003"]]).diagnostics
    assert finding.location.row == _rows(ATTENTION_MAP, "print(loss.item())")


def test_a_site_outside_the_methods_keeps_the_class_whole():
    tree = ast.parse(TRAINER)
    elided = elide_statements(TRAINER, tree, {1}, [_rows(TRAINER, "class Trainer")])
    assert elided is None


def test_state_a_left_out_method_moves_to_the_gpu_still_counts():
    """`__init__`, `reset` and `to_gpu` hold no site, so LibCST does not parse them; the CPU
    state is read from the whole class: moved to the GPU in one method, `self.steps` is a device
    tensor, and reading it syncs."""
    rules = [rule for rule in all_rules() if rule.code == "TL003"]

    def synced_rows(text):
        return sorted(d.location.row for d in lint_text(text, "trainer.py", Config(), rules).diagnostics)

    row = _rows(TRAINER, "print(self.steps.item()")
    assert synced_rows(TRAINER) == [row]  # `loss.item()` only: `self.steps` stays on the CPU
    assert synced_rows(MOVED_TO_GPU) == [row, row]


def test_the_cli_reports_what_the_whole_class_makes_true(tmp_path):
    (tmp_path / "on_cpu.py").write_text(TRAINER)
    (tmp_path / "on_gpu.py").write_text(MOVED_TO_GPU)
    completed = run_torchlint(
        "check", "--no-cache", "--select", "TL003", "--output-format", "concise", ".", cwd=tmp_path
    )
    lines = completed.stdout.decode().splitlines()
    assert sum(line.startswith("on_gpu.py:") for line in lines) == 2
    assert sum(line.startswith("on_cpu.py:") for line in lines) == 1


HEAVY = '''import torch
import wandb


class Trainer:
    """Runs the steps."""

    def __init__(self, model):
        self.model = model

    def step(self, batch):
        return self.model(batch).sum()

    def log(self, value):
        wandb.log({"loss": value})
'''


def test_a_heavy_import_keeps_only_the_methods_that_name_it(tmp_path, monkeypatch):
    """TL001 moves `import wandb` into the functions that use it: of a class, it needs the
    methods naming it parsed, not the others (the class whole where its docstring, a
    class-level statement or a comment between methods names it)."""
    import torchlint.engine as engine

    rules = [rule for rule in all_rules() if rule.code == "TL001"]
    parsed = []
    parse = engine.parse_module
    monkeypatch.setattr(engine, "parse_module", lambda text: parsed.append(text) or parse(text))
    assert [d.code for d in lint_text(HEAVY, "trainer.py", Config(), rules).diagnostics] == ["TL001"]
    assert "def log" in parsed[-1] and "def step" not in parsed[-1] and "def __init__" not in parsed[-1]
    named_in_docstring = HEAVY.replace("Runs the steps.", "Runs the steps, logged to wandb.")
    lint_text(named_in_docstring, "trainer.py", Config(), rules)
    assert "def step" in parsed[-1]
    (tmp_path / "trainer.py").write_text(HEAVY)
    run_torchlint("check", "--no-cache", "--select", "TL001", "--fix", ".", cwd=tmp_path)
    fixed = (tmp_path / "trainer.py").read_text()
    assert fixed == HEAVY.replace("import wandb\n", "", 1).replace(
        '        wandb.log(', '        import wandb\n\n        wandb.log('
    )


def test_a_name_is_found_as_cpython_reads_it_whatever_the_other_lines_hold():
    """`names_none` decides which definitions a kept statement names (they stay parsed): a
    non-ASCII line is read NFKC-normalized, as CPython reads names, the others as written."""
    from torchlint.core.partial_parse import names_none

    few = {"foo": 1, "my_name": 1}.keys()
    many = {f"unused_{i}": 1 for i in range(20)} | {"foo": 1, "my_name": 1}
    for names in (few, many.keys()):
        assert names_none(names, True, "x = 1  # café\nbar = foobar()\n")
        assert not names_none(names, True, "# café\nx = ｆｏｏ()\n")  # fullwidth letters
        assert not names_none(names, True, "x = 1\ny = my﹏name()\n")  # a dashed low line is `_`
        assert not names_none(names, True, "x = foo\n")
    assert not names_none({"ｆｏｏ": 1}.keys(), False, "# café\n")  # a non-ASCII name may be spelled otherwise
