"""What the code does with a loaded checkpoint: read it as a state dict (tensors in
dicts), or as an object that `weights_only=True` refuses to unpickle (an
`argparse.Namespace` under `ckpt["args"]`, a config object at `ckpt.cfg`); and which
source a load reads, so that loads of one source across a project can be compared.

Real checkpoints that hold a training state carry such objects; `weights_only=True` then
fails with `UnpicklingError: Unsupported global argparse.Namespace`.

Cost: `object_read` indexes a scope once (one walk) for all its loads, then looks only
at the reads of what each load is bound to; `numpy_saved_keys` walks each scope once.
"""

from __future__ import annotations

import ast
import bisect
import posixpath
import re
import threading
from typing import Any, Collection, Dict, List, NamedTuple, Optional, Tuple

from torchlint.analysis.value_kinds import (
    HOST_METHODS, OF_TENSOR_METHODS, TENSOR_METHODS, Kind, NameKinds, cst_bindings,
)
from torchlint.core.lazy import cst
from torchlint.analysis.names import ast_dotted_name, cst_dotted_name, resolve
from torchlint.analysis.statements import parameter_names
from torchlint.core.walk import children, walk

# keys under which a checkpoint keeps its run's arguments or configuration: objects
# (Namespace, OmegaConf, yacs CfgNode, Lightning's AttributeDict), not tensors
OBJECT_KEYS = frozenset(
    {"args", "opt", "opts", "cfg", "config", "conf", "hparams", "hp", "flags", "options",
     "hyper_parameters", "namespace", "argparse_args", "train_args", "training_args"}
)
_DICT_ATTRIBUTES = frozenset(dir(dict))
# attributes of a tensor: `ckpt.clone()` or `weight.shape` reads a tensor, not an object
_TENSOR_ATTRIBUTES = TENSOR_METHODS | OF_TENSOR_METHODS | HOST_METHODS | frozenset(
    {"shape", "dtype", "device", "size", "numel", "dim", "ndim", "ndimension", "T", "mT", "data", "grad",
     "requires_grad", "requires_grad_", "cpu", "copy_", "view", "view_as", "reshape", "permute", "transpose", "t",
     "type", "expand", "expand_as", "repeat", "split", "chunk", "narrow", "index_select", "gather", "add", "sub",
     "mul", "div", "matmul", "mm", "argmax", "argmin", "max", "min", "std", "var", "double", "short", "byte",
     "type_as", "new_zeros", "new_ones", "new_empty", "new_tensor", "fill_", "zero_", "is_cuda", "element_size",
     "nelement", "storage", "untyped_storage", "stride", "is_contiguous", "float_power", "eq", "ne", "any", "all"}
)
# Keys of training-framework checkpoints (mmengine/mmcv runners, Lightning, hand-written
# training loops), read after a load, that say the file is a training checkpoint, which
# keeps objects beside the weights (mmengine's `message_hub` holds `HistoryBuffer`s and
# its `meta` NumPy values and the config; a training state often keeps the optimizer or
# scheduler object itself, an AMP scaler, NumPy RNG states). Evidence of a training
# checkpoint, not proof of objects: the fix is withheld, not the finding.
# - read alone: a runner's own sections
RUNNER_KEYS = frozenset({"message_hub", "meta", "loops", "callbacks"})
# - a training state together with progress: `ckpt["optimizer"]` and `ckpt["epoch"]`
TRAINING_STATE_KEYS = frozenset(
    {"optimizer", "optimizers", "optimizer_states", "scheduler", "lr_scheduler", "lr_schedulers", "amp", "scaler"}
)
PROGRESS_KEYS = frozenset({"epoch", "iter", "iteration", "step", "global_step", "state_dict"})


class ObjectRead(NamedTuple):
    """A read of a loaded value as an object: its text; `training`: the reads are keys of
    a training checkpoint (`_training_checkpoint`), not an object's own, and the text
    says so in words."""

    text: str
    training: bool = False


def object_read(call, scope, numpy_keys: Collection[str] = ()) -> Optional[ObjectRead]:
    """How `scope` (the function or module around `call`) reads what `call` returns as an
    object rather than a dict of tensors: the first such read (`ckpt["args"]`,
    `ckpt.cfg`, or a key in `numpy_keys`: see `numpy_saved_keys`), or the keys that make
    it a training checkpoint (`RUNNER_KEYS`, or a key of `TRAINING_STATE_KEYS` with one of
    `PROGRESS_KEYS`), or None. An attribute of a tensor
    (`.clone()`, `.shape`) is no such read: the loaded value is then a tensor.

    Cost: one walk of the scope, kept for the next loads of the same scope (`_ScopeIndex`);
    then per load O(if-nesting + the candidate reads it looks at × if-nesting): the nodes
    holding the load, and the reads of the names it is bound to (and their `.get`/`.pop`)
    after it, instead of three walks of the scope and a walk of every `if` per load."""
    index = _scope_index(scope)
    where = index.position.get(id(call))
    if where is None:  # in a function or lambda nested in the scope: none of its reads are seen
        return None
    object_keys = OBJECT_KEYS.union(numpy_keys)
    bound = set(index.assigned.get(id(call), ()))
    # reads of the name before the load, or in a branch that excludes it, are of another value
    sides = index.sides(where)
    keys: Dict[str, str] = {}  # each string key read -> its read's text
    candidates = list(index.holding.get(id(call), ()))
    for name in bound:
        candidates += index.after(index.name_holders.get(name, ()), where)
    candidates.sort()
    for position, node in candidates:
        holder = node.value
        if holder is not call and not (position > where and index.apart(position, sides) is False):
            continue
        name = "torch.load(...)" if holder is call else holder.value
        if isinstance(node, cst.Attribute) and node.attr.value not in _DICT_ATTRIBUTES | _TENSOR_ATTRIBUTES:
            return ObjectRead(f"{name}.{node.attr.value}")
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            key = _string(node.slice[0].slice.value)
            if _is_object_key(key, object_keys):
                return ObjectRead(f'{name}["{key}"]')
            if key is not None:
                keys.setdefault(key, f'{name}["{key}"]')
    candidates = index.after(index.getters.get(id(call), ()), where - 1)  # `ckpt.get("args")`
    for name in bound:
        candidates += index.after(index.name_getters.get(name, ()), where - 1)
    candidates.sort()
    for position, node in candidates:
        if index.apart(position, sides) is False and node.args:
            key = _string(node.args[0].value)
            holder = node.func.value
            name = "torch.load(...)" if holder is call else holder.value
            if _is_object_key(key, object_keys):
                return ObjectRead(f'{name}.{node.func.attr.value}("{key}")')
            if key is not None:
                keys.setdefault(key, f'{name}.{node.func.attr.value}("{key}")')
    return _training_checkpoint(keys)


def _is_object_key(key: Optional[str], object_keys: Collection[str]) -> bool:
    """A key of `object_keys`, or one whose last word is an object key of `OBJECT_KEYS`
    (`"xp.cfg"`, `"model_args"`, `"train_config"`; not `"config_path"`)."""
    if key is None:
        return False
    return key in object_keys or re.split(r"[^0-9A-Za-z]+", key.lower())[-1] in OBJECT_KEYS


def _training_checkpoint(keys: Dict[str, str]) -> Optional[ObjectRead]:
    """The reads (key -> text) that make a loaded value a training checkpoint, joined."""
    runner = [text for key, text in keys.items() if key in RUNNER_KEYS]
    if runner:
        return ObjectRead(f"`{runner[0]}` is read", True)
    state = [text for key, text in keys.items() if key in TRAINING_STATE_KEYS]
    progress = [text for key, text in keys.items() if key in PROGRESS_KEYS]
    return ObjectRead(f"`{state[0]}` and `{progress[0]}` are read", True) if state and progress else None


class _ScopeIndex:
    """One walk of a scope (not into nested functions, classes or lambdas), in the order
    of `walk`: each node's position; the names each assignment's value is bound to; the
    nodes whose `.value` is a node (by its id) or a name; the `.get(...)`/`.pop(...)`
    calls by their receiver (node id or name); and for each node the `if`s with an `else`
    around it and on which side (a shared chain, so O(1) per node)."""

    def __init__(self, scope) -> None:
        self.scope = scope
        self.position: Dict[int, int] = {}
        self.assigned: Dict[int, List[str]] = {}
        self.holding: Dict[int, List[Tuple[int, Any]]] = {}
        self.name_holders: Dict[str, List[Tuple[int, Any]]] = {}
        self.getters: Dict[int, List[Tuple[int, Any]]] = {}
        self.name_getters: Dict[str, List[Tuple[int, Any]]] = {}
        self._chains: List[Optional[tuple]] = []  # per position: (id(if), side, outer chain) or None
        pruned = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
        stack = [(scope, None)]
        while stack:
            node, chain = stack.pop()
            position = len(self._chains)
            self.position[id(node)] = position
            self._chains.append(chain)
            if isinstance(node, cst.Assign):
                self.assigned.setdefault(id(node.value), []).extend(
                    target.target.value for target in node.targets if isinstance(target.target, cst.Name)
                )
            elif isinstance(node, cst.AnnAssign) and node.value is not None and isinstance(node.target, cst.Name):
                self.assigned.setdefault(id(node.value), []).append(node.target.value)  # `m: nn.Module = load(...)`
            holder = getattr(node, "value", None)
            if isinstance(holder, cst.Call):
                self.holding.setdefault(id(holder), []).append((position, node))
            elif isinstance(holder, cst.Name):
                self.name_holders.setdefault(holder.value, []).append((position, node))
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("get", "pop"):
                receiver = node.func.value
                self.getters.setdefault(id(receiver), []).append((position, node))
                if isinstance(receiver, cst.Name):
                    self.name_getters.setdefault(receiver.value, []).append((position, node))
            if type(node) in pruned and node is not scope:
                continue
            inner = children(node)
            if isinstance(node, cst.If) and node.orelse is not None:
                sides = {id(node.body): (id(node), 0, chain), id(node.orelse): (id(node), 1, chain)}
                stack.extend((child, sides.get(id(child), chain)) for child in reversed(inner))
            else:
                stack.extend((child, chain) for child in reversed(inner))

    def sides(self, position: int) -> Dict[int, int]:
        """The `if`s with an `else` around the node at `position`: id -> side (0: body)."""
        found = {}
        chain = self._chains[position]
        while chain is not None:
            found[chain[0]] = chain[1]
            chain = chain[2]
        return found

    def apart(self, position: int, sides: Dict[int, int]) -> bool:
        """Whether the node at `position` is in a branch of an `if` that excludes the
        side `sides` (see `sides`) stands on."""
        chain = self._chains[position]
        while chain is not None:
            side = sides.get(chain[0])
            if side is not None and side != chain[1]:
                return True
            chain = chain[2]
        return False

    @staticmethod
    def after(found: List[Tuple[int, Any]], position: int) -> List[Tuple[int, Any]]:
        """The entries of `found` (in position order) past `position`."""
        return list(found[bisect.bisect_right(found, (position, _LAST)):])


class _Last:
    """Compares after any node, so that `(position, _LAST)` sorts after every entry at
    `position`."""

    def __gt__(self, other) -> bool:
        return True

    def __lt__(self, other) -> bool:
        return False


_LAST = _Last()
_INDEXES = threading.local()
_KEPT = 16


def _scope_index(scope) -> _ScopeIndex:
    """The index of `scope`, kept (per thread) for the few scopes asked last: the loads of
    a scope are asked one after the other (LibCST nodes take no weak references)."""
    kept = getattr(_INDEXES, "kept", None)
    if kept is None:
        kept = _INDEXES.kept = {}
    index = kept.get(id(scope))
    if index is None or index.scope is not scope:
        if len(kept) >= _KEPT:
            kept.pop(next(iter(kept)))
        index = kept[id(scope)] = _ScopeIndex(scope)
    return index


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
        items = _item_assignments(nodes) if any(isinstance(value, cst.Name) for value in saved) else {}
        entries = []
        for value in saved:
            dicts = [value] if isinstance(value, cst.Dict) else [
                bound for bound in bindings.get(value.value, ()) if isinstance(bound, cst.Dict)
            ] if isinstance(value, cst.Name) else []
            entries += [(element.key, element.value) for d in dicts for element in d.elements
                        if isinstance(element, cst.DictElement)]
            if isinstance(value, cst.Name):
                entries += items.get(value.value, [])
        for key, item in entries:
            text = _string(key)
            if text is not None and kinds.is_numpy(item):
                found.setdefault(text, module.code_for_node(item))
    return found


def _item_assignments(nodes) -> Dict[str, List[Tuple[Any, Any]]]:
    """name -> (key, value) of each `name["key"] = value` among `nodes`. Cost: one pass."""
    pairs: Dict[str, List[Tuple[Any, Any]]] = {}
    for node in nodes:
        if isinstance(node, cst.Assign):
            for target in node.targets:
                holder = target.target
                if (isinstance(holder, cst.Subscript) and isinstance(holder.value, cst.Name)
                        and len(holder.slice) == 1 and isinstance(holder.slice[0].slice, cst.Index)):
                    pairs.setdefault(holder.value.value, []).append((holder.slice[0].slice.value, node.value))
    return pairs


def _string(node) -> Optional[str]:
    text = node.evaluated_value if isinstance(node, cst.SimpleString) else None
    return text if isinstance(text, str) else None


def source_key(call, constants: Optional[Dict[str, str]] = None) -> Optional[str]:
    """What a load reads, comparable across files: a dotted value without `self.`
    (`args.resume`, `cfg.MODEL.WEIGHTS`) or a literal file's name (`"model_best.pth"`,
    quoted), also through a module constant in `constants` (`module_strings`). None for
    another name or a computed path, which say nothing beyond their function."""
    if not call.args or call.args[0].keyword is not None or call.args[0].star:
        return None
    value = call.args[0].value
    if isinstance(value, cst.Attribute):
        return _path_key(cst_dotted_name(value), None)
    if isinstance(value, cst.Name) and constants:
        return _path_key(None, constants.get(value.value))
    return _path_key(None, _string(value))


def _path_key(dotted: Optional[str], text: Optional[str]) -> Optional[str]:
    """`source_key` of a dotted value or of a literal path."""
    if dotted:
        return dotted[len("self."):] if dotted.startswith("self.") else dotted
    if text and posixpath.basename(text):
        return f'"{posixpath.basename(text)}"'
    return None


def module_strings(module) -> Dict[str, str]:
    """The module's constants bound once, at module level, to a string (`CKPT = "a.pth"`).
    Cost: one pass over the module's top-level statements."""
    found: Dict[str, Optional[str]] = {}
    for statement in module.body:
        for small in getattr(statement, "body", ()) if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                name = small.targets[0].target.value
                found[name] = _string(small.value) if name not in found else None
    return {name: text for name, text in found.items() if text is not None}


class FunctionCheckpoints(NamedTuple):
    """What one function shows of the files it loads (`function_checkpoints`)."""

    saved_object: Any  # the first value it saves with `torch.save` that is not a state dict, or None
    calls_fairseq: bool  # it calls into fairseq (`fairseq.checkpoint_utils.load_model_ensemble_and_task`)
    returned: frozenset  # ids of the calls whose result it returns, moved or not (`torch.load(p).to(x)`)


def function_checkpoints(function, imports) -> FunctionCheckpoints:
    """What `function` shows of the checkpoints it loads, each a reason `weights_only=True`
    would refuse them:
    - `saved_object`: a load in a function that saves an object reads back what it saved
      (a round trip through a buffer or a temporary file). A `.state_dict()` call, a dict
      display, and a name (not a parameter) the function binds to a dict display or to what
      it loaded (a checkpoint saved again) count as state dicts, not objects;
    - `calls_fairseq`: a checkpoint it loads is then fairseq's, which keeps an
      `argparse.Namespace` or a config and fairseq's `Dictionary` beside the weights;
    - `returned`: with the function's return annotation (`returned_as_module`), a load it
      returns as a module.
    Cost: one walk of the function (the caller keeps the answer per function)."""
    saved = []
    dict_like = set()
    calls_fairseq = False
    returned = set()
    for node in walk(function, into_functions=False):
        if isinstance(node, cst.Assign) and (
                isinstance(node.value, (cst.Dict, cst.DictComp))
                or (isinstance(node.value, cst.Call) and imports.qualified_name(node.value.func) == "torch.load")):
            dict_like.update(target.target.value for target in node.targets if isinstance(target.target, cst.Name))
        elif isinstance(node, cst.Call):
            qualified = imports.qualified_name(node.func) or ""
            calls_fairseq = calls_fairseq or qualified.startswith("fairseq.")
            if qualified == "torch.save" and node.args and node.args[0].keyword is None:
                saved.append(node.args[0].value)
        elif isinstance(node, cst.Return) and node.value is not None:
            value = node.value
            while (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                   and value.func.attr.value in _SAME_MODULE):
                returned.add(id(value))
                value = value.func.value
            returned.add(id(value))
    parameters = set(parameter_names(function)) if isinstance(function, cst.FunctionDef) else set()
    saved_object = next((value for value in saved if not _state_dict_like(value, dict_like - parameters)), None)
    return FunctionCheckpoints(saved_object, calls_fairseq, frozenset(returned))


def _state_dict_like(value, dict_names) -> bool:
    """Whether a value saved with `torch.save` is a state dict rather than an object (see
    `function_checkpoints`)."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "state_dict":
        return True
    return isinstance(value, (cst.Dict, cst.DictComp)) or (isinstance(value, cst.Name) and value.value in dict_names)


def returned_as_module(function, call, facts: FunctionCheckpoints) -> Optional[str]:
    """The return annotation (`nn.Module`) of `function` when it returns what `call` loads,
    moved or not (`facts.returned`): the file then holds a whole module, which
    `weights_only=True` refuses. Cost: O(1) with the function's `function_checkpoints`."""
    returns = getattr(function, "returns", None)
    annotation = cst_dotted_name(returns.annotation) if returns is not None else None
    if annotation is None or not annotation.rsplit(".", 1)[-1].endswith("Module"):
        return None
    return annotation if id(call) in facts.returned else None


def saves_own_instance(class_node, imports) -> bool:
    """Whether a method of `class_node` saves the instance itself whole,
    `torch.save(self, path)` (`TimeSeriesDataSet.save`, a model's `save_pretrained`): the
    class's own loads then read such files, which `weights_only=True` refuses whatever
    the path. Cost: one walk of the class (the caller keeps the answer per class)."""
    for node in walk(class_node):
        if (isinstance(node, cst.Call) and node.args and isinstance(node.args[0].value, cst.Name)
                and node.args[0].value.value == "self" and node.args[0].keyword is None
                and imports.qualified_name(node.func) == "torch.save"):
            return True
    return False


# ---- what a project saves whole (stdlib ast) ------------------------------------------

# names under which code keeps a module or optimizer object (`model`, `netG`, `resnet`)
_OBJECT_NAMES = frozenset({"generator", "discriminator", "optimizer", "optim", "network", "netg", "netd", "encoder",
                           "decoder", "module"})
# methods that return the module they are called on
_SAME_MODULE = frozenset({"to", "cuda", "cpu", "eval", "train", "half", "float", "double", "requires_grad_"})


def ast_object_saves(calls: List[ast.Call], assigns: List[ast.Assign], tree: ast.Module, table) -> List[str]:
    """Where the file saves a whole object (a module, an optimizer, a dict holding one)
    with `torch.save`, rather than a `state_dict` or tensors: the destinations'
    `source_key`s. A load of that file with `weights_only=True` fails (`UnpicklingError`),
    whatever torch. An object is a value named like one (`model`, `self.net`, `netG`,
    `generator`, `optimizer`), a name bound only to a class's instance (`srresnet =
    SRResNet(...)`), moved or not (`.to(device)`, `.eval()`), or a dict holding one.

    Cost: one pass over the file's assignments and calls."""
    built: Dict[str, bool] = {}  # name -> bound only to a class's instance
    for node in assigns:
        for target in node.targets:
            if isinstance(target, ast.Name):
                built[target.id] = built.get(target.id, True) and _constructed(node.value)
    constants: Dict[str, Optional[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            text = node.value.value if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str) else None
            constants[node.targets[0].id] = text if node.targets[0].id not in constants else None
    found = []
    for call in calls:
        if resolve(ast_dotted_name(call.func), table) != "torch.save" or not call.args:
            continue
        destination = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "f"), None)
        if destination is None or not _ast_object(call.args[0], built):
            continue
        if isinstance(destination, ast.Name):
            key = _path_key(None, constants.get(destination.id))
        elif isinstance(destination, ast.Constant) and isinstance(destination.value, str):
            key = _path_key(None, destination.value)
        else:
            key = _path_key(ast_dotted_name(destination) if isinstance(destination, ast.Attribute) else None, None)
        if key is not None and key not in found:
            found.append(key)
    return found


def _constructed(value: ast.AST) -> bool:
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _SAME_MODULE:
        value = value.func.value
    if not isinstance(value, ast.Call):
        return False
    name = ast_dotted_name(value.func) or ""
    last = name.rsplit(".", 1)[-1]
    return last[:1].isupper() and not name.startswith("torch.") and last not in ("Tensor", "FloatTensor", "LongTensor")


def _object_name(name: str) -> bool:
    lowered = name.lower()
    return lowered in _OBJECT_NAMES or lowered.endswith(("model", "net"))


def _ast_object(value: ast.AST, built: Dict[str, bool], depth: int = 0) -> bool:
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _SAME_MODULE:
        value = value.func.value
    if isinstance(value, ast.Dict):
        return depth < 2 and any(item is not None and _ast_object(item, built, depth + 1) for item in value.values)
    if isinstance(value, ast.Call):
        return _constructed(value)
    if isinstance(value, ast.Name):
        return _object_name(value.id) or built.get(value.id, False)
    if isinstance(value, ast.Attribute):
        if value.attr == "module" and isinstance(value.value, (ast.Name, ast.Attribute)):
            return _ast_object(value.value, built, depth)  # `model.module` of DataParallel
        return _object_name(value.attr)
    return False
