"""What a class is to PyTorch: one answer for every rule.

Rules that ask "is this class an `nn.Module` (or a `LightningModule`)?" ask here, so the
question is answered the same way everywhere. What an attribute holds is
`torchlint.analysis.classes` (`attribute_values`) with `torchlint.analysis.layers`
(`constructed_layer`); which method is `forward`, `torchlint.analysis.classes.method`.

Whether a class is a module is decided from its bases, resolved through the file's
imports (`from torch import nn`, `import torch.nn as nn`, `from torch.nn import Conv2d`,
aliases; never by spelling alone), then through the classes of the same file, then
through the classes of the rest of the linted tree. Within one file a base imported
from elsewhere may be undecidable; such a class is of `Kind.UNKNOWN`, and a rule defers
its findings in that class to the project pass:

    classes = file_classes(self.context)            # once per file, shared by rules
    verdict = classes.verdict(class_node, "module")  # True / False / None (defer)
    if verdict is None:
        self.context.defer(report, ClassIs(class_name, "module"))  # torchlint.analysis.pending

and the project pass keeps the finding if the class turns out to be a module once every
file's classes are known (`torchlint.index.resolver`). A class whose base stays
unresolvable (imported from outside the tree, or from a file the rule's gate skipped;
the flake8 plugin, which sees one file, is always in this case) counts as a module if it
defines `forward`, and as a `LightningModule` if it defines one of the `*_step` methods.

Cost: `ClassIndex` resolves each class once (kind and evidence, memoized, with an
in-progress set for cycles): O(classes + bases); `undecided_base` and `torch_base`
follow at most 8 bases.
"""

from __future__ import annotations

import ast
import builtins
import enum
import sys
from dataclasses import dataclass
from typing import AbstractSet, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from torchlint.analysis.classes import methods
from torchlint.analysis.names import ImportMap, ast_dotted_name, cst_dotted_name, resolve
from torchlint.core.lazy import cst
from torchlint.core.walk import blocks
from torchlint.analysis.module_names import absolute_import, is_package, module_name, suffix_matches
from torchlint.analysis.module_targets import MAX_REEXPORTS, Exports, reexported


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
# other libraries' documented nn.Module subclasses, which models of the ecosystem derive from
_ECOSYSTEM_MODULES = frozenset({
    "mmengine.model.BaseModule", "mmengine.model.base_module.BaseModule",
    "mmengine.model.BaseModel", "mmengine.model.base_model.BaseModel", "mmengine.model.base_model.base_model.BaseModel",
    "mmcv.runner.BaseModule", "mmcv.runner.base_module.BaseModule",
    "transformers.PreTrainedModel", "transformers.modeling_utils.PreTrainedModel",
    "diffusers.ModelMixin", "diffusers.models.modeling_utils.ModelMixin",
})
# OpenMMLab's codebases: every class of their `models` package (backbones, necks, heads, losses, detectors,
# data preprocessors) is an nn.Module registered for configs, but for `task_modules` (assigners, samplers, coders)
_OPENMMLAB_CODEBASES = frozenset({
    "mmdet", "mmdet3d", "mmseg", "mmrotate", "mmpose", "mmocr", "mmcls", "mmpretrain", "mmaction", "mmtrack",
    "mmedit", "mmagic", "mmyolo", "mmflow", "mmselfsup", "mmfewshot", "mmhuman3d", "mmrazor", "mmgen",
})
_OPENMMLAB_NON_MODULES = frozenset({"task_modules", "builder"})
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
    `LightningModule` is LIGHTNING, the nn.Module subclasses of mmengine, mmcv, transformers and
    diffusers that models derive from, and the classes of an OpenMMLab codebase's `models` package
    (`mmdet.models.dense_heads.AnchorHead`), are MODULE, other torch / stdlib / known classes are OTHER;
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
    if qualified in _ECOSYSTEM_MODULES:
        return Kind.MODULE
    if (
        head in _OPENMMLAB_CODEBASES and len(parts) >= 3 and parts[1] == "models"
        and _OPENMMLAB_NON_MODULES.isdisjoint(parts[2:-1]) and last[:1].isupper()
    ):
        return Kind.MODULE
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

    def __init__(self, classes: Iterable[ClassFacts], exports: Optional[Exports] = None) -> None:
        self.classes: Dict[str, ClassFacts] = {}
        self.exports: Exports = exports or {}  # the tree's package `__init__` import tables
        self._by_last: Dict[str, List[ClassFacts]] = {}
        for facts in classes:
            self.classes.setdefault(facts.name, facts)
            self._by_last.setdefault(facts.name.rsplit(".", 1)[-1], []).append(facts)
        self._kinds: Dict[str, Kind] = {}
        self._open: Set[str] = set()  # classes whose kind is being computed
        self._found: Dict[str, Optional[ClassFacts]] = {}
        self._evidence: Dict[Tuple[str, Tuple[str, ...]], bool] = {}

    def find(self, dotted: str) -> Optional[ClassFacts]:
        """The class named `dotted`, exactly or as the tail of a longer module path
        (`pkg.models.Head` finds `src.pkg.models.Head`), or through the re-exports of the
        tree's packages (`pkg.Trainer` that `pkg/__init__.py` imports from `pkg.trainer`);
        each name is looked up once."""
        found = self.classes.get(dotted)
        if found is not None:
            return found
        if dotted not in self._found:
            self._found[dotted] = self._find(dotted, 0)
        return self._found[dotted]

    def _find(self, dotted: str, depth: int) -> Optional[ClassFacts]:
        last = dotted.rsplit(".", 1)[-1]
        matches = [facts for facts in self._by_last.get(last, ()) if suffix_matches(facts.name, dotted)]
        if matches:
            return min(matches, key=lambda facts: facts.name)
        target = reexported(dotted, self.exports) if depth < MAX_REEXPORTS else None
        return None if target is None else self.classes.get(target) or self._find(target, depth + 1)

    def kind(self, name: str) -> Kind:
        """The kind of the class named `name` (a dotted name, in the index or not). Each
        class is resolved once: linear in the classes and their bases, however deep."""
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
        if facts.name in self._open:  # a cycle of bases: says nothing
            return Kind.OTHER
        self._open.add(facts.name)
        try:
            kind = Kind.OTHER
            for base in facts.bases:
                base_kind = self.kind(base)
                if _STRENGTH[base_kind] > _STRENGTH[kind]:
                    kind = base_kind
        finally:
            self._open.discard(facts.name)
        self._kinds[name] = kind
        return kind

    def is_module(self, facts: ClassFacts, evidence: bool = True) -> bool:
        """`evidence=False`: a class whose bases say nothing is a module if it has a
        `forward`, whatever its body shows."""
        kind = self.kind(facts.name)
        if kind is Kind.UNKNOWN:
            if evidence and facts.evidence is not None:
                return self._evident(facts, ("module", "lightning"))
            return "forward" in facts.methods
        return kind in (Kind.MODULE, Kind.LIGHTNING)

    def is_lightning(self, facts: ClassFacts, evidence: bool = True) -> bool:
        kind = self.kind(facts.name)
        if kind is Kind.UNKNOWN:
            if evidence and facts.evidence is not None:
                return self._evident(facts, ("lightning",))
            return any(step in facts.methods for step in LIGHTNING_STEPS)
        return kind is Kind.LIGHTNING

    def _evident(self, facts: ClassFacts, kinds: Tuple[str, ...]) -> bool:
        """Whether the body of the class, or of a base in the index, shows it is one of
        `kinds` (each class answered once per `kinds`; a cycle of bases shows nothing)."""
        key = (facts.name, kinds)
        if key not in self._evidence:
            self._evidence[key] = False  # what a cycle back to this class shows
            self._evidence[key] = any(kind in (facts.evidence or ()) for kind in kinds) or any(
                found is not None and self._evident(found, kinds)
                for found in (self.find(base) for base in facts.bases if base is not None)
            )
        return self._evidence[key]

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
        resolve_base(
            ast_dotted_name(base.value if isinstance(base, ast.Subscript) else base), table, module, package, top_level
        )
        for base in node.bases
    )


def file_classes(context) -> FileClasses:
    """The FileClasses of the file a RuleContext checks, built at most once per file."""
    return context.classes
