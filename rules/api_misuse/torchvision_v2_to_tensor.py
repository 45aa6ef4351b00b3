from __future__ import annotations

import ast
from typing import Optional

from torchlint.core.diagnostics import Applicability, Fix
from torchlint.core.lazy import cst
from torchlint.analysis.names import ast_dotted_name, cst_dotted_name, resolve
from torchlint.rule_api.rule import Invalid, Rule, RuleContext

V2 = "torchvision.transforms.v2"
TO_TENSOR = f"{V2}.ToTensor"
_INSTEAD = "use `v2.ToImage()` then `v2.ToDtype(torch.float32, scale=True)`"


def _imports_to_tensor(node: ast.ImportFrom) -> bool:
    return node.module == V2 and not node.level and any(alias.name == "ToTensor" for alias in node.names)


class TorchvisionV2ToTensor(Rule):
    """
    ## What it does
    Flags `torchvision.transforms.v2.ToTensor` under any import spelling: its calls
    (`v2.ToTensor()`), its imports (`from torchvision.transforms.v2 import ToTensor`) and
    other references to it (`v2.ToTensor` passed along or stored). The v1
    `torchvision.transforms.ToTensor` is not deprecated and not flagged.

    ## Why is this bad?
    torchvision deprecated `v2.ToTensor` (it warns on construction: "will be removed in a
    future release") in favour of `v2.ToImage()` followed by
    `v2.ToDtype(torch.float32, scale=True)`, which keeps the image a `tv_tensors.Image`
    so that later v2 transforms know what it is.

    ## Example
    ```python
    transform = v2.Compose([v2.RandomHorizontalFlip(), v2.ToTensor()])
    ```

    ## Use instead
    ```python
    transform = v2.Compose(
        [
            v2.RandomHorizontalFlip(),
            v2.ToImage(),
            v2.ToDtype(torch.float32, scale=True),
        ]
    )
    ```

    ## Fix safety
    Unsafe fix: in a list or tuple the call becomes the two transforms; elsewhere
    `v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])`. torchvision
    says the output is equivalent "up to float precision", and it is not identical: the
    result is a `tv_tensors.Image` rather than a plain tensor, its dtype is always
    float32 (ToTensor used the default dtype), and non-uint8 integer inputs (a PIL image
    in mode "I", an int32 array) are scaled where ToTensor left them unscaled. Offered
    only where `v2` is reached through a module (`v2.ToTensor()`,
    `transforms.v2.ToTensor()`) and `torch` is imported, so no new import is needed.
    Imports and references other than calls are reported without a fix.
    """

    code = "TL206"
    name = "torchvision-v2-to-tensor"
    summary = "Deprecated torchvision.transforms.v2.ToTensor"
    fixable = True
    triggers = ("ToTensor",)

    VALID = (
        "from torchvision import transforms\n\nt = transforms.Compose([transforms.ToTensor()])\n",
        "import torch\nfrom torchvision.transforms import v2\n\nt = v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])\n",
    )
    INVALID = (
        Invalid(
            "import torch\nfrom torchvision.transforms import v2\n\nt = v2.Compose([v2.RandomHorizontalFlip(), v2.ToTensor()])\n",
            unsafe_fixed="import torch\nfrom torchvision.transforms import v2\n\n"
            "t = v2.Compose(\n    [v2.RandomHorizontalFlip(), v2.ToImage(), v2.ToDtype(torch.float32, scale=True)]\n)\n",
            line=4,
            column=44,
        ),
        Invalid(
            "import torch\nimport torchvision.transforms as T\n\nto_tensor = T.v2.ToTensor()\n",
            unsafe_fixed="import torch\nimport torchvision.transforms as T\n\n"
            "to_tensor = T.v2.Compose([T.v2.ToImage(), T.v2.ToDtype(torch.float32, scale=True)])\n",
            line=4,
            column=13,
        ),
        # imported by name: the import is reported, and the call, without a fix (the
        # replacement's names are not in scope)
        Invalid("import torch\nfrom torchvision.transforms.v2 import ToTensor\n\nt = ToTensor()\n", line=2, column=39),
        Invalid("from torchvision.transforms.v2 import Compose, ToTensor as TT\n", line=1, column=48),
        # a reference that is not a call
        Invalid("from torchvision.transforms import v2\n\nSTEPS = [v2.RandomCrop, v2.ToTensor]\n", line=3, column=25),
    )

    def __init__(self, context: RuleContext) -> None:
        super().__init__(context)
        self._items = set()  # calls that are elements of a list (`Compose([...])`)
        self._skip = set()  # names that are part of another reference (`x.ToTensor`, a call's func)
        self._in_import = False

    @classmethod
    def sites(cls, view, config) -> list:
        imports = view.imports
        names = [node for node in view.nodes_of(ast.Name, ast.Attribute)
                 if resolve(ast_dotted_name(node), imports) == TO_TENSOR]
        return names + [node for node in view.nodes_of(ast.ImportFrom) if _imports_to_tensor(node)]

    def visit_Element(self, node) -> None:
        # pre-order: the element is seen before its call, which then knows it sits in a list
        if isinstance(node.value, cst.Call):
            self._items.add(node.value)

    def visit_ImportFrom(self, node) -> None:
        self._in_import = True
        module = cst_dotted_name(node.module) if node.module is not None and not node.relative else None
        if module != V2 or isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            if cst_dotted_name(alias.name) == "ToTensor":
                self.report(alias, f"`{TO_TENSOR}` is deprecated: {_INSTEAD}")

    def leave_ImportFrom(self, node) -> None:
        self._in_import = False

    def visit_Attribute(self, node) -> None:
        self._skip.add(node.attr)  # `x.ToTensor`'s name is no reference of its own
        self._reference(node)

    def visit_Name(self, node) -> None:
        self._reference(node)

    def _reference(self, node) -> None:
        """A reference to v2.ToTensor that is not called (calls are `visit_Call`'s)."""
        if node in self._skip or self._in_import:
            return
        if self.context.imports.qualified_name(node) == TO_TENSOR:
            self.report(node, f"`{self.context.module.code_for_node(node)}` is deprecated: {_INSTEAD}")

    def visit_Call(self, node) -> None:
        self._skip.add(node.func)
        if self.context.imports.qualified_name(node.func) != TO_TENSOR:
            return
        replacement = self._replacement(node, node in self._items)
        fix = None
        if replacement is not None:
            def fix(positions, call=node, replacement=replacement):
                return Fix(
                    "Use `v2.ToImage()` and `v2.ToDtype(torch.float32, scale=True)`",
                    (positions.replace(call, replacement),),
                    Applicability.UNSAFE,
                )
        self.report(node, f"`v2.ToTensor` is deprecated: {_INSTEAD}", fix)

    def _replacement(self, call, in_sequence: bool) -> Optional[str]:
        torch = next((local for local, target in self.context.imports.table.items() if target == "torch"), None)
        if call.args or torch is None or not isinstance(call.func, cst.Attribute):
            return None
        v2 = self.context.module.code_for_node(call.func.value)
        pair = f"{v2}.ToImage(), {v2}.ToDtype({torch}.float32, scale=True)"
        return pair if in_sequence else f"{v2}.Compose([{pair}])"
