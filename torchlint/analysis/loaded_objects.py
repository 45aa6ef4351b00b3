"""What the code does with a loaded checkpoint: read it as a state dict (tensors in
dicts), or as an object that `weights_only=True` refuses to unpickle (an
`argparse.Namespace` under `ckpt["args"]`, a config object at `ckpt.cfg`); and which
source a load reads, so that loads of one source across a project can be compared.

Real checkpoints that hold a training state carry such objects; `weights_only=True` then
fails with `UnpicklingError: Unsupported global argparse.Namespace`.
"""

from __future__ import annotations

import posixpath
from typing import Any, Collection, Dict, List, Optional, Tuple

from torchlint.analysis.value_kinds import NameKinds, cst_bindings
from torchlint.core.lazy import cst
from torchlint.analysis.names import cst_dotted_name
from torchlint.core.walk import walk

# keys under which a checkpoint keeps its run's arguments or configuration: objects
# (Namespace, OmegaConf, yacs CfgNode, Lightning's AttributeDict), not tensors
OBJECT_KEYS = frozenset(
    {"args", "opt", "opts", "cfg", "config", "conf", "hparams", "hp", "flags", "options",
     "hyper_parameters", "namespace", "argparse_args"}
)
_DICT_ATTRIBUTES = frozenset(dir(dict))


def object_read(call, scope, numpy_keys: Collection[str] = ()) -> Optional[str]:
    """How `scope` (the function or module around `call`) reads what `call` returns as an
    object rather than a dict of tensors: the text of the first such read
    (`ckpt["args"]`, `ckpt.cfg`, or a key in `numpy_keys`: see `numpy_saved_keys`), or None."""
    object_keys = OBJECT_KEYS.union(numpy_keys)
    bound = set()
    for node in walk(scope, into_functions=False):
        if isinstance(node, cst.Assign) and node.value is call:
            bound.update(target.target.value for target in node.targets if isinstance(target.target, cst.Name))
    # reads of the name before the load, or in a branch that excludes it, are of another value
    elsewhere = _other_branches(scope, call)
    after = False
    for node in walk(scope, into_functions=False):
        after = after or node is call
        holder = getattr(node, "value", None)
        if holder is not call and not (
            after and isinstance(holder, cst.Name) and holder.value in bound and id(node) not in elsewhere
        ):
            continue
        name = "torch.load(...)" if holder is call else holder.value
        if isinstance(node, cst.Attribute) and node.attr.value not in _DICT_ATTRIBUTES:
            return f"{name}.{node.attr.value}"
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            key = _string(node.slice[0].slice.value)
            if key in object_keys:
                return f'{name}["{key}"]'
    after = False
    for node in walk(scope, into_functions=False):  # `ckpt.get("args")`
        after = after or node is call
        if after and id(node) not in elsewhere and isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("get", "pop"):
            holder = node.func.value
            if (holder is call or (isinstance(holder, cst.Name) and holder.value in bound)) and node.args:
                key = _string(node.args[0].value)
                if key in object_keys:
                    name = "torch.load(...)" if holder is call else holder.value
                    return f'{name}.{node.func.attr.value}("{key}")'
    return None


def numpy_saved_keys(module, imports) -> Dict[str, str]:
    """The keys of the checkpoints this module saves (`torch.save({"best": acc, ...}, f)`,
    or a dict bound to a name and filled with `state["best"] = acc`) whose values are
    NumPy values, which `weights_only=True` refuses: key -> the value's code. A load in
    the same module that reads one of these keys reads such a checkpoint."""
    found: Dict[str, str] = {}
    scopes = [module, *(node for node in walk(module) if isinstance(node, cst.FunctionDef))]
    for scope in scopes:
        nodes = list(walk(scope, into_functions=False))
        bindings = cst_bindings(nodes)
        kinds = NameKinds(imports, bindings)
        saved = [node.args[0].value for node in nodes
                 if isinstance(node, cst.Call) and node.args and imports.qualified_name(node.func) == "torch.save"]
        entries = []
        for value in saved:
            dicts = [value] if isinstance(value, cst.Dict) else [
                bound for bound in bindings.get(value.value, ()) if isinstance(bound, cst.Dict)
            ] if isinstance(value, cst.Name) else []
            entries += [(element.key, element.value) for d in dicts for element in d.elements
                        if isinstance(element, cst.DictElement)]
            if isinstance(value, cst.Name):
                entries += _item_assignments(nodes, value.value)
        for key, item in entries:
            text = _string(key)
            if text is not None and kinds.is_numpy(item):
                found.setdefault(text, module.code_for_node(item))
    return found


def _item_assignments(nodes, name: str) -> List[Tuple[Any, Any]]:
    """(key, value) of each `name["key"] = value` among `nodes`."""
    pairs = []
    for node in nodes:
        if isinstance(node, cst.Assign):
            for target in node.targets:
                holder = target.target
                if (isinstance(holder, cst.Subscript) and isinstance(holder.value, cst.Name)
                        and holder.value.value == name and len(holder.slice) == 1
                        and isinstance(holder.slice[0].slice, cst.Index)):
                    pairs.append((holder.slice[0].slice.value, node.value))
    return pairs


def _other_branches(scope, call) -> set:
    """The ids of the nodes in the branches of an `if` that the load's branch excludes."""
    excluded = set()
    for node in walk(scope, into_functions=False):
        if isinstance(node, cst.If) and node.orelse is not None:
            in_body = any(inner is call for inner in walk(node.body))
            in_else = not in_body and any(inner is call for inner in walk(node.orelse))
            if in_body or in_else:
                excluded.update(id(inner) for inner in walk(node.orelse if in_body else node.body))
    return excluded


def _string(node) -> Optional[str]:
    text = node.evaluated_value if isinstance(node, cst.SimpleString) else None
    return text if isinstance(text, str) else None


def source_key(call) -> Optional[str]:
    """What a load reads, comparable across files: a dotted value without `self.`
    (`args.resume`, `cfg.MODEL.WEIGHTS`) or a literal file's name (`"model_best.pth"`,
    quoted). None for a bare name or a computed path, which say nothing beyond their
    function."""
    if not call.args or call.args[0].keyword is not None or call.args[0].star:
        return None
    value = call.args[0].value
    if isinstance(value, cst.Attribute):
        dotted = cst_dotted_name(value)
        if dotted:
            return dotted[len("self."):] if dotted.startswith("self.") else dotted
    text = _string(value)
    if text and posixpath.basename(text):
        return f'"{posixpath.basename(text)}"'
    return None
