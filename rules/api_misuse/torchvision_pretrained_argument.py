from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from torchlint.analysis.call_arguments import keyword_argument, literal_bool, positional_count, replace_argument
from torchlint.core.lazy import cst
from torchlint.core.diagnostics import Applicability, Fix
from torchlint.analysis.names import (
    FunctionImports, ImportTable, ast_dotted_name, cst_dotted_name, cst_import_table, resolve,
)
from torchlint.rule_api.bases.compat_guarded import CompatGuarded
from torchlint.rule_api.rule import Invalid, Rule
from torchlint.analysis.torchvision_weights import BUILDERS, ENUM_HOMES

LEGACY = ("pretrained", "pretrained_backbone")


# torchvision's builders take their first keyword-only parameter positionally too
# (`kwonly_to_pos_or_kw`), and `handle_legacy_interface` reads a positional bool there as
# the old `pretrained`: `resnet50(True)` is `resnet50(pretrained=True)`
def _positional_pretrained(call):
    """The first argument of a builder call if it is passed positionally and is a literal
    bool or a value named like `pretrained` (`args.pretrained`); else None."""
    first = call.args[0] if call.args else None
    if first is None or first.keyword is not None or first.star:
        return None
    if isinstance(first.value, cst.Name) and first.value.value in ("True", "False"):
        return first
    name = first.value.attr.value if isinstance(first.value, cst.Attribute) else getattr(first.value, "value", None)
    return first if isinstance(name, str) and "pretrain" in name.lower() else None


def _ast_positional_pretrained(call: ast.Call) -> bool:
    first = call.args[0] if call.args else None
    if isinstance(first, ast.Constant):
        return isinstance(first.value, bool)
    name = first.attr if isinstance(first, ast.Attribute) else getattr(first, "id", None)
    return isinstance(name, str) and "pretrain" in name.lower()


def _ast_callee(func: ast.AST) -> Tuple[Optional[str], bool]:
    """The dotted name a call's function is written as, `getattr(a.b, "c")` read as `a.b.c`; and whether
    the function is a name looked up on a module at run time (`getattr(a.b, arch)`: then the module's name)."""
    if isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "getattr" \
            and len(func.args) == 2 and not func.keywords:
        module, name = ast_dotted_name(func.args[0]), func.args[1]
        if isinstance(name, ast.Constant):
            return (f"{module}.{name.value}" if module and isinstance(name.value, str) else None), False
        return module, True
    return ast_dotted_name(func), False


def _cst_callee(func) -> Tuple[Optional[str], bool]:
    """`_ast_callee` on LibCST's tree."""
    if isinstance(func, cst.Call) and isinstance(func.func, cst.Name) and func.func.value == "getattr" \
            and len(func.args) == 2 and all(arg.keyword is None and not arg.star for arg in func.args):
        module, name = cst_dotted_name(func.args[0].value), func.args[1].value
        if isinstance(name, (cst.SimpleString, cst.ConcatenatedString)):
            text = name.evaluated_value
            return (f"{module}.{text}" if module and isinstance(text, str) else None), False
        if isinstance(name, (cst.Integer, cst.Float, cst.Imaginary)):
            return None, False
        return module, True
    return cst_dotted_name(func), False


# a builder picked by a name the code does not write (`getattr(models, args.arch)`): every builder that takes the
# legacy arguments maps them the same way, but which weights `pretrained=True` loads depends on the builder
CHOSEN_BY_NAME = {"pretrained": ("weights", None, None), "pretrained_backbone": ("weights_backbone", None, None)}


def _entry_of(callee: Tuple[Optional[str], bool], table: ImportTable):
    """The table entry of what a call calls (`_ast_callee`'s answer, resolved through `table`): a builder's, or
    `CHOSEN_BY_NAME` for a name looked up on a torchvision models module."""
    dotted, chosen_by_name = callee
    qualified = resolve(dotted, table)
    if chosen_by_name:
        in_models = qualified is not None and (qualified + ".").startswith("torchvision.models.")
        return CHOSEN_BY_NAME if in_models else None
    return builder_entry(qualified)


def builder_entry(qualified: Optional[str]):
    """The table entry of a torchvision builder, named through its package
    (`torchvision.models.resnet50`) or its module (`torchvision.models.resnet.resnet50`)."""
    if not qualified or not qualified.startswith("torchvision.models."):
        return None
    found = BUILDERS.get(qualified)
    if found is None:
        package, _, name = qualified.rpartition(".")
        found = BUILDERS.get(f"{package.rpartition('.')[0]}.{name}")
    return found


class TorchvisionPretrainedArgument(CompatGuarded, Rule):
    """
    ## What it does
    Flags `pretrained=` and `pretrained_backbone=` passed to a torchvision model builder
    (`resnet50(pretrained=True)`, `fasterrcnn_resnet50_fpn(pretrained_backbone=False)`),
    under any import spelling, and the same passed positionally: torchvision reads a
    builder's first positional argument as the old `pretrained` (`resnet50(True)`,
    `resnet18(args.pretrained)`), and to a builder chosen by name from a torchvision models
    module (`getattr(models, args.arch)(pretrained=True)`). Builders are known from
    torchvision 0.29.1's own `handle_legacy_interface` declarations (tools/torchvision_weights_table.py
    regenerates the table); calls of other libraries' `pretrained=` (timm's
    `create_model`, say) are not torchvision's and are not flagged, nor is code a
    compatibility guard picks for old torchvision releases (any branch of an `if` on its
    version, `TORCHVISION_LT_0_13`, or on `hasattr` of it for the weights API; the `except
    ImportError` fallback of a `try` that uses torchvision).

    ## Why is this bad?
    torchvision 0.13 replaced these arguments by `weights=` / `weights_backbone=` and
    every call warns that they are deprecated and may be removed. `pretrained=True`
    also hides which weights load: for resnet50 it is `IMAGENET1K_V1`, not the better
    `DEFAULT` (`IMAGENET1K_V2`), which many readers assume.

    ## Example
    ```python
    model = torchvision.models.resnet50(pretrained=True)
    ```

    ## Use instead
    ```python
    model = torchvision.models.resnet50(
        weights=torchvision.models.ResNet50_Weights.IMAGENET1K_V1
    )
    ```

    ## Fix safety
    Safe fix, for a literal `True` or `False` on a known builder: `False` becomes
    `weights=None` (or `weights_backbone=None`); `True` becomes the exact weights the legacy
    argument loads in torchvision 0.29.1 (`ResNet50_Weights.IMAGENET1K_V1`, not `DEFAULT`,
    which may differ and change between releases), so the same weights load and only the
    warning goes. The enum is spelled through an import the file already has (`models.`,
    `torchvision.models.`); with none (`from torchvision.models import resnet50`), it
    is written as the member's name, `weights="IMAGENET1K_V1"`, which torchvision's
    builders accept. A positional `True`/`False` becomes the keyword when it is the only
    positional argument. No fix for a non-literal value, for a call that also passes the new
    argument, for a builder chosen by name (its weights are not known), or for builders whose
    legacy weights depend on other arguments (the quantized models) or do not exist. Moving to
    `DEFAULT` is a separate, deliberate change.
    """

    code = "TL204"
    # `if TORCHVISION_LT_0_13: resnet50(pretrained=...) else: resnet50(weights=...)` keeps old
    # torchvision working, as does a probe for the weights API: both branches are the author's
    guard_libraries = ("torch", "torchvision")
    guard_probes = frozenset(ENUM_HOMES) | {"get_weight", "get_model_weights"}
    name = "torchvision-pretrained-argument"
    summary = "Deprecated torchvision pretrained=/pretrained_backbone= (use weights=/weights_backbone=)"
    fixable = True
    triggers = ("torchvision",)  # every builder is reached through an import of torchvision

    VALID = (
        "import torchvision\n\nm = torchvision.models.resnet50(weights=None)\n",
        "import timm\n\nm = timm.create_model('resnet50', pretrained=True)\n",
        # a weights enum passed positionally, or another library's first argument
        "import torchvision\n\nm = torchvision.models.resnet50(torchvision.models.ResNet50_Weights.DEFAULT)\n",
        "import timm\n\nm = timm.create_model(True)\n",
        # a local import of another library shadows the module's torchvision
        "from torchvision.models import resnet50\n\ndef build():\n    from timm.models import resnet50\n\n"
        "    return resnet50(pretrained=True)\n",
        "from torchvision.models import resnet50\n\ndef build(pretrained):\n    return resnet50(weights='DEFAULT' if pretrained else None)\n",
        # `getattr` on another library's module
        "import timm.models as models\n\ndef build(arch):\n    return getattr(models, arch)(pretrained=True)\n",
        "from torchvision.models import resnet50\n\ndef build(p):\n    if TORCHVISION_LESS_THAN_0_13:\n"
        "        return resnet50(pretrained=p)\n    return resnet50(weights='DEFAULT' if p else None)\n",
    )
    INVALID = (
        Invalid(
            "import torchvision\n\nm = torchvision.models.resnet50(pretrained=True)\n",
            fixed="import torchvision\n\nm = torchvision.models.resnet50(\n    weights=torchvision.models.ResNet50_Weights.IMAGENET1K_V1\n)\n",
            line=3,
            column=33,
        ),
        Invalid(
            "from torchvision import models\n\nm = models.detection.fasterrcnn_resnet50_fpn(pretrained=False, pretrained_backbone=True)\n",
            fixed="from torchvision import models\n\nm = models.detection.fasterrcnn_resnet50_fpn(\n"
            "    weights=None, weights_backbone=models.ResNet50_Weights.IMAGENET1K_V1\n)\n",
            line=3,
            column=46,
        ),
        Invalid(
            "from torchvision.models import vgg16\n\nfeatures = vgg16(pretrained=True).features\n",
            fixed="from torchvision.models import vgg16\n\nfeatures = vgg16(weights=\"IMAGENET1K_V1\").features\n",
            line=3,
            column=18,
        ),
        # the first positional argument is the old `pretrained`
        Invalid(
            "import torchvision.models as models\n\nm = models.resnet50(True)\n",
            fixed="import torchvision.models as models\n\nm = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V1)\n",
            line=3,
            column=21,
        ),
        Invalid(
            "from torchvision.models import resnet18\n\nm = resnet18(False, progress=False)\n",
            fixed="from torchvision.models import resnet18\n\nm = resnet18(weights=None, progress=False)\n",
            line=3,
            column=14,
        ),
        # more positional arguments: a keyword cannot go first, flagged only
        Invalid("from torchvision.models import resnet18\n\nm = resnet18(True, True)\n", line=3, column=14),
        Invalid(
            "from torchvision.models import resnet18\n\ndef build(args):\n    return resnet18(args.pretrained)\n",
            line=4,
            column=21,
        ),
        # imported inside the function that builds the model
        Invalid(
            "def build():\n    import torchvision.models as models\n\n    return models.resnet50(pretrained=False)\n",
            fixed="def build():\n    import torchvision.models as models\n\n    return models.resnet50(weights=None)\n",
            line=4,
            column=28,
        ),
        # a backbone builder of torchvision's detection models takes the legacy argument too; which weights
        # `True` loads depends on `backbone_name`: flagged only
        Invalid(
            "from torchvision.models.detection.backbone_utils import resnet_fpn_backbone\n\n"
            "b = resnet_fpn_backbone(backbone_name='resnet50', pretrained=True)\n",
            line=3,
            column=51,
        ),
        # a builder chosen by name: flagged only, which weights `True` loads depends on the builder
        Invalid(
            "import torchvision.models as models\n\ndef build(arch):\n    return getattr(models, arch)(pretrained=True)\n",
            line=4,
            column=34,
        ),
        # a builder named by a literal through `getattr` is that builder
        Invalid(
            "import torchvision.models as models\n\nm = getattr(models, 'resnet18')(pretrained=False)\n",
            fixed="import torchvision.models as models\n\nm = getattr(models, 'resnet18')(weights=None)\n",
            line=3,
            column=33,
        ),
        # not a literal: flagged only
        Invalid(
            "from torchvision.models import resnet18\n\ndef build(flag):\n    return resnet18(pretrained=flag)\n",
            line=4,
            column=21,
        ),
    )

    def __init__(self, context) -> None:
        super().__init__(context)
        self._tables: List[ImportTable] = [context.imports.table]  # the module's, then each function's around

    @classmethod
    def sites(cls, view, config) -> list:
        calls = [
            node for node in view.nodes_of(ast.Call)
            if any(keyword.arg in LEGACY for keyword in node.keywords) or _ast_positional_pretrained(node)
        ]
        if not calls:
            return []
        # `import torchvision.models as models` inside the function that builds the model counts too
        local = FunctionImports(view.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef))
        return [
            node for node in calls
            if _entry_of(_ast_callee(node.func), local.table_at(node.lineno, view.imports)) is not None
        ]

    def visit_FunctionDef(self, node) -> None:
        own = cst_import_table(node.body)
        self._tables.append({**self._tables[-1], **own} if own else self._tables[-1])

    def leave_FunctionDef(self, node) -> None:
        self._tables.pop()

    def visit_Call(self, node) -> None:
        entry = _entry_of(_cst_callee(node.func), self._tables[-1])
        chosen_by_name = entry is CHOSEN_BY_NAME
        if entry is None or self.guarded(node):
            return
        for legacy in LEGACY:
            arg = keyword_argument(node, legacy)
            if arg is None and legacy == "pretrained":
                arg = _positional_pretrained(node)
            if arg is None or legacy not in entry:
                continue
            weights, enum, member = entry[legacy]
            replacement = None if chosen_by_name else self._replacement(node, arg, weights, enum, member)
            fix = None
            if replacement is not None:
                def fix(positions, arg=arg, replacement=replacement):
                    return Fix(f"Pass `{replacement}`", (replace_argument(positions, arg, replacement),), Applicability.SAFE)
            written = f"`{legacy}=`" if arg.keyword is not None else (
                f"`{self.context.module.code_for_node(arg.value)}` as the first positional argument (the old `{legacy}`)")
            self.report(
                arg,
                f"{written} is deprecated since torchvision 0.13: pass `{weights}=`"
                + (f" (`{legacy}=True` loads `{enum}.{member}`)" if enum else "")
                + (" (the builder is chosen by name here, so its weights are not known and no fix is offered)"
                   if chosen_by_name else ""),
                fix,
            )

    def _replacement(self, call, arg, weights: str, enum: Optional[str], member: Optional[str]) -> Optional[str]:
        value = literal_bool(arg.value)
        if value is None or keyword_argument(call, weights) is not None:
            return None
        if arg.keyword is None and positional_count(call) != 1:
            return None  # `resnet50(True, False)`: a keyword cannot come before a positional
        if not value:
            return f"{weights}=None"
        if enum is None:
            return None
        return f"{weights}={self._spell(enum, member)}"

    def _spell(self, enum: str, member: str) -> str:
        """`<local>.<rest>.Enum.MEMBER` through an existing import of a package above the
        enum's home; the enum itself if imported; else the member's name as a string."""
        home = ENUM_HOMES[enum]
        best = None
        for local, target in self._tables[-1].items():
            if target == f"{home}.{enum}":
                return f"{local}.{member}"
            if (home == target or home.startswith(target + ".")) and target.startswith("torchvision"):
                if best is None or len(target) > len(best[1]):
                    best = (local, target)
        if best is None:
            return f'"{member}"'
        local, target = best
        return f"{local}{home[len(target):]}.{enum}.{member}"
