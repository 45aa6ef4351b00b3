"""TL002 unvalidated-conv-input: the rule's declaration and doc, its gate and facts hooks,
the traversal of each class's `forward`, and the report of a finding.

Cost: the gate and facts on the stdlib ast, one pass; per class with a `forward`: its conv
layers (one pass over the class), `forward` walked once (forward.py).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, Iterator, List, Mapping, Optional, Tuple

from torchlint.analysis.class_graph import class_graph
from torchlint.analysis.classes import ast_class_methods, attribute_values, class_functions, method, self_name
from torchlint.analysis.layers import Layer, constructed_layer, module_functions
from torchlint.analysis.modules import canonical, file_classes
from torchlint.analysis.submodule_calls import submodule_calls
from torchlint.core.config import Config
from torchlint.core.lazy import cst
from torchlint.analysis.source_view import SourceView
from torchlint.rule_api.rule import Report, Rule
from torchlint.analysis.pending import ClassIs, ModelInput, SkipInput
from torchlint.index.record import FileRecord
from torchlint.rules.training.unvalidated_conv_input import examples
from torchlint.rules.training.unvalidated_conv_input.expressions import parameter_positions, placeholder
from torchlint.rules.training.unvalidated_conv_input.fix import input_check
from torchlint.rules.training.unvalidated_conv_input.forward import ForwardWalker
from torchlint.rules.training.unvalidated_conv_input.gate import (
    TEXT_MARKERS,
    AstFactories,
    ast_may_fire,
    submodule_uses,
)
from torchlint.rules.training.unvalidated_conv_input.values import (
    CONCATS,
    CONV_LAYERS,
    FIXED_CONCATS,
    INTERNAL_CONCATS,
    MODEL_INPUTS,
    PARAMETERS,
    TrackedValue,
)

if TYPE_CHECKING:
    from torchlint.rules.training.unvalidated_conv_input.values import ConvCall, Finding


class UnvalidatedConvInput(Rule):
    """
    ## What it does
    Flags a convolution in `forward` whose input's shape nothing has checked. By default:
    a tensor joined by `torch.cat` / `stack` / `concat` / `concatenate` along the channel
    axis (`dim` 1, or counted from the end) and fed to the layer, where the number of parts
    comes from the caller: the sequence joined, or a starred part, is a parameter of
    `forward` or computed from one (an FPN fusion over however many levels it is given).

    A convolution is an attribute built as `nn.Conv1d/2d/3d` or `nn.ConvTranspose1d/2d/3d`
    (directly, under `weight_norm` / `spectral_norm` / parametrizations, as the first layer
    of an `nn.Sequential`, or by a function of the same file; one branch of `__init__` may
    set it to `None` or `nn.Identity()`), or a direct `F.conv2d` / `torch.conv2d` call. A
    value is checked when an earlier statement of `forward` tests its shape (`assert`,
    `torch._assert(...)` or `if ...: raise` on `x.shape`, `x.size(...)`, `x.dim()`,
    `x.ndim` or names unpacked from them) or passes it to a function named `check*`,
    `validate*`, `assert*` or `ensure*`. Only the first convolution of each unchecked value
    is reported; outputs of other layers are not, nor a conv layer's own `forward`.

    ## Why is this bad?
    A wrong channel count (another backbone, an added FPN level, RGBA for RGB) fails inside
    the layer, on the GPU often as `CUDNN_STATUS_BAD_PARAM` or deep in an AMP, `channels_last`
    or compiled kernel, without naming the parts that made the tensor. A check where the
    tensor is assembled names the layer, the count it expects and the shape it got. At run
    time, `torchlint.runtime.guard(model)` (docs/guard.md) checks every convolution's input.

    ## Example
    ```python
        def forward(self, p2, p3, p4, p5):
            fused = torch.cat([p2, p3, p4, p5], dim=1)
            return self.fusion(fused)  # self.fusion = nn.Conv2d(1024, 256, 3)
    ```

    ## Use instead
    ```python
        def forward(self, p2, p3, p4, p5):
            fused = torch.cat([p2, p3, p4, p5], dim=1)
            torch._assert(
                fused.size(-3) == self.fusion.in_channels,
                f"fusion expects {self.fusion.in_channels} input channels, "
                f"got shape {fused.shape}",
            )
            return self.fusion(fused)
    ```

    ## Fix safety
    Safe: one `torch._assert` before the statement compares the channel axis counted from the
    end (`size(-3)` for a 2-d conv, batched or not) with the layer's `in_channels`
    (`self.fusion[0].in_channels` for an `nn.Sequential` or a factory), with a message naming
    the layer, the count and the shape; it adds `import torch` if missing. A correct input
    passes unchanged, eagerly and under `torch.jit.script`, `torch.fx` and `torch.compile`
    (a failing check under `fullgraph=True` raises dynamo's `Unsupported` instead). No fix
    when the call is not evaluated unconditionally by its statement (conditional expression,
    `and`/`or`, comprehension, lambda), the statement shares a line or is a compound
    statement's header, the input is not a plain name, the attribute may hold `None` or
    `nn.Identity()` there, or for `F.conv*` calls.

    ## Options
    - `check-concatenations` (default `true`): joins whose part count comes from the caller.
    - `check-fixed-concatenations` (default `false`): also a fixed number of parts, one from
      outside (a U-Net's `skip`), where PyTorch's error already names the one sum it changes.
    - `check-internal-concatenations` (default `false`): also joins of internal parts only:
      outputs of the module's own layers (Inception, ASPP), a part one of its convs already
      took, a part whose maker writes its channel count (`x.mean(1, keepdim=True)`,
      `coords.reshape(b, 2, h, w)`), and a `forward` parameter every calling module of the
      project feeds from its own layers (a skip some caller feeds from its own caller counts
      as from outside).
    - `check-parameters` (default `false`): a `forward` parameter fed straight to a
      convolution, in every module (not `F.conv*`; PyTorch's error names both counts there).
    - `check-model-inputs` (default `false`): the same at the entry convolution of a top-level
      model: no module of the linted project uses its class as a part (the flake8 plugin sees
      one file only).
    """

    code = "TL002"
    name = "unvalidated-conv-input"
    summary = "Convolution applied to an input whose shape nothing checks"
    fixable = True
    project_rule = True
    triggers = ("Conv", "conv")
    options = {PARAMETERS: False, CONCATS: True, INTERNAL_CONCATS: False, FIXED_CONCATS: False, MODEL_INPUTS: False}

    VALID = examples.VALID
    INVALID = examples.INVALID

    def __init__(self, context) -> None:
        super().__init__(context)
        self._deferred: List[Tuple[str, List[Report]]] = []
        self._functions = None

    # ---- sites ---------------------------------------------------------------

    @classmethod
    def sites(cls, view: SourceView, config: Config) -> Iterator[ast.ClassDef]:
        """The classes whose `forward` may hold a finding, by the stdlib ast alone."""
        if not any(marker in view.text for marker in TEXT_MARKERS):
            return
        settings = {**cls.options, **config.options_for(cls.name)}
        imports = view.imports
        factories = AstFactories(view.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef), imports)
        for node in view.nodes_of(ast.ClassDef):
            if any(
                forward.name == "forward" and ast_may_fire(node, forward, settings, factories, imports)
                for forward in ast_class_methods(node)
            ):
                yield node

    @classmethod
    def ast_facts(cls, view: SourceView, config: Config, record: FileRecord) -> None:
        record.submodule_uses = tuple(submodule_uses(view))
        record.submodule_calls = tuple(submodule_calls(view))
        # every file's classes, parsed by LibCST or not, resolve the project's bases (the
        # resolver counts a class a module by its bases or its `forward`, not its body)
        if view.tree is not None:
            record.classes = class_graph(view).classes

    # ---- traversal ------------------------------------------------------------

    def visit_ClassDef(self, node) -> None:
        forward = method(node, "forward")
        if forward is None or not isinstance(forward.body, cst.IndentedBlock):
            return
        classes = file_classes(self.context)
        verdict = classes.verdict(node, "module")
        if verdict is False:
            return
        if any(canonical(base) in CONV_LAYERS for base in classes.facts_of(node).bases):
            return  # a conv layer's own forward (a weight-standardized Conv2d): the caller checks
        class_name = classes.facts_of(node).name
        reports, entries = [], []
        positions = parameter_positions(forward)
        for finding in self._check_forward(node, forward):
            skip = self._skip_parameters(finding, positions)
            if skip:
                self.context.defer(finding.report, SkipInput(class_name, tuple(tuple(pair) for pair in skip)))
            elif finding.origin == CONCATS or self.settings[PARAMETERS]:
                reports.append(finding.report)
            elif self.settings[MODEL_INPUTS] and not finding.functional:  # F.conv*: no in_channels to name
                entries.append(finding.report)
        for report in entries:
            self.context.defer(report, ModelInput(class_name))
        if verdict:
            self.context.reports.extend(reports)
        elif reports:
            self._deferred.append((class_name, reports))

    def leave_Module(self, node) -> None:
        for class_name, reports in self._deferred:
            for report in reports:
                self.context.defer(report, ClassIs(class_name, "module"))

    def _skip_parameters(self, finding: Finding, positions: Mapping[str, Optional[int]]) -> List[list]:
        """For a concatenation whose outside parts are parameters of `forward` (a skip),
        and not the number of parts: `[[position or None, name], ...]` of those
        parameters; else empty (reported as it is)."""
        if finding.origin != CONCATS or self.settings[INTERNAL_CONCATS] or not finding.provenance:
            return []
        if not all(name in positions for name in finding.provenance):  # COUNT, or unknown
            return []
        return [[positions[name], name] for name in sorted(finding.provenance)]

    # ---- the analysis of one forward -------------------------------------------

    def _convs(self, class_node) -> Dict[str, Tuple[Layer, int, frozenset]]:
        """The attributes that hold a conv: name -> (layer, spatial dims, what some branch
        of the class leaves there instead: {"None", "Identity"} or a part of it)."""
        if self._functions is None:
            self._functions = module_functions(self.context.module)
        imports = self.context.imports
        functions = {**self._functions, **class_functions(class_node)}
        convs = {}
        for name, values in attribute_values(class_node).items():
            kinds = [placeholder(value, imports) for value in values]
            layers = {constructed_layer(value, imports, functions) for value, kind in zip(values, kinds) if not kind}
            if len(layers) == 1:
                layer = layers.pop()
                if layer is not None and layer.qualified in CONV_LAYERS:
                    convs[name] = (layer, CONV_LAYERS[layer.qualified], frozenset(filter(None, kinds)))
        return convs

    def _check_forward(self, class_node, forward) -> Iterator[Finding]:
        """The findings of one forward, each with the origin of the value (PARAMETERS or
        CONCATS) and whether the convolution is functional (`F.conv2d`)."""
        instance = self_name(forward)
        if instance is None:
            return
        params = forward.params
        names = [p.name.value for p in (*params.posonly_params, *params.params)][1:]
        names += [p.name.value for p in params.kwonly_params]
        values = {name: TrackedValue(PARAMETERS) for name in names}
        walker = ForwardWalker(self, instance, self._convs(class_node), values)
        for statement in forward.body.body:
            yield from walker.statement(statement)

    # ---- the report ------------------------------------------------------------

    def conv_report(
        self, conv: ConvCall, value_name: Optional[str], origin: str, statement, conditional: bool
    ) -> Report:
        if origin == CONCATS:
            subject = f"`{value_name}`, a concatenation," if value_name else "a concatenation"
            message = (
                f"{conv.label} is applied to {subject} whose channel count (the sum of its parts) "
                "nothing checks; a part of the wrong width fails inside the layer without saying which"
            )
        elif self.settings[PARAMETERS]:
            message = (
                f"{conv.label} is applied to `{value_name}`, a parameter of `forward`, whose shape "
                "nothing checks; a wrong channel count fails inside the layer instead of here"
            )
        else:
            message = (
                f"{conv.label} is the entry convolution of a model that no module of the project "
                f"uses as a part, and nothing checks the shape of its input `{value_name}`; a wrong "
                "input fails inside the layer instead of at the model's boundary"
            )
        reason = None
        if conv.access is None:
            reason = "the channel count of a functional convolution depends on its weight and groups"
        elif value_name is None:
            reason = "the input is not a plain name"
        elif conv.optional:
            reason = "the attribute may hold None or nn.Identity() instead of the convolution here"
        elif conditional:
            reason = "the call is not evaluated unconditionally by its statement"
        elif statement is None:
            reason = "the call is in a compound statement's header or shares its line"
        if reason:
            return Report(self, conv.call, f"{message} (no automatic fix: {reason})")
        return Report(
            self,
            conv.call,
            message,
            lambda positions: input_check(self.context, conv, value_name, statement, positions),
        )
