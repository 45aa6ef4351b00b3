from __future__ import annotations

import ast

from torchlint.core.diagnostics import Applicability, Fix
from torchlint.analysis.names import cst_dotted_name
from torchlint.rule_api.rule import Invalid, Rule

MODULE = "torchvision.models"


class TorchvisionModelsImportStyle(Rule):
    """
    ## What it does
    Flags `import torchvision.models as <name>` and suggests
    `from torchvision import models` (or `... import models as <name>`). Off by default:
    select it with `--select TL205` or `extend-select = ["TL205"]`.

    ## Why is this bad?
    Nothing breaks: both statements bind the same module. It is a style that torchvision's
    own documentation and TorchFix (TOR203) prefer, kept for teams moving from TorchFix;
    the usual `import torchvision.models as models` repeats the name it binds.

    ## Example
    ```python
    import torchvision.models as models
    ```

    ## Use instead
    ```python
    from torchvision import models
    ```

    ## Fix safety
    Safe fix, for a statement that imports only `torchvision.models`: the two forms bind
    the same module object, imported the same way. A statement that imports other
    modules too (`import os, torchvision.models as tvm`) is reported without a fix.
    """

    code = "TL205"
    name = "torchvision-models-import-style"
    summary = "import torchvision.models as X (use from torchvision import models)"
    default_enabled = False
    fixable = True
    triggers = ("torchvision.models as",)

    VALID = (
        "from torchvision import models\n",
        "import torchvision.models\n",
        "import torchvision.models.detection as detection\n",
    )
    INVALID = (
        Invalid("import torchvision.models as models\n", fixed="from torchvision import models\n", line=1, column=1),
        Invalid("import torchvision.models as tvm\n", fixed="from torchvision import models as tvm\n", line=1, column=1),
        Invalid("import os, torchvision.models as tvm\n", line=1, column=1),
    )

    @classmethod
    def sites(cls, view, config) -> list:
        return [
            node for node in view.nodes_of(ast.Import) if any(a.name == MODULE and a.asname for a in node.names)
        ]

    def visit_Import(self, node) -> None:
        for alias in node.names:
            if cst_dotted_name(alias.name) != MODULE or alias.asname is None:
                continue
            name = alias.asname.name.value
            replacement = "from torchvision import models" + ("" if name == "models" else f" as {name}")
            fix = None
            if len(node.names) == 1:
                def fix(positions, statement=node, replacement=replacement):
                    return Fix(f"Write `{replacement}`", (positions.replace(statement, replacement),), Applicability.SAFE)
            self.report(node, f"`import torchvision.models as {name}`: write `{replacement}`", fix)
