"""The walk of a `forward` body: which convolution inputs a shape check covers, statement
by statement.

Cost: each statement once, each expression once by `calls_in_order` and once for its
walrus targets; a check's test once (`mark_checked`: the names whose shape it reads, or
that it reads, collected in one walk and then looked up), so O(forward + tracked names per
check) in all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Iterator, Optional, Set

from torchlint.analysis.classes import self_attribute
from torchlint.analysis.names import cst_dotted_name
from torchlint.analysis.statements import assigned_names, read_names
from torchlint.core.lazy import cst
from torchlint.core.walk import blocks, children, pruned_walk
from torchlint.rules.training.unvalidated_conv_input.expressions import (
    calls_in_order,
    concat_axis,
    conv_input,
    header_expressions,
    header_targets,
    is_check_call,
    joins_channels,
    present_attribute,
    raises,
    same_channels_source,
    shape_sources,
)
from torchlint.rules.training.unvalidated_conv_input.outside import Outside
from torchlint.rules.training.unvalidated_conv_input.values import (
    CONCATENATIONS,
    CONCATS,
    CONV_FUNCTIONS,
    COUNT,
    FIXED_CONCATS,
    INTERNAL_CONCATS,
    ConvCall,
    Finding,
    TrackedValue,
)

if TYPE_CHECKING:
    from torchlint.rules.training.unvalidated_conv_input.rule import UnvalidatedConvInput


class ForwardWalker:
    """Goes through forward's statements in source order, tracking which names hold an
    unchecked parameter or concatenation, and reporting the first conv on each."""

    def __init__(self, rule: UnvalidatedConvInput, instance: str, convs, values: Dict[str, TrackedValue]) -> None:
        self.rule = rule
        self.instance = instance
        self.convs = convs
        self.values = values
        self.imports = rule.context.imports
        self.concatenations = rule.settings[CONCATS]
        self.shape_aliases: Dict[str, set] = {}
        self.present: Set[str] = set()  # attributes an enclosing `if self.x is not None:` shows set
        self.outside = Outside(instance, values)
        self.internal_concatenations = rule.settings[INTERNAL_CONCATS]
        self.fixed_concatenations = rule.settings[FIXED_CONCATS]
        self.depth = 0  # how many blocks (branches, loops, ...) enclose the statement

    def statement(self, statement) -> Iterator[Finding]:
        if isinstance(statement, cst.SimpleStatementLine):
            fixable_line = statement if len(statement.body) == 1 else None
            for small in statement.body:
                yield from self.small(small, fixable_line)
        elif isinstance(statement, cst.SimpleStatementSuite):  # `if c: return self.conv(x)`
            for small in statement.body:
                yield from self.small(small, None)
        elif isinstance(statement, cst.If):
            if raises(statement.body):
                self.mark_checked(statement.test)
            yield from self.expression(statement.test, None)
            body, *rest = blocks(statement)
            present = present_attribute(statement.test, self.instance)
            added = present is not None and present not in self.present
            if added:
                self.present.add(present)
            self.depth += 1
            for inner in body:
                yield from self.statement(inner)
            if added:
                self.present.discard(present)
            for block in rest:
                for inner in block:
                    yield from self.statement(inner)
            self.depth -= 1
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            self.values.pop(statement.name.value, None)
        else:
            for header in header_expressions(statement):
                yield from self.expression(header, None)
            for target in header_targets(statement):
                self.rebind(target, None)
            if isinstance(statement, cst.For):
                self.outside.iterate(statement.target, statement.iter)
            else:
                for target in header_targets(statement):
                    self.outside.assign(target, None)
            yield from self.blocks(statement)

    def blocks(self, statement) -> Iterator[Finding]:
        self.depth += 1
        for block in blocks(statement):
            for inner in block:
                yield from self.statement(inner)
        self.depth -= 1

    def small(self, small, line) -> Iterator[Finding]:
        if isinstance(small, cst.Assert):
            self.mark_checked(small.test)
            return
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and is_check_call(small.value):
            for arg in small.value.args:
                self.mark_checked(arg.value, shape_only=False)
            return
        for child in children(small):
            yield from self.expression(child, line)
        if isinstance(small, cst.Assign):
            for target in small.targets:
                self.rebind(target.target, small.value)
                self.outside.assign(target.target, small.value)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            self.rebind(small.target, small.value)
            self.outside.assign(small.target, small.value)
        elif isinstance(small, cst.Del):
            self.rebind(small.target, None)
        elif isinstance(small, cst.Expr):
            self.outside.grow(small.value)

    def expression(self, expression, line) -> Iterator[Finding]:
        for call, conditional in calls_in_order(expression, False):
            conv = self.conv(call)
            if conv is None:
                continue
            argument = conv_input(call)
            if argument is None:
                continue
            if isinstance(argument, cst.Name):
                value = self.values.get(argument.value)
                if value is None or value.checked or value.reported:
                    continue
                if value.origin == CONCATS and not self.reports_concatenation(value.axis, value.outside, conv):
                    continue
                value.reported = True
                report = self.rule.conv_report(conv, argument.value, value.origin, line, conditional)
                yield Finding(value.origin, report, conv.access is None, value.outside)
            elif self.concatenations and self.is_concatenation(argument):
                provenance = self.outside.concatenated(argument)
                if self.reports_concatenation(concat_axis(argument), provenance, conv):
                    report = self.rule.conv_report(conv, None, CONCATS, line, conditional)
                    yield Finding(CONCATS, report, conv.access is None, provenance)
            if self.depth == 0 and not conditional and not conv.optional and conv.access is not None:
                source = same_channels_source(argument)
                if source is not None:
                    self.outside.checked_by_layer(source)
        for node in pruned_walk(expression, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            if isinstance(node, cst.NamedExpr):
                self.rebind(node.target, None)

    def conv(self, call) -> Optional[ConvCall]:
        func = call.func
        attribute = self_attribute(func, self.instance)
        if attribute is not None:
            found = self.convs.get(attribute)
            if found is None:
                return None
            layer, dims, placeholders = found
            access = f"{self.instance}.{attribute}" + "".join(f"[{i}]" for i in layer.index)
            label = f"`{self.instance}.{attribute}` ({layer.qualified.rsplit('.', 1)[-1]})"
            # under `if self.x is not None:` a None alternative is ruled out; nn.Identity() is not
            certain = not placeholders or (placeholders == {"None"} and attribute in self.present)
            return ConvCall(call, label, dims, access, not certain)
        qualified = self.imports.qualified_name(func)
        if qualified in CONV_FUNCTIONS:
            return ConvCall(call, f"`{cst_dotted_name(func)}`", CONV_FUNCTIONS[qualified], None)
        return None

    def reports_concatenation(self, axis: Optional[int], outside: frozenset, conv: ConvCall) -> bool:
        if not joins_channels(axis, conv.dims):
            return False
        if self.internal_concatenations:
            return True
        # a fixed number of parts: torch's own error names the one sum the outside parts change
        return bool(outside) and (COUNT in outside or self.fixed_concatenations)

    def is_concatenation(self, expression) -> bool:
        return isinstance(expression, cst.Call) and self.imports.qualified_name(expression.func) in CONCATENATIONS

    def mark_checked(self, expression, shape_only: bool = True) -> None:
        """The values a test checks: those whose shape it reads (`x.shape[1] == 3`,
        `x.dim()`, `c` of `n, c, h, w = x.shape`; `x is not None` checks no shape), or,
        given to a check function, any it reads. Cost: two walks of the test, then
        O(tracked values + shape aliases)."""
        read = read_names(expression)
        checked = shape_sources(expression, self.values) if shape_only else read
        for name, value in self.values.items():
            if name in checked:
                value.checked = True
        for alias, sources in self.shape_aliases.items():
            if alias in read:
                for source in sources:
                    if source in self.values:
                        self.values[source].checked = True

    def rebind(self, target, value, aliases: bool = True) -> None:
        """A name is bound anew: it now holds a concatenation, the same tensor (`x = x.float()`),
        part of a tracked value's shape (`n, c, h, w = x.shape`: a check on `c` checks `x`),
        or something else that this rule does not follow."""
        if aliases:
            sources = shape_sources(value, self.values) if value is not None else set()
            for name in assigned_names(target):
                self.shape_aliases.pop(name, None)
                if sources:
                    self.shape_aliases[name] = sources
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.rebind(element.value, None, aliases=False)
            return
        if isinstance(target, cst.StarredElement):
            self.rebind(target.value, None, aliases=False)
            return
        if not isinstance(target, cst.Name):
            return
        name = target.value
        if value is not None and self.concatenations and self.is_concatenation(value):
            self.values[name] = TrackedValue(CONCATS, axis=concat_axis(value), outside=self.outside.concatenated(value))
            return
        source = same_channels_source(value)
        if source is not None and source in self.values and source == name:
            return  # x = x.float(): still the same value
        self.values.pop(name, None)
