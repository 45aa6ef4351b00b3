"""The language server's lint after an edit inside one method analyses that method anew
and reads the others' facts from the version before (torchlint/analysis/definition_memo.py):
the same findings as with nothing kept, and walks that do not grow with the methods kept."""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from torchlint.analysis import class_graph as class_graph_module
from torchlint.analysis import training_loops
from torchlint.analysis.definition_memo import NO_MEMO, DefinitionMemo
from torchlint.analysis.source_view import SourceView
from torchlint.core.config import Config
from torchlint.integrations.server import local_edit
from torchlint.rule_api.registry import all_rules

RULES = list(all_rules())
CONFIG = Config()


def trainer(methods: int) -> str:
    """A trainer whose training loop calls every method, each reading a loss on the host."""
    calls = "\n".join(f"            self.part_{i}(loss)" for i in range(methods))
    parts = "".join(
        f"""
    def part_{i}(self, loss):
        total = loss * {i + 1}
        self.log_value(total.item())
        return total
"""
        for i in range(methods)
    )
    return f"""import torch
from torch import nn


class Trainer:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader
        self.criterion = nn.MSELoss()
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def fit(self):
        for x, y in self.loader:
            loss = self.criterion(self.model(x), y)
            loss.backward()
            self.optimizer.step()
{calls}

    def log_value(self, value):
        print(value)
{parts}"""


def edits(text: str, count: int):
    """`count` versions of `text`, each changing one digit of a method after the previous one's."""
    rows = [index for index, line in enumerate(text.splitlines(True)) if re.search(r"loss \* \d", line)]
    for number in range(count):
        lines = text.splitlines(True)
        row = rows[(number * 7) % len(rows)]
        lines[row] = lines[row].replace("loss * ", "loss * 1", 1)
        text = "".join(lines)
        yield text


def local_versions(text: str, count: int, compare: bool = True):
    """(edit, findings with the memo, findings with nothing kept unless not `compare`) of each version."""
    before = local_edit.outline(text)
    found = local_edit.lint_text(text, "trainer.py", CONFIG, RULES).diagnostics
    for new in edits(text, count):
        edit = local_edit.edited(before, new)
        assert edit is not None and edit.member is not None, "an edit inside one method"
        kept = local_edit.local_findings(before, found, edit, "trainer.py", CONFIG, RULES)
        anew = None
        if compare:
            fresh = replace(edit, after=replace(edit.after, memo=DefinitionMemo()))
            anew = local_edit.local_findings(before, found, fresh, "trainer.py", CONFIG, RULES)
        yield edit, kept, anew
        before, found = edit.after, kept


def keys(diagnostics):
    return [(d.code, d.location, d.end_location, d.message) for d in diagnostics]


def test_the_memo_gives_the_findings_of_a_lint_that_keeps_nothing():
    versions = list(local_versions(trainer(12), 6))
    assert any(d.code == "TL003" for _, kept, _ in versions for d in kept), "the trainer's host reads are found"
    for _, kept, anew in versions:
        assert keys(kept) == keys(anew)


def _walks(monkeypatch, methods: int) -> int:
    """The method walks of the loop facts and the class graph in the lints of three edits."""
    walked = []
    walk_owner, self_calls = training_loops._Facts._walk_owner, class_graph_module.ClassGraphBuilder._self_calls
    monkeypatch.setattr(training_loops._Facts, "_walk_owner", lambda *a: walked.append(1) or walk_owner(*a))
    monkeypatch.setattr(
        class_graph_module.ClassGraphBuilder, "_self_calls", lambda *a: walked.append(1) or self_calls(*a)
    )
    versions = local_versions(trainer(methods), 4, compare=False)
    next(versions)  # the first lint of the outline analyses every method
    walked.clear()
    for _ in versions:
        pass
    monkeypatch.undo()
    return len(walked)


def test_an_edit_walks_only_the_edited_method(monkeypatch):
    at_n, at_2n = _walks(monkeypatch, 20), _walks(monkeypatch, 40)
    assert at_n == at_2n, (at_n, at_2n)


def test_the_node_index_is_the_walks_whatever_was_kept():
    text = trainer(5) + "\n\nasync def later():\n    class Local:\n        pass\n    return Local\n"
    memo = DefinitionMemo()
    first = SourceView(text, "trainer.py", ast.parse(text), memo=memo)._index
    tree = ast.parse(text)
    plain = SourceView(text, "trainer.py", tree)._index
    again = SourceView(text, "trainer.py", tree, memo=memo.following())._index
    assert [type(n) for kind in first for n in first[kind]] == [type(n) for kind in plain for n in plain[kind]]
    assert list(plain) == list(again) and all(plain[kind] == again[kind] for kind in plain)


def test_a_kept_methods_criterion_calls_name_this_versions_class():
    text = trainer(3)
    versions = local_versions(text, 2)
    edit, _, _ = next(versions)
    edit, _, _ = next(versions)
    view = SourceView(edit.after.text, "trainer.py", edit.after.tree, memo=edit.after.memo)
    _, criteria = training_loops.build_loop_facts(view)
    (klass,) = [node for node in edit.after.tree.body if isinstance(node, ast.ClassDef)]
    fit = next(found for found in criteria if found.owner.endswith("Trainer.fit"))
    assert fit.class_node is klass


def test_a_result_is_read_back_for_the_same_node_in_an_equal_context():
    node = ast.parse("def f():\n    pass\n").body[0]
    computed = []
    memo = DefinitionMemo()

    def compute():
        computed.append(1)
        return len(computed)

    assert memo.result(node, "facts", ("a",), compute) == 1
    later = memo.following()
    assert later.result(node, "facts", ("a",), compute) == 1
    assert later.result(node, "facts", ("b",), compute) == 2, "another context: computed anew"
    other = ast.parse("def f():\n    pass\n").body[0]
    assert later.result(other, "facts", ("b",), compute) == 3, "an equal node is not the same node"
    assert NO_MEMO.result(node, "facts", ("b",), compute) == 4


def test_an_entry_no_lint_reads_goes_after_kept_for_versions():
    node = ast.parse("x = 1\n").body[0]
    memo = DefinitionMemo()
    memo.result(node, "facts", None, lambda: "first")
    for _ in range(DefinitionMemo.KEPT_FOR):
        memo = memo.following()
    assert memo.result(node, "facts", None, lambda: "second") == "first"
    for _ in range(DefinitionMemo.KEPT_FOR + 1):
        memo = memo.following()
    assert memo.result(node, "facts", None, lambda: "third") == "third"
