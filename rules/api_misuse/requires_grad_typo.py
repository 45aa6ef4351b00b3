from __future__ import annotations

import ast
from functools import cached_property

from torchlint.core.diagnostics import Applicability, Fix
from torchlint.core.lazy import cst
from torchlint.rule_api.rule import Invalid, Rule

# misspellings of `requires_grad` seen in real code; each is a new, unused attribute
TYPOS = frozenset({"require_grad", "require_grads", "requires_grads", "required_grad", "requires_gard", "requries_grad"})
_OWNERS = ("self", "cls")


class RequiresGradTypo(Rule):
    """
    ## What it does
    Flags an assignment to a misspelled `requires_grad` attribute: `p.require_grad = False`
    (also `requires_grads`, `required_grad`, `requires_gard`, `requries_grad`). An
    attribute of `self` or `cls` itself (`self.require_grad = flag`, a setting of the
    class) is not reported.

    ## Why is this bad?
    Tensors and parameters accept any attribute, so the line runs without error and
    sets a new attribute nobody reads: the parameter keeps training (or stays frozen).
    A "frozen" backbone that still trains, or a layer meant to train that never does,
    shows only in the results.

    ## Example
    ```python
    for p in backbone.parameters():
        p.require_grad = False
    ```

    ## Use instead
    ```python
    for p in backbone.parameters():
        p.requires_grad = False
    ```

    ## Fix safety
    Unsafe fix: renames the attribute to `requires_grad`. The intent is plain, but the
    behaviour changes: the parameters are really frozen (or trained) from then on, so
    results, optimizer state and memory use change, and the code may have been tuned
    around the old behaviour. No fix when the file also reads the misspelled attribute
    (`if p.require_grad:`), which the rename would leave reading a value never set.
    """

    code = "TL203"
    name = "requires-grad-typo"
    summary = "Assignment to a misspelled requires_grad attribute (a silent no-op)"
    fixable = True
    triggers = ("require_grad", "requires_grads", "required_grad", "requires_gard", "requries_grad")

    VALID = (
        "def freeze(model):\n    for p in model.parameters():\n        p.requires_grad = False\n",
        "class Block:\n    def __init__(self, require_grad):\n        self.require_grad = require_grad\n",
        "def f(x, require_grad=True):\n    return x.clone().requires_grad_(require_grad)\n",
        "def f(flags, p):\n    flags[p.require_grad] = 1\n",
    )
    INVALID = (
        Invalid(
            "def freeze(model):\n    for p in model.backbone.parameters():\n        p.require_grad = False\n",
            unsafe_fixed="def freeze(model):\n    for p in model.backbone.parameters():\n        p.requires_grad = False\n",
            line=3,
            column=9,
        ),
        Invalid(
            "class M:\n    def freeze(self):\n        self.weight.requires_grads = False\n",
            unsafe_fixed="class M:\n    def freeze(self):\n        self.weight.requires_grad = False\n",
            line=3,
            column=9,
        ),
        # the misspelled attribute is read too: flagged, not fixed
        Invalid(
            "def f(p):\n    p.require_grad = True\n    return p.require_grad\n",
            line=2,
            column=5,
        ),
    )

    @classmethod
    def sites(cls, view, config) -> list:
        return [node for node in view.nodes_of(ast.Attribute) if node.attr in TYPOS and isinstance(node.ctx, ast.Store)]

    def visit_Assign(self, node) -> None:
        for target in node.targets:
            self._check(target.target)

    def visit_AugAssign(self, node) -> None:
        self._check(node.target)

    def visit_AnnAssign(self, node) -> None:
        self._check(node.target)

    def _check(self, target) -> None:
        for node in _targets(target):
            if not isinstance(node, cst.Attribute) or node.attr.value not in TYPOS:
                continue
            if isinstance(node.value, cst.Name) and node.value.value in _OWNERS:
                continue
            typo = node.attr.value
            fix = None
            if not self._read(typo):
                def fix(positions, attr=node.attr):
                    return Fix(
                        "Rename to `requires_grad`", (positions.replace(attr, "requires_grad"),), Applicability.UNSAFE
                    )
            self.report(
                node,
                f"`.{typo}` is not `.requires_grad`: the assignment sets an attribute nothing reads, "
                "so gradients are tracked as before",
                fix,
            )

    def _read(self, typo: str) -> bool:
        return typo in self._typos_read

    @cached_property
    def _typos_read(self) -> frozenset:
        """The misspelt attributes this file reads anywhere."""
        return frozenset(
            node.attr for node in self.context.view.nodes_of(ast.Attribute)
            if node.attr in TYPOS and isinstance(node.ctx, ast.Load)
        )


def _targets(target):
    """The assigned expressions of a target, through tuples and lists (`a.x, b.y = ...`);
    not what they contain (`d[p.require_grad] = 1` reads the attribute)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [node for element in target.elements for node in _targets(element.value)]
    return [target]
