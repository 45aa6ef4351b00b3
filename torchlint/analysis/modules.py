"""What a class is to PyTorch, and what its attributes hold: one answer for every rule.

Rules that ask "is this class an `nn.Module` (or a `LightningModule`)?", "what does
`self.fusion` hold?" or "which method is `forward`?" ask here, so the question is
answered the same way everywhere.

Whether a class is a module is decided from its bases, resolved through the file's
imports (`from torch import nn`, `import torch.nn as nn`, `from torch.nn import Conv2d`,
aliases; never by spelling alone), then through the classes of the same file, then
through the classes of the rest of the linted tree. Within one file a base imported
from elsewhere may be undecidable; such a class is of `Kind.UNKNOWN`, and a rule defers
its findings in that class to the project pass:

    classes = file_classes(self.context)            # once per file, shared by rules
    verdict = classes.verdict(class_node, "module")  # True / False / None (defer)
    if verdict is None:
        self.context.defer(report, ClassIs(class_name, "module"))  # torchlint.index.pending

and the project pass keeps the finding if the class turns out to be a module once every
file's classes are known (`torchlint.index.resolver`). A class whose base stays unresolvable (imported from outside the tree, or from a
file the rule's gate skipped; the flake8 plugin, which sees one file, is always in this
case) counts as a module if it defines `forward`, and as a `LightningModule` if it
defines one of the `*_step` methods.
"""

from __future__ import annotations

import ast
import builtins
import enum
import sys
from dataclasses import dataclass
from typing import AbstractSet, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from torchlint.core.lazy import cst
from torchlint.analysis.names import ImportMap, ast_dotted_name, cst_dotted_name, resolve
from torchlint.index.module_names import absolute_import, is_package, module_name, suffix_matches
from torchlint.core.walk import blocks, children, statements, walk


class Kind(str, enum.Enum):
    """What a class is, from its bases. Ordered: a class is the strongest of its bases."""

    OTHER = "other"  # provably neither
    UNKNOWN = "unknown"  # some base could not be resolved
    MODULE = "module"  # a torch.nn.Module
    LIGHTNING = "lightning"  # a LightningModule (also a module)


_STRENGTH = {Kind.OTHER: 0, Kind.UNKNOWN: 1, Kind.MODULE: 2, Kind.LIGHTNING: 3}

LIGHTNING_PACKAGES = ("lightning", "pytorch_lightning")
LIGHTNING_STEPS = ("training_step", "validation_step", "test_step", "predict_step")

# torch.nn names that are classes but not modules
_NN_NON_MODULES = frozenset({"Parameter", "UninitializedParameter", "UninitializedBuffer", "Buffer"})
_NN_NON_MODULE_PACKAGES = frozenset({"utils", "init", "functional", "parameter", "attention", "grad"})
# packages whose classes are never modules (besides the standard library)
_NEVER_MODULES = frozenset({"numpy", "typing_extensions", "pydantic", "attr", "attrs"})


def canonical(qualified: Optional[str]) -> Optional[str]:
    """`torch.nn.modules.conv.Conv2d` -> `torch.nn.Conv2d`; other names unchanged."""
    if qualified and qualified.startswith("torch.nn.modules."):
        return "torch.nn." + qualified.rsplit(".", 1)[-1]
    return qualified


def root_kind(qualified: Optional[str]) -> Optional[Kind]:
    """The kind of a class named by a fully qualified name from outside the linted tree:
    torch.nn classes (Module, _Loss, containers, layers) are MODULE, Lightning's
    `LightningModule` is LIGHTNING, other torch / stdlib / known classes are OTHER;
    None if the name says nothing (a third-party or in-tree class)."""
    if not qualified:
        return None
    parts = qualified.split(".")
    head, last = parts[0], parts[-1]
    if head in LIGHTNING_PACKAGES:
        return Kind.LIGHTNING if last == "LightningModule" else Kind.OTHER
    if head == "torch":
        if parts[:2] == ["torch", "ao"] and len(parts) > 2 and parts[2] == "nn":
            parts = ["torch"] + parts[2:]
        if (
            len(parts) >= 3
            and parts[1] == "nn"
            and parts[2] not in _NN_NON_MODULE_PACKAGES
            and last not in _NN_NON_MODULES
            and last.lstrip("_")[:1].isupper()
        ):
            return Kind.MODULE
        return Kind.OTHER
    if head in _NEVER_MODULES or head in getattr(sys, "stdlib_module_names", ()) or head == "builtins":
        return Kind.OTHER
    return None


@dataclass(frozen=True)
class ClassFacts:
    """One class, as JSON-able facts: its full dotted name (module.Outer.Inner), its bases
    as absolute dotted names (None: a base that is not a resolvable name), its methods."""

    name: str
    bases: Tuple[Optional[str], ...]
    methods: Tuple[str, ...]
    # what the body shows the class to be, for when its bases say nothing ("module",
    # "lightning"); None: not looked at (then a `forward` / `*_step` method decides)
    evidence: Optional[Tuple[str, ...]] = None

    def to_json(self) -> list:
        data = [self.name, list(self.bases), list(self.methods)]
        return data if self.evidence is None else data + [list(self.evidence)]

    @classmethod
    def from_json(cls, data: Sequence) -> "ClassFacts":
        evidence = tuple(data[3]) if len(data) > 3 else None
        return cls(data[0], tuple(data[1]), tuple(data[2]), evidence)


class ClassIndex:
    """The classes known so far (one file's, or the whole tree's) and the resolution of
    any of them to a Kind. This is the one resolution function of all rules."""

    def __init__(self, classes: Iterable[ClassFacts]) -> None:
        self.classes: Dict[str, ClassFacts] = {}
        self._by_last: Dict[str, List[ClassFacts]] = {}
        for facts in classes:
            self.classes.setdefault(facts.name, facts)
            self._by_last.setdefault(facts.name.rsplit(".", 1)[-1], []).append(facts)
        self._kinds: Dict[str, Kind] = {}

    def find(self, dotted: str) -> Optional[ClassFacts]:
        """The class named `dotted`, exactly or as the tail of a longer module path
        (`pkg.models.Head` finds `src.pkg.models.Head`)."""
        found = self.classes.get(dotted)
        if found is not None:
            return found
        matches = [
            facts
            for facts in self._by_last.get(dotted.rsplit(".", 1)[-1], ())
            if suffix_matches(facts.name, dotted)
        ]
        return min(matches, key=lambda facts: facts.name) if matches else None

    def kind(self, name: str) -> Kind:
        """The kind of the class named `name` (a dotted name, in the index or not)."""
        return self._kind(name, ())

    def _kind(self, name: Optional[str], seen: Tuple[str, ...]) -> Kind:
        if name is None:
            return Kind.UNKNOWN
        if name in self._kinds:
            return self._kinds[name]
        root = root_kind(name)
        if root is not None:
            return root
        facts = self.find(name)
        if facts is None:
            return Kind.UNKNOWN
        if facts.name in seen:  # a cycle of bases: says nothing
            return Kind.OTHER
        kind = Kind.OTHER
        for base in facts.bases:
            base_kind = self._kind(base, seen + (facts.name,))
            if _STRENGTH[base_kind] > _STRENGTH[kind]:
                kind = base_kind
        self._kinds[name] = kind
        return kind

    def is_module(self, facts: ClassFacts, evidence: bool = True) -> bool:
        """`evidence=False`: a class whose bases say nothing is a module if it has a
        `forward`, whatever its body shows."""
        kind = self.kind(facts.name)
        if kind is Kind.UNKNOWN:
            if evidence and facts.evidence is not None:
                return self._evident(facts, ("module", "lightning"), ())
            return "forward" in facts.methods
        return kind in (Kind.MODULE, Kind.LIGHTNING)

    def is_lightning(self, facts: ClassFacts, evidence: bool = True) -> bool:
        kind = self.kind(facts.name)
        if kind is Kind.UNKNOWN:
            if evidence and facts.evidence is not None:
                return self._evident(facts, ("lightning",), ())
            return any(step in facts.methods for step in LIGHTNING_STEPS)
        return kind is Kind.LIGHTNING

    def _evident(self, facts: ClassFacts, kinds: Tuple[str, ...], seen: Tuple[str, ...]) -> bool:
        """Whether the body of the class, or of a base in the index, shows it is one of `kinds`."""
        if any(kind in (facts.evidence or ()) for kind in kinds):
            return True
        for base in facts.bases:
            found = self.find(base) if base is not None else None
            if found is not None and found.name not in seen and self._evident(found, kinds, seen + (facts.name,)):
                return True
        return False

    def decides(self, facts: ClassFacts, needs: str, evidence: bool = True) -> bool:
        """`needs` is "module" or "lightning"; `evidence` as for `is_module`."""
        return self.is_lightning(facts, evidence) if needs == "lightning" else self.is_module(facts, evidence)


_MAX_BASES = 8  # a deeper chain of bases is not followed
RNN_LAYERS = frozenset({"torch.nn.LSTM", "torch.nn.GRU", "torch.nn.RNN"})


def undecided_base(index: ClassIndex, name: Optional[str], depth: int = 0) -> bool:
    """Whether class `name` has a base outside torch and the standard library that the
    index cannot follow (it may be anything: a torch layer's subclass, say)."""
    if name is None or root_kind(name) is not None or depth > _MAX_BASES:
        return False
    facts = index.find(name)
    return facts is None or any(undecided_base(index, base, depth + 1) for base in facts.bases)


def torch_base(index: ClassIndex, name: str, roots: AbstractSet[str], depth: int = 0) -> Optional[str]:
    """The one of `roots` (canonical torch names: `torch.nn.LSTM`, ...) that class `name`
    is or inherits from, through the classes of the index (in any file), or None."""
    qualified = canonical(name)
    if qualified in roots:
        return qualified
    facts = index.find(name) if depth < _MAX_BASES else None
    for base in facts.bases if facts is not None else ():
        found = torch_base(index, base, roots, depth + 1) if base else None
        if found:
            return found
    return None


# ---- one file's classes (LibCST) ------------------------------------------------


class FileClasses:
    """Every class of one parsed file, with its bases resolved; built once per file and
    shared by all rules of the traversal (see `file_classes`)."""

    def __init__(self, module, path: str, imports: ImportMap) -> None:
        self.module_name = module_name(path)
        self._package = is_package(path)
        self._imports = imports
        self._top_level = {
            statement.name.value for statement in module.body if isinstance(statement, cst.ClassDef)
        }
        self.by_node: Dict[Any, ClassFacts] = {}
        self._collect(module.body, "")
        self.index = ClassIndex(self.by_node.values())

    def _collect(self, body, prefix: str) -> None:
        for statement in body:
            if isinstance(statement, cst.ClassDef):
                qualname = f"{prefix}{statement.name.value}"
                self.by_node[statement] = ClassFacts(
                    f"{self.module_name}.{qualname}" if self.module_name else qualname,
                    tuple(self._base(arg.value) for arg in statement.bases if arg.keyword is None and not arg.star),
                    tuple(method.name.value for method in methods(statement)),
                )
                self._collect(blocks(statement)[0], qualname + ".")
            elif isinstance(statement, (cst.If, cst.Try, cst.With, cst.FunctionDef)):
                # classes defined in blocks and functions: named as if at this level
                for block in blocks(statement):
                    self._collect(block, prefix)

    def _base(self, expression) -> Optional[str]:
        if isinstance(expression, cst.Subscript):  # Generic[T], nn.Module can't be, but mixins can
            expression = expression.value
        dotted = cst_dotted_name(expression)
        return resolve_base(dotted, self._imports.table, self.module_name, self._package, self._top_level)

    def facts_of(self, class_node) -> Optional[ClassFacts]:
        return self.by_node.get(class_node)

    def verdict(self, class_node, needs: str = "module") -> Optional[bool]:
        """True: the class is a module (`needs="lightning"`: a LightningModule); False: it
        is not; None: it depends on classes of other files, defer to the project pass."""
        facts = self.by_node.get(class_node)
        if facts is None:
            return False
        if self.index.kind(facts.name) is Kind.UNKNOWN:
            return None
        return self.index.decides(facts, needs)


def resolve_base(
    dotted: Optional[str], table: Mapping[str, str], module: str, package: bool, top_level: Iterable[str]
) -> Optional[str]:
    """The absolute dotted name of a base class written `dotted` in module `module`:
    through the file's imports, its top-level classes, or the builtins; None if unknown."""
    if dotted is None:
        return None
    resolved = resolve(dotted, table)
    if resolved is not None:
        if resolved.startswith("."):
            return absolute_import(module, package, resolved)
        return resolved
    head = dotted.split(".")[0]
    if head in top_level:
        return f"{module}.{dotted}" if module else dotted
    if "." not in dotted and hasattr(builtins, dotted):
        return f"builtins.{dotted}"
    return None


def ast_bases(node, table: Mapping[str, str], module: str, package: bool, top_level: Iterable[str]) -> Tuple:
    """The resolved bases (`resolve_base`) of a stdlib-ast ClassDef; `Generic[T]` is `Generic`."""
    return tuple(
        resolve_base(ast_dotted_name(base.value if isinstance(base, ast.Subscript) else base), table, module, package, top_level)
        for base in node.bases
    )


def file_classes(context) -> FileClasses:
    """The FileClasses of the file a RuleContext checks, built at most once per file."""
    cached = getattr(context, "_torchlint_file_classes", None)
    if cached is None:
        cached = FileClasses(context.module, context.path, context.imports)
        context._torchlint_file_classes = cached
    return cached


# ---- classes, methods and attributes (LibCST) -------------------------------------


def methods(class_node) -> List:
    """The FunctionDefs of a class body (also those under `if`/`try` in the body)."""
    found = []
    stack = list(blocks(class_node)[0])
    while stack:
        statement = stack.pop(0)
        if isinstance(statement, cst.FunctionDef):
            found.append(statement)
        elif isinstance(statement, (cst.If, cst.Try, cst.With)):
            for block in blocks(statement):
                stack.extend(block)
    return found


def method(class_node, name: str):
    """The method `name` of a class (the last definition wins, as at run time), or None."""
    found = None
    for function in methods(class_node):
        if function.name.value == name:
            found = function
    return found


def parameter_names(function) -> List[str]:
    """The names of a function's parameters, in order (positional-only, regular,
    *args, keyword-only, **kwargs)."""
    params = function.params
    names = [p.name.value for p in (*params.posonly_params, *params.params)]
    if isinstance(params.star_arg, cst.Param):
        names.append(params.star_arg.name.value)
    names.extend(p.name.value for p in params.kwonly_params)
    if params.star_kwarg is not None:
        names.append(params.star_kwarg.name.value)
    return names


def self_name(function) -> Optional[str]:
    """The name a method calls its instance (`self`), or None for a static method."""
    for decorator in function.decorators:
        if cst_dotted_name(decorator.decorator) in ("staticmethod", "classmethod"):
            return None
    params = function.params
    first = (*params.posonly_params, *params.params)[:1]
    return first[0].name.value if first else None


def self_attribute(expression, instance: Optional[str]) -> Optional[str]:
    """`x` for `self.x` (where `self` is `instance`), else None."""
    if (
        instance is not None
        and isinstance(expression, cst.Attribute)
        and isinstance(expression.value, cst.Name)
        and expression.value.value == instance
    ):
        return expression.attr.value
    return None


def attribute_values(class_node) -> Dict[str, List]:
    """What each `self.<name>` is assigned to, in any method of the class, in source
    order: `self.a = v`, `self.a: T = v`, `self.a = self.b = v`, `self.a, self.b = v, w`."""
    values: Dict[str, List] = {}
    for function in methods(class_node):
        instance = self_name(function)
        if instance is None:
            continue
        for node in statements(function.body):
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    _bind(values, target.target, node.value, instance)
            elif isinstance(node, cst.AnnAssign) and node.value is not None:
                _bind(values, node.target, node.value, instance)
    return values


def _bind(values: Dict[str, List], target, value, instance: str) -> None:
    name = self_attribute(target, instance)
    if name is not None:
        values.setdefault(name, []).append(value)
    elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        if len(target.elements) == len(value.elements):
            for left, right in zip(target.elements, value.elements):
                if not isinstance(left, cst.StarredElement) and not isinstance(right, cst.StarredElement):
                    _bind(values, left.value, right.value, instance)


def is_docstring(statement) -> bool:
    """Whether a statement is a bare string (a docstring when it comes first)."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def assigned_names(target) -> List[str]:
    """The plain names an assignment target binds: `a`, `a, (b, *c)` -> a, b, c."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in assigned_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return assigned_names(target.value)
    return []


def _is_future_import(statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, cst.ImportFrom) and not small.relative and cst_dotted_name(small.module) == "__future__"
        for small in statement.body
    )


def insert_import(module, positions, newline: str, code: str = "import torch"):
    """The edit that adds an import to a module: before its first import (after the
    docstring and `from __future__` imports), else before its first statement, else at
    its end."""
    anchor = None
    for statement in module.body:
        if is_docstring(statement) or _is_future_import(statement):
            continue
        anchor = anchor or statement
        if isinstance(statement, cst.SimpleStatementLine) and any(
            isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
        ):
            anchor = statement
            break
    if anchor is not None:
        return positions.insert_lines_before(anchor, [code], newline)
    return positions.insert_lines_after(module.body[-1], [code], newline, "")


def module_functions(module) -> Dict[str, Any]:
    """The module-level functions of a file, by name (the last definition wins)."""
    return {
        statement.name.value: statement
        for statement in module.body
        if isinstance(statement, cst.FunctionDef)
    }


def returned_values(function) -> List:
    """The expressions a function returns (its own `return`s, not nested functions')."""
    return [
        node.value
        for node in walk(function.body, into_functions=False)
        if isinstance(node, cst.Return) and node.value is not None
    ]


@dataclass(frozen=True)
class Layer:
    """What an expression constructs: the canonical qualified name of the layer class,
    and where it sits in what was built (`(0,)`: the first layer of a Sequential)."""

    qualified: str
    index: Tuple[int, ...] = ()
    via: str = ""  # "", "sequential" or the name of the factory function


SEQUENTIAL = "torch.nn.Sequential"
# functions that return the module they are given, reparametrized: `weight_norm(nn.Conv1d(...))`
# is still that Conv1d
PARAMETRIZATIONS = frozenset(
    f"torch.nn.utils.{name}"
    for name in (
        "weight_norm", "spectral_norm", "weight_norm.weight_norm", "spectral_norm.spectral_norm",
        "parametrizations.weight_norm", "parametrizations.spectral_norm", "parametrizations.orthogonal",
        "parametrize.register_parametrization",
    )
)


def constructed_layer(
    expression, imports: ImportMap, functions: Mapping[str, Any] = {}, depth: int = 0
) -> Optional[Layer]:
    """The layer an expression builds: `nn.Conv2d(...)` -> torch.nn.Conv2d; for
    `nn.Sequential(first, ...)` its first layer at index (0,); for a call of a function of
    the same file (`conv_bn_relu(...)`, or a method given by `class_functions`), what
    every one of its returns builds. `functions` maps the dotted name a call uses to the
    FunctionDef it calls."""
    if depth > 3 or not isinstance(expression, cst.Call):
        return None
    qualified = canonical(imports.qualified_name(expression.func))
    if qualified == SEQUENTIAL:
        args = expression.args
        if not args or args[0].star or args[0].keyword is not None:
            return None
        inner = constructed_layer(args[0].value, imports, functions, depth + 1)
        if inner is None:
            return None
        return Layer(inner.qualified, (0,) + inner.index, "sequential")
    if qualified in PARAMETRIZATIONS:
        args = expression.args
        if not args or args[0].star or (args[0].keyword is not None and args[0].keyword.value != "module"):
            return None
        return constructed_layer(args[0].value, imports, functions, depth + 1)
    if qualified is not None:
        return Layer(qualified)
    dotted = cst_dotted_name(expression.func)
    factory = functions.get(dotted) if dotted else None
    if factory is not None:
        layers = {
            constructed_layer(value, imports, functions, depth + 1) for value in returned_values(factory)
        }
        if len(layers) == 1:
            layer = layers.pop()
            if layer is not None:
                return Layer(layer.qualified, layer.index, dotted)
    return None


def class_functions(class_node) -> Dict[str, Any]:
    """A class's methods as factories for `constructed_layer`: `self._branch` and
    `Head._branch` both name `def _branch` of class `Head`."""
    found = {}
    for function in methods(class_node):
        found[f"self.{function.name.value}"] = function
        found[f"{class_node.name.value}.{function.name.value}"] = function
    return found


def reads_name(expression, name: str) -> bool:
    """Whether `name` is read as a variable in the expression: `x` in `x.shape[1] == 3`,
    not in `self.x` or `f(x=1)`."""
    stack = [expression]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            if node.value == name:
                return True
        elif isinstance(node, (cst.Attribute, cst.Arg)):
            stack.append(node.value)
        else:
            stack.extend(children(node))
    return False
