"""A file's view and its shared analysis are freed by reference counting, not left to the
cyclic garbage collector (on a large tree that garbage was most of what gc collected)."""

import gc

from torchlint.core.config import Config
from torchlint.engine import lint_text
from torchlint.rule_api.registry import all_rules

# no finding (a finding's lazy fix holds its rule), but classes, methods and a training
# loop, so that the rules read the shared analysis: class graph, scopes, loop facts
SOURCE = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def train(model, loader, optimizer, criterion):
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
'''


def test_a_lint_leaves_no_view_or_analysis_to_the_cyclic_collector():
    rules = all_rules()
    result = lint_text(SOURCE, "train.py", Config(), rules)
    assert result.diagnostics == []
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        lint_text(SOURCE, "train.py", Config(), rules)
        gc.collect()
        left = {type(o).__name__ for o in gc.garbage}
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert not left & {"SourceView", "FileAnalysis", "RuleContext", "ClassGraph", "ScopeTable"}, sorted(left)[:20]
