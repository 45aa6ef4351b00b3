"""What a `forward` says about where a value comes from: the parameters (and caller-decided
part counts) a concatenation's parts derive from.

Cost: O(the expression) per assignment, iteration or concatenation asked about.
"""

from __future__ import annotations

from typing import Dict, Set

from torchlint.analysis.classes import self_attribute
from torchlint.analysis.statements import assigned_names
from torchlint.core.lazy import cst
from torchlint.rules.training.unvalidated_conv_input.expressions import fixed_channels
from torchlint.rules.training.unvalidated_conv_input.values import COUNT, INSIDE


class Outside:
    """Which local names of a forward hold data from outside the module: a parameter, or
    what is computed from one without passing through a layer of the module (`x[1]`,
    `skip.float()`, `F.interpolate(skip, ...)`, a list built by iterating over a
    parameter, so that its length is the caller's). A layer is `self.<attr>` or a name
    bound by iterating over one (`for conv in self.convs`). `holds` answers with the
    provenance: the parameters the data derives from, and COUNT where the number of
    items is the caller's; empty for data of the module's own."""

    def __init__(self, instance: str, parameters) -> None:
        self.instance = instance
        self.names: Dict[str, frozenset] = {name: frozenset({name}) for name in parameters}
        self.layers: Set[str] = set()

    def holds(self, node) -> frozenset:
        if isinstance(node, cst.Name):
            return self.names.get(node.value, INSIDE)
        if isinstance(node, (cst.Attribute, cst.Subscript)):
            return self.holds(node.value) if self_attribute(node, self.instance) is None else INSIDE
        if isinstance(node, cst.Call):
            func = node.func
            if self._is_layer(func) or fixed_channels(node):
                return INSIDE
            found = self.holds(func.value) if isinstance(func, cst.Attribute) else INSIDE
            return found.union(*(self.holds(arg.value) for arg in node.args if arg.keyword is None))
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            return INSIDE.union(*(self.holds(element.value) for element in node.elements))
        if isinstance(node, cst.StarredElement):
            return self.holds(node.value)
        if isinstance(node, cst.BinaryOperation):
            return self.holds(node.left) | self.holds(node.right)
        if isinstance(node, cst.IfExp):
            return self.holds(node.body) | self.holds(node.orelse)
        if isinstance(node, (cst.ListComp, cst.GeneratorExp)):
            return self._comprehension(node)
        return INSIDE

    def concatenated(self, call) -> frozenset:
        """What a concatenation's parts derive from, with COUNT when the caller decides
        how many there are: the sequence joined (`torch.cat(features)`) or a starred part
        (`[x, *skips]`) comes from outside."""
        found = self.holds(call)
        sequence = next((arg.value for arg in call.args if arg.keyword is None or arg.keyword.value == "tensors"), None)
        if sequence is None or not found:
            return found
        if isinstance(sequence, (cst.List, cst.Tuple)):
            starred = [element.value for element in sequence.elements if isinstance(element, cst.StarredElement)]
            return found | {COUNT} if any(self.holds(value) for value in starred) else found
        return found | {COUNT} if self.holds(sequence) else found

    def checked_by_layer(self, name: str) -> None:
        """`name` went through a conv of the module on every path: the layer checked its
        channel count, so as a part it is as good as the module's own."""
        if name in self.names:
            self.names[name] = INSIDE

    def _is_layer(self, func) -> bool:
        while isinstance(func, cst.Subscript):
            func = func.value
        if self_attribute(func, self.instance) is not None:
            return True
        return isinstance(func, cst.Name) and func.value in self.layers

    def _comprehension(self, node) -> frozenset:
        saved = (dict(self.names), set(self.layers))
        found = INSIDE
        comp = node.for_in
        while comp is not None:
            iterated = self.holds(comp.iter)
            if iterated:  # the number of items is the caller's
                found = found | iterated | {COUNT}
            self.iterate(comp.target, comp.iter)
            comp = comp.inner_for_in
        found = found | self.holds(node.elt)
        self.names, self.layers = saved
        return found

    def assign(self, target, value) -> None:
        outside = self.holds(value) if value is not None else INSIDE
        layer = value is not None and self._is_layer(value)
        for name in assigned_names(target):
            self._set(name, outside, layer)

    def iterate(self, target, iterable) -> None:
        """`for target in iterable`: `zip` and `enumerate` pair targets with their sources."""
        unpacked = isinstance(target, (cst.Tuple, cst.List))
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and unpacked:
            sources = [arg.value for arg in iterable.args]
            if iterable.func.value == "enumerate" and len(target.elements) == 2 and sources:
                self.assign(target.elements[0].value, None)
                self.iterate(target.elements[1].value, sources[0])
                return
            if iterable.func.value == "zip" and len(target.elements) == len(sources):
                for element, source in zip(target.elements, sources):
                    self.iterate(element.value, source)
                return
        self.assign(target, iterable)

    def grow(self, expression) -> None:
        """`parts.append(x)`, `parts.extend(xs)`, `parts.insert(0, x)`: `parts` holds
        outside data from then on if `x` does."""
        if isinstance(expression, cst.Call) and isinstance(expression.func, cst.Attribute):
            owner = expression.func.value
            if isinstance(owner, cst.Name) and expression.func.attr.value in ("append", "extend", "insert"):
                grown = INSIDE.union(*(self.holds(arg.value) for arg in expression.args))
                if grown:
                    self.names[owner.value] = self.names.get(owner.value, INSIDE) | grown

    def _set(self, name: str, outside: frozenset, layer: bool) -> None:
        if outside:
            self.names[name] = outside
        else:
            self.names.pop(name, None)
        (self.layers.add if layer else self.layers.discard)(name)
