"""What a `torch.load` (or `torch.hub.load_state_dict_from_url`, alias
`torch.utils.model_zoo.load_url`) call unpickles, and from
where: shared by TL201 (unrestricted loads) and TL209 (unrestricted loads of a file
that comes from outside), so that one call is one finding.

Facts (torch/serialization.py, torch/hub.py):
- `torch.load` took `weights_only` in 1.13; its default became True in 2.6. Passing a
  `pickle_module` makes the default False in every version, and `weights_only=True`
  with a `pickle_module` raises.
- `torch.hub.load_state_dict_from_url` took `weights_only` in 2.1 (pytorch/pytorch#98479)
  and defaults to False in every version (2.13 included).

Cost: O(call) per load; `outside_source` is linear in the source expression.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional, Set

from torchlint.analysis.call_arguments import has_double_star, keyword_argument, literal_bool, positional_count
from torchlint.core.lazy import cst
from torchlint.analysis.names import cst_dotted_name

TORCH_LOAD = "torch.load"
HUB_LOAD = "torch.hub.load_state_dict_from_url"
# torch/utils/model_zoo.py: `from torch.hub import load_state_dict_from_url as load_url`
MODEL_ZOO_LOAD = "torch.utils.model_zoo.load_url"
_SAME_FUNCTION = {MODEL_ZOO_LOAD: HUB_LOAD}
LOADERS = (TORCH_LOAD, HUB_LOAD, MODEL_ZOO_LOAD)
LOAD_TRIGGERS = ("load(", "load_state_dict_from_url", "load_url")  # the rules' prefilter
DEFAULT_FLIPPED_IN = "2.6"
UNTRUSTED_CODE = "TL209"  # the rule that reports loads of a file from outside the code
WEIGHTS_ONLY_SINCE = "1.13"  # torch.load's weights_only
HUB_WEIGHTS_ONLY_SINCE = "2.1"  # load_state_dict_from_url's (pytorch/pytorch#98479)
# positional index of weights_only / pickle_module in each loader's signature
_WEIGHTS_ONLY_POSITION = {HUB_LOAD: 6}
_PICKLE_MODULE_POSITION = {TORCH_LOAD: 2}

# names that hold command-line arguments or configuration (`args.resume`, `cfg.MODEL.WEIGHTS`)
CONFIG_ROOTS = frozenset(
    {"args", "opt", "opts", "cfg", "config", "conf", "configs", "hparams", "hp", "params", "flags", "FLAGS", "options", "kwargs"}
)
# calls whose result is a file or URL chosen outside the code
_OUTSIDE_CALLS = frozenset(
    {
        "os.getenv", "os.environ.get", "input", "torch.hub.download_url_to_file", "urllib.request.urlopen",
        "requests.get", "huggingface_hub.hf_hub_download", "hf_hub_download",
    }
)


@dataclass(frozen=True)
class Load:
    """One loader call: `unrestricted` is why it runs the full unpickler (None: it does not,
    or cannot be told); `fixable` whether `weights_only=True` can be added. `loader` is
    the function as written (`torch.utils.model_zoo.load_url`)."""

    loader: str
    unrestricted: Optional[str]
    fixable: bool
    everywhere: bool  # unrestricted in every torch version, whatever the target


def read_load(call, written: Optional[str], config) -> Optional[Load]:
    if written not in LOADERS:
        return None
    load = _read_load(call, _SAME_FUNCTION.get(written, written), config)
    return load if load is None or written == load.loader else replace(load, loader=written)


def _read_load(call, qualified: str, config) -> Optional[Load]:
    weights_only = keyword_argument(call, "weights_only")
    count = positional_count(call)
    if weights_only is None and (has_double_star(call) or count is None):
        return None  # `**kwargs` or `*args` may pass it
    if weights_only is None and qualified in _WEIGHTS_ONLY_POSITION and count > _WEIGHTS_ONLY_POSITION[qualified]:
        return None
    if weights_only is not None:
        value = literal_bool(weights_only.value)
        if value is False:
            return Load(qualified, "explicit", False, True)
        return None
    if qualified == HUB_LOAD:
        return Load(qualified, "hub-default", config.targets_at_least(HUB_WEIGHTS_ONLY_SINCE), True)
    pickle_module = keyword_argument(call, "pickle_module") is not None or count > _PICKLE_MODULE_POSITION[TORCH_LOAD]
    if pickle_module:
        return Load(qualified, "pickle-module", False, True)
    if config.targets_at_least(DEFAULT_FLIPPED_IN):
        return None
    return Load(qualified, "old-default", bool(call.args) and config.targets_at_least(WEIGHTS_ONLY_SINCE), False)


def refuses_objects_by_default(call, written: Optional[str], config) -> bool:
    """A `torch.load` passing neither `weights_only` nor a `pickle_module` (nor `**kwargs`)
    where every targeted torch defaults to `weights_only=True` (2.6 on): it fails on a
    file holding objects."""
    if written != TORCH_LOAD or not config.targets_at_least(DEFAULT_FLIPPED_IN):
        return False
    count = positional_count(call)
    return (keyword_argument(call, "weights_only") is None and keyword_argument(call, "pickle_module") is None
            and not has_double_star(call) and count is not None and count <= _PICKLE_MODULE_POSITION[TORCH_LOAD])


def ast_loads(view) -> list:
    """The loader calls of the file, through its imports (the sites of TL201 and TL209)."""
    imports = view.imports
    if not any(target == "torch" or target.startswith("torch.") for target in imports.values()):
        return []
    return view.calls_to(LOADERS)


def outside_source(expression, function, parameters: Set[str], outside_locals: Set[str]) -> Optional[str]:
    """The text naming where a path or URL comes from if it is chosen outside the code: a
    function parameter, a configuration or command-line value, the environment, input,
    or a download; None otherwise."""
    for node in _leaves(expression):
        if isinstance(node, cst.Name) and (node.value in parameters or node.value in outside_locals):
            return f"`{node.value}`, a parameter" if node.value in parameters else f"`{node.value}`"
        if isinstance(node, cst.Name) and node.value in CONFIG_ROOTS:
            return f"`{node.value}`"
        dotted = cst_dotted_name(node) if isinstance(node, cst.Attribute) else None
        if dotted:
            head = dotted.split(".")
            root = head[1] if head[0] == "self" and len(head) > 1 else head[0]
            if root in CONFIG_ROOTS or dotted.startswith(("sys.argv", "os.environ")):
                return f"`{dotted}`"
        if isinstance(node, cst.Call):
            name = cst_dotted_name(node.func)
            if name in _OUTSIDE_CALLS:
                return f"`{name}(...)`"
    return None


def _leaves(expression):
    """The expression's Names, attribute chains and calls, outermost first; the callee
    of a call and the attribute part of a chain are not values."""
    stack = [expression]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Attribute):
            if cst_dotted_name(node):
                yield node
            else:
                stack.append(node.value)  # `f().name`: `name` is no value of its own
            continue
        if isinstance(node, cst.Name):
            yield node
            continue
        if isinstance(node, cst.Subscript):
            stack.append(node.value)  # `table[name]` picks among the table's own entries
            continue
        if isinstance(node, cst.Call):
            yield node
            stack.extend(arg.value for arg in node.args)
            if isinstance(node.func, cst.Attribute):
                stack.append(node.func.value)  # `path.replace(...)`: the receiver is a value
            continue
        stack.extend(child for child in node.children if isinstance(child, cst.CSTNode))
