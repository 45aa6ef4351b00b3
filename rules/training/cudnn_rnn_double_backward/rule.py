"""TL004 cudnn-rnn-double-backward: the rule, which reports cuDNN RNN layers that double backward reaches
(in this file, or decided in the project pass), and its fix (run the layer with cuDNN off).
Cost: the traversal is constant per node; at the end, what reaches each double backward comes
from torchlint.analysis.file_flow and second_order (linear, their docstrings say how)."""

from __future__ import annotations

import ast
from typing import Any, List, Optional, Tuple

from torchlint.analysis.class_graph import class_graph
from torchlint.analysis.classes import self_attribute
from torchlint.analysis.file_flow import FileFlow
from torchlint.analysis.flow_scopes import MODULE_SCOPE, Scope
from torchlint.analysis.instance_flow import instance_flow, outside_tree
from torchlint.analysis.modules import RNN_LAYERS, canonical, file_classes, torch_base, undecided_base
from torchlint.analysis.names import cst_dotted_name, module_level_ast_statements, resolve
from torchlint.analysis.second_order import (
    create_graph_note,
    differentiated,
    literal_truth,
    runs_first_argument,
    second_order_call,
)
from torchlint.core.config import Config
from torchlint.core.lazy import cst
from torchlint.analysis.source_view import SourceView
from torchlint.rule_api.rule import Report, Rule
from torchlint.fixing.cudnn_off import (
    CUDNN_ENABLED,
    RnnLayer,
    already_fixed,
    cudnn_off_fix,
    layer_message,
    no_fix_reason,
    projection_of,
    turns_cudnn_off,
)
from torchlint.analysis.module_names import absolute_import, is_package
from torchlint.analysis.pending import ClassIs, Pending, RnnLayerNote, SecondOrderReaches
from torchlint.index.record import FileRecord, SecondOrderSite
from torchlint.rules.training.cudnn_rnn_double_backward import examples
from torchlint.rules.training.cudnn_rnn_double_backward.double_backward_calls import DoubleBackwardCall, flat_code
from torchlint.rules.training.cudnn_rnn_double_backward.gate import STRONG_TRIGGERS, ast_has_role


class CudnnRnnDoubleBackward(FileFlow, Rule):
    """
    ## What it does
    Flags an `nn.LSTM(...)`, `nn.GRU(...)` or `nn.RNN(...)` (or a subclass, defined in any linted
    file) that double backward reaches: `torch.autograd.grad(..., create_graph=True)`,
    `.backward(create_graph=True)`, `torch.autograd.functional.hessian`/`hvp`/`vhp`/`jvp`,
    `jacobian`/`vjp` with `create_graph=True`, `torch.func.hessian`, nested transforms
    (`jacrev(jacrev(f))`, `grad(grad(f))`) and `gradgradcheck`. A non-literal `create_graph` counts
    when it can be true (a variable not only assigned false, a parameter without a false default or
    that a call in the file sets otherwise).

    "Reaches": the function holding the second-order call runs the layer's holder (the class or
    function that builds it), directly, through `self.<attr>`, through functions of the file it
    calls, or through a parameter: a model it calls, or a tensor that flows into what is
    differentiated (data that only feeds `inputs`, or passes `.detach()`, does not count). A
    parameter is followed to what its callers pass, in any linted file, through the import graph
    (aliases, relative imports, re-exports, factories, `self.critic`, callers passing on their own
    parameter), or to its annotation (`critic: Critic`). With no call site, the candidates are the
    `nn.Module` classes of the same file. The finding sits on the constructor and names the
    second-order call.

    Not flagged: RNNs that see only first-order backward; calls under
    `torch.backends.cudnn.flags(enabled=False)` or in a file that sets
    `torch.backends.cudnn.enabled = False`; a plain RNN whose every call in `forward` runs with cuDNN
    off; `nn.LSTMCell`/`GRUCell` (never cuDNN). The flake8 plugin sees one file. A subclass from
    another file is recognised where it is built only if its name says `LSTM`, `GRU` or `RNN`.

    ## Why is this bad?
    cuDNN has no double backward for its RNN kernels, and PyTorch uses cuDNN for every
    `nn.LSTM`/`GRU`/`RNN` on a CUDA tensor: the model trains on CPU, then fails on the first
    second-order step on GPU (`NotImplementedError: ... Double backwards is not supported for CuDNN
    RNNs`, pytorch/pytorch#5261). Typical victims: WGAN-GP critics, gradient regularisers, MAML-style
    meta-learning, physics-informed losses over sequence models. The non-cuDNN path has a
    differentiable backward for LSTM and GRU. A projected LSTM (`proj_size > 0`) is not known to work
    that way either (pytorch/pytorch#47725): flagged even with cuDNN off, without a fix (use
    `proj_size=0` plus an `nn.Linear`, a hand-written cell, a CPU copy, or a penalty without second
    derivatives). `train()`/`eval()`, `cudnn.benchmark`, `retain_graph=True` and `torch.no_grad()`
    do not help.

    ## Example
    ```python
    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(32, 64, batch_first=True)

        def forward(self, x):
            out, _ = self.rnn(x)
            return out[:, -1].sum(-1)

    def gradient_penalty(critic, real):
        grad, = torch.autograd.grad(critic(real).sum(), real, create_graph=True)
        return ((grad.norm(2, dim=-1) - 1) ** 2).mean()

    penalty = gradient_penalty(Critic().cuda(), batch)
    ```

    ## Use instead
    ```python
        def forward(self, x):
            with torch.backends.cudnn.flags(enabled=False):
                out, _ = self.rnn(x)
            return out[:, -1].sum(-1)
    ```

    ## Fix safety
    Unsafe: for a plain RNN held as `self.<attr>`, each statement of `forward` (and of the methods
    `forward` calls on `self`) that calls `self.<attr>(...)` is wrapped in
    `with torch.backends.cudnn.flags(enabled=False):` (adding `import torch` if needed), in the file
    that builds the layer. Native kernels are slower than cuDNN (markedly for deep or long
    sequences) and may differ in the last bits; on CPU nothing changes. No fix for a projected LSTM,
    a layer used otherwise than as `self.<attr>(...)` in `forward`, or a call in a one-line block. An
    LSTM built with `*args`/`**kwargs` and no `proj_size=` might be projected: flagged without a fix,
    and the message says so.
    """

    code = "TL004"
    name = "cudnn-rnn-double-backward"
    summary = "cuDNN RNN reached by double backward (fails on CUDA)"
    fixable = True
    project_rule = True
    triggers = STRONG_TRIGGERS

    @classmethod
    def trigger_strings(cls, config: Config, path: str) -> Tuple[str, ...]:
        # a package __init__ may re-export the class that holds an RNN: always look at it
        return () if is_package(path) else cls.triggers

    VALID = examples.VALID
    INVALID = examples.INVALID

    # ---- sites -------------------------------------------------------------------

    @classmethod
    def sites(cls, view: SourceView, config: Config) -> Tuple[ast.AST, ...]:
        """The whole file (what double backward reaches runs through any function of it),
        if it may hold an RNN layer or a double backward, or re-export one."""
        init = is_package(view.path)
        if not init and not any(trigger in view.text for trigger in STRONG_TRIGGERS):
            return ()
        if view.tree is None:  # a file that does not parse (only outside the engine)
            return ()
        if init and any(isinstance(n, ast.ImportFrom) for n in module_level_ast_statements(view.tree)):
            return (view.tree,)
        return (view.tree,) if ast_has_role(view, view.imports) else ()

    # ---- collection (one traversal) ------------------------------------------------

    def __init__(self, context) -> None:
        super().__init__(context)
        self._start_flow()
        self._off: List[bool] = []  # with-blocks, True where cuDNN is turned off
        self._outer_off: List[List[bool]] = []  # the with-blocks around each enclosing def
        self._layers: List[RnnLayer] = []
        self._maybe_layers: List[Tuple[Any, Tuple]] = []
        self._sites: List[DoubleBackwardCall] = []
        self._cudnn_off_in_file = False

    def visit_FunctionDef(self, node) -> None:
        super().visit_FunctionDef(node)
        # a function body runs when called, not under the with-blocks around its `def`
        self._outer_off.append(self._off)
        self._off = []

    def leave_FunctionDef(self, node) -> None:
        super().leave_FunctionDef(node)
        self._off = self._outer_off.pop()

    def _assigned(self, target, value) -> None:
        if self.context.imports.qualified_name(target) == CUDNN_ENABLED and literal_truth(value) is False:
            self._cudnn_off_in_file = True

    def visit_With(self, node) -> None:
        self._off.append(any(turns_cudnn_off(item.item, self.context.imports) for item in node.items))

    def leave_With(self, node) -> None:
        self._off.pop()

    def visit_Call(self, node) -> None:
        self._record_call(node)
        callee = cst_dotted_name(node.func)
        scope = self._scope
        qualified = canonical(self.context.imports.qualified_name(node.func))
        if runs_first_argument(qualified, callee) and node.args:
            first = cst_dotted_name(node.args[0].value)
            if first:
                scope.called.add(first)
        where = (scope, self._class_stack[-1] if self._class_stack else None, set(self._current_top()))
        if qualified in RNN_LAYERS:
            self._add_layer(node, qualified, where)
        elif isinstance(node.func, (cst.Name, cst.Attribute)):
            self._maybe_layers.append((node, where))  # a subclass, of this file or another
        cls = scope.cls
        if cls is not None and callee and scope.instance and callee.startswith(scope.instance + "."):
            attr = callee[len(scope.instance) + 1 :]
            if "." not in attr:
                statement = self._statements[-1] if self._statements else None
                cls.self_calls.append((attr, scope, statement, any(self._off)))
        site = second_order_call(node, qualified, scope, self.context.imports)
        if site is not None:
            what, value = site
            off = any(self._off)
            outputs, inputs = differentiated(node, qualified)
            self._sites.append(DoubleBackwardCall(node, scope, what, value, off, outputs, inputs))

    def _add_layer(self, node, qualified: str, where) -> None:
        scope, cls, top = where
        projection, unknown = projection_of(node, qualified, self.context.module)
        attrs = [self_attribute(target, scope.instance) for target in self._targets.get(id(node), ())]
        attr = [None, *filter(None, attrs)][-1]  # `self.<attr> = nn.LSTM(...)`: the last such target
        owner = cls if scope.cls is cls else None
        label = flat_code(self.context.module, node.func)
        self._layers.append(RnnLayer(node, qualified, label, projection, unknown, top, owner, attr))

    # ---- decision --------------------------------------------------------------------

    def leave_Module(self, node) -> None:
        self._resolve_subclass_layers()
        self._top_names = set(self._top_refs) - {MODULE_SCOPE}
        sites = []
        for site in self._sites:
            note = self._value_note(site)
            if note is not None:
                sites.append((site, note, self._reach(site.scope, site.outputs, site.inputs)))
        unreached, deferred = [], []
        for layer in self._layers:
            if already_fixed(layer):
                continue
            holders = self._holders(layer.top)
            hits = [
                (site, note)
                for site, note, reach in sites
                if (layer.projection or not self._site_off(site)) and (reach.local & holders)
            ]
            reason = no_fix_reason(layer, self.context)
            if hits and layer.kind not in RNN_LAYERS:  # a subclass whose bases are in other files
                site, note = min(hits, key=lambda hit: self._row_of(hit[0]))
                report = Report(self, layer.node, self._message(layer, reason, site, note, len(hits) - 1), None)
                diagnostic = self.context.pending_diagnostic(report)
                if diagnostic is not None:
                    deferred.append(Pending(diagnostic, ClassIs(layer.kind, "rnn")))
            elif hits:
                site, note = min(hits, key=lambda hit: self._row_of(hit[0]))
                fix = None if reason else (lambda positions, layer=layer: cudnn_off_fix(layer, self.context, positions))
                self.report(layer.node, self._message(layer, reason, site, note, len(hits) - 1), fix)
            else:
                unreached.append((layer, holders, reason))
        self._record(sites, unreached, deferred)

    def _message(self, layer: RnnLayer, reason: Optional[str], site: DoubleBackwardCall, note: str, more: int) -> str:
        where = f"{self.context.path}:{self._row_of(site)}"
        return layer_message(self._layer_note(layer, reason), where, self._describe(site, note), more)

    def _resolve_subclass_layers(self) -> None:
        """Calls of classes that are (or, through bases in other files, may be) RNN layers."""
        classes = file_classes(self.context)
        local = {facts.name.rsplit(".", 1)[-1]: facts.name for facts in classes.by_node.values()}
        for node, where in self._maybe_layers:
            dotted = cst_dotted_name(node.func)
            name = resolve(dotted, self.context.imports.table) or local.get(dotted or "")
            if name and name.startswith("."):
                name = absolute_import(classes.module_name, is_package(self.context.path), name)
            if not name or outside_tree(name) or not name.rsplit(".", 1)[-1][:1].isupper():
                continue  # a function's call, not a class's (spelling only saves work here)
            kind = torch_base(classes.index, name, RNN_LAYERS)
            if kind is not None:
                self._add_layer(node, kind, where)
            elif undecided_base(classes.index, name):
                self._add_layer(node, name, where)

    def _row_of(self, site: DoubleBackwardCall) -> int:
        return self.context.positions.start(site.node).row

    def _site_off(self, site: DoubleBackwardCall) -> bool:
        return site.disabled or self._cudnn_off_in_file

    def _describe(self, site: DoubleBackwardCall, note: str) -> str:
        if site.value is None:
            return site.what
        return site.what % flat_code(self.context.module, site.value) + note

    def _value_note(self, site: DoubleBackwardCall) -> Optional[str]:
        """None if create_graph cannot be true; "" if literally true; else why it can be."""
        code = flat_code(self.context.module, site.value) if site.value is not None else ""
        return create_graph_note(site.value, site.scope, self._passed, code)

    def _passed(self, scope: Scope, param: str) -> list:
        return [value for _, value in self._arguments_for(scope, param) if value is not None]

    # ---- what the project pass reads of this file ---------------------------------------

    def _layer_note(self, layer: RnnLayer, reason: Optional[str]) -> RnnLayerNote:
        return RnnLayerNote(layer.label, layer.projection, reason)

    def _record(self, sites, unreached, deferred: List[Pending]) -> None:
        """The file's double-backward sites that reach other files, and its layers that
        wait for a site of another file (or for their class to resolve to an RNN)."""
        site_facts = []
        for site, note, reach in sites:
            imported = {name for name in reach.imported if not outside_tree(name)}
            if imported or reach.params:
                site_facts.append(
                    SecondOrderSite(
                        self._row_of(site),
                        self._describe(site, note),
                        self._site_off(site),
                        tuple(sorted(imported)),
                        tuple(tuple(pair) for pair in sorted(reach.params, key=str)),
                    )
                )
        candidates = []
        for layer, holders, reason in unreached:
            fix = None if reason else (lambda positions, layer=layer: cudnn_off_fix(layer, self.context, positions))
            diagnostic = self.context.pending_diagnostic(Report(self, layer.node, "", fix))
            if diagnostic is not None:
                condition = SecondOrderReaches(
                    layer.kind, self._layer_note(layer, reason), tuple(sorted(holders)), self._in_module_class(layer)
                )
                candidates.append(Pending(diagnostic, condition))
        if not site_facts and not candidates and not deferred and not is_package(self.context.path):
            return
        record = self.context.record
        record.import_table = dict(self.context.imports.table)
        record.second_order_sites = tuple(site_facts)
        record.pending.extend(candidates + deferred)

    def _in_module_class(self, layer: RnnLayer) -> bool:
        """Whether the layer is held by an nn.Module class of this file (or may be)."""
        return layer.cls is not None and file_classes(self.context).verdict(layer.cls.node) is not False

    # ---- project pass ---------------------------------------------------------------------

    @classmethod
    def ast_facts(cls, view: SourceView, config: Config, record: FileRecord) -> None:
        flow = instance_flow(view)
        if flow:
            record.flow = flow
        # every class, so that a subclass of an RNN layer resolves through any file
        record.classes = class_graph(view).classes
