"""Loss code: where a host value costs a sync on every step and has a standard rewrite.

A loss runs on every training step. A value it needs on the host (a `topk` k, a
Python `min`/`max`, a branch) makes each step wait for the GPU, and is where a CUDA
fault launched earlier surfaces (the OCR detector's hard-negative mining, issue 22).
Loss code is the `forward` of a loss module (a class whose name or base's name ends in
`Loss`, as torch's `_Loss` and `_WeightedLoss` do, or `Criterion`, as fairseq's do) and a function or
method whose name ends in `loss` or `losses` or has either as a word (`dice_loss`, `compute_loss`,
`loss_fn`, `_compute_losses`). It is also what the instance a hot loop calls as its criterion runs
(`criterion = FocalWeighting()`, then `loss = criterion(out, y); loss.backward()`): that class's
`forward` (or `__call__`). Only the training loop facts of every file can tell
(`loop_graph.LoopGraph.criteria`), so a host value in a `forward` that may be one
(`may_be_criterion`) waits for them (`torchlint.analysis.hot_paths`).

Cost: `is_loss_code`, `may_be_criterion` O(the class's bases); `host_value_rewrite` see there
(linear in a method with one memo per method).
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional

from torchlint.core.lazy import cst
from torchlint.analysis.names import cst_dotted_name

# what the name of a loss module ends in: torch's `_Loss`, fairseq's `FairseqCriterion`
_LOSS_CLASS_ENDINGS = ("loss", "criterion")
_LOSS_WORDS = ("loss", "losses")
_REWRITES = {
    "topk": "sort once and mask by rank instead of `topk` with a host `k` (hard-negative mining)",
    "minmax": "use `clamp_min`/`clamp_max` (or `torch.minimum`/`torch.maximum`) instead of Python `min`/`max`",
    "branch": "use `torch.where` instead of a Python branch",
}


# words that put a loss-named method on the evaluation side (`val_loss`, `eval_loss`, `test_loss`) or make it
# report or keep a loss rather than compute one (`_log_loss`, `plot_loss`, `reset_loss`)
_NOT_COMPUTING_WORDS = frozenset({
    "val", "valid", "validation", "eval", "evaluate", "evaluation", "test", "predict",
    "log", "print", "plot", "record", "save", "show", "display", "write", "report", "track", "visualize", "dump",
    "format", "reset", "set",
})


def is_loss_name(name: str) -> bool:
    """A name that says it computes a loss or losses: ends in `loss` or `losses`, or has either as a word
    (`dice_loss`, `compute_loss`, `loss_fn`, `loss_by_feat`, detectron2's `losses`, `_compute_losses`)."""
    name = name.lower()
    words = name.split("_")
    return name.endswith(_LOSS_WORDS) or any(word in words for word in _LOSS_WORDS)


def is_training_loss_name(name: str) -> bool:
    """A loss name with no word of evaluation or of reporting in it: a module's method or a
    function so named runs on every training step (`loss`, `loss_by_feat`, `compute_loss`,
    `dice_loss`; not `val_loss`, `_log_loss`)."""
    return is_loss_name(name) and not _NOT_COMPUTING_WORDS & set(name.lower().strip("_").split("_"))


def is_loss_code(function, class_node) -> bool:
    name = function.name.value
    if is_loss_name(name):
        return True
    if class_node is None or name != "forward":
        return False
    names = [class_node.name.value] + [cst_dotted_name(base.value) or "" for base in class_node.bases]
    return any(part.rsplit(".", 1)[-1].lower().endswith(_LOSS_CLASS_ENDINGS) for part in names)


CRITERION_METHODS = ("forward", "__call__")  # what calling an instance runs


def may_be_criterion(function, class_node) -> bool:
    return class_node is not None and function.name.value in CRITERION_METHODS


def host_value_rewrite(call, parents: Mapping, uses: Mapping[str, List], memo: Optional[Dict] = None) -> Optional[str]:
    """The sync-free rewrite that fits how a host value is used, if there is a standard
    one: followed through the names it is bound to (two assignments deep).
    Cost: O(the statement around the call) plus, per name followed, O(its reads × their
    statements) the first time; with a `memo` (one per `uses`) a name's part is kept, so
    a method costs that once per name however many calls bind it."""
    if memo is None:
        memo = {}
    found = set(_use_kinds([call], parents))
    target = _bound_name(call, parents)
    if target is not None:
        found |= _first_kinds(target, parents, uses, memo)
        found |= _second_kinds(target, parents, uses, memo)
    return next((_REWRITES[kind] for kind in ("topk", "minmax", "branch") if kind in found), None)


def _reads(name: str, parents: Mapping, uses: Mapping[str, List]) -> List:
    return [n for n in uses.get(name, ()) if not _is_target(n, parents)]


def _first_kinds(name: str, parents: Mapping, uses: Mapping[str, List], memo: Dict) -> set:
    """How the reads of `name` use it."""
    key = ("first", name)
    if key not in memo:
        memo[key] = _use_kinds(_reads(name, parents, uses), parents)
    return memo[key]


def _second_kinds(name: str, parents: Mapping, uses: Mapping[str, List], memo: Dict) -> set:
    """How the reads of the names the reads of `name` are bound to use them."""
    key = ("second", name)
    if key not in memo:
        kinds: set = set()
        for read in _reads(name, parents, uses):
            bound = _bound_name(read, parents)
            if bound is not None:
                kinds |= _first_kinds(bound, parents, uses, memo)
        memo[key] = kinds
    return memo[key]


def _use_kinds(nodes, parents: Mapping) -> set:
    kinds = set()
    for node in nodes:
        child, parent = node, parents.get(node)
        while parent is not None and not isinstance(parent, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            if isinstance(parent, cst.Call):
                func = parent.func
                last = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
                if last == "topk":
                    kinds.add("topk")
                elif isinstance(func, cst.Name) and last in ("min", "max"):
                    kinds.add("minmax")
            if isinstance(parent, (cst.If, cst.While, cst.IfExp)) and child is parent.test:
                kinds.add("branch")
            child, parent = parent, parents.get(parent)
        if isinstance(parent, (cst.If, cst.While)) and child is parent.test:
            kinds.add("branch")
    return kinds


def _bound_name(node, parents: Mapping) -> Optional[str]:
    """The name an expression's value is assigned to (`k = int(x.item())`, `n = min(...)`)."""
    parent = parents.get(node)
    while parent is not None and not isinstance(parent, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and type(parent.targets[0].target) is cst.Name:
            return parent.targets[0].target.value
        parent = parents.get(parent)
    return None


def _is_target(name, parents: Mapping) -> bool:
    holder = parents.get(name)
    return isinstance(holder, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) and getattr(holder, "target", None) is name
