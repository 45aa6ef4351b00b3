"""Calls of torch functions and tensor methods, alias-aware, in LibCST and in the stdlib `ast`.

`torch.log(x)`, `T.log(x)` after `import torch as T` and `log(x)` after `from torch import
log` are all the torch function `log`; `x.log()` is the tensor method. The numerics rules
(TL301-TL306) ask these questions in their cheap `ast` gates and again in their LibCST
visitors, the same way in both.

Cost: linear in the call or expression asked about; `has_comment` renders the node
(O(node)) per rewrite, and runs LibCST's matchers over it only if its code holds a `#`.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Tuple

from torchlint.core.lazy import cst
from torchlint.analysis.names import ImportMap, ImportTable, ast_dotted_name, resolve

TORCH_DATALOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})

# ---- stdlib ast ---------------------------------------------------------------


def ast_torch_function(call: ast.Call, table: ImportTable) -> Optional[str]:
    """`log` if the call is `torch.log(...)` under any import spelling, else None."""
    qualified = resolve(ast_dotted_name(call.func), table)
    if qualified and qualified.startswith("torch.") and qualified.count(".") == 1:
        return qualified[len("torch.") :]
    return None


def ast_method_receiver(call: ast.Call, method: str) -> Optional[ast.AST]:
    """The receiver of `receiver.method(...)`, else None."""
    func = call.func
    return func.value if isinstance(func, ast.Attribute) and func.attr == method else None


def ast_unary_operand(call: Optional[ast.AST], table: ImportTable, name: str) -> Optional[ast.AST]:
    """`x` of `torch.<name>(x)` or `x.<name>()`, else None."""
    if not isinstance(call, ast.Call) or call.keywords:
        return None
    if len(call.args) == 1 and ast_torch_function(call, table) == name:
        return call.args[0]
    return None if call.args else ast_method_receiver(call, name)


def ast_is_one(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == 1


def ast_imports_torch(table: ImportTable) -> bool:
    return any(target == "torch" or target.startswith("torch.") for target in table.values())


# array frameworks whose arrays have `.item()`, `.numpy()` and `.tolist()` of their own
OTHER_ARRAY_FRAMEWORKS = frozenset({"jax", "tensorflow", "warp", "mlx", "paddle", "mindspore", "oneflow", "cupy"})


def ast_other_framework_code(view) -> bool:
    """Whether the file imports another array framework at module level and torch nowhere (a JAX
    agent beside its PyTorch twin): its arrays are that framework's. Cost: O(its imports)."""
    table = view.imports
    other = any(target.partition(".")[0] in OTHER_ARRAY_FRAMEWORKS for target in table.values())
    if ast_imports_torch(table) or not other:
        return False
    return not any(module.partition(".")[0] == "torch" for module in _imported_modules(view))


def _imported_modules(view) -> Iterator[str]:
    """The absolute modules every import of the file names, at any depth (`import torch` in a function)."""
    for node in view.nodes_of(ast.Import, ast.ImportFrom):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif node.level == 0 and node.module:
            yield node.module


def ast_is_dataloader(call: ast.Call, table: ImportTable) -> bool:
    return resolve(ast_dotted_name(call.func), table) in TORCH_DATALOADERS


def ast_keyword_is(call: ast.Call, name: str, value: object) -> bool:
    """The call passes `name=<literal value>` (True/False/None compare by identity)."""
    return any(
        keyword.arg == name and isinstance(keyword.value, ast.Constant) and keyword.value.value is value
        for keyword in call.keywords
    )


# ---- LibCST -------------------------------------------------------------------


def torch_function(call, imports: ImportMap) -> Optional[str]:
    """`log` if the call is `torch.log(...)` under any import spelling, else None."""
    qualified = imports.qualified_name(call.func)
    if qualified and qualified.startswith("torch.") and qualified.count(".") == 1:
        return qualified[len("torch.") :]
    return None


def method_receiver(call, method: str):
    """The receiver of `receiver.method(...)`, else None."""
    func = call.func
    return func.value if isinstance(func, cst.Attribute) and func.attr.value == method else None


def unary_operand(call, imports: ImportMap, name: str):
    """(x, the call if spelled as the torch function else None) of `torch.<name>(x)` or,
    in a module that uses torch, the tensor method `x.<name>()`; (None, None) otherwise."""
    if not isinstance(call, cst.Call):
        return None, None
    if torch_function(call, imports) == name:
        return only_argument(call), call
    if call.args or not ast_imports_torch(imports.table):
        return None, None
    return method_receiver(call, name), None


def is_one(node) -> bool:
    if isinstance(node, (cst.Integer, cst.Float)) and not node.lpar:
        return node.evaluated_value == 1
    return False


def is_name(node, value: str) -> bool:
    return isinstance(node, cst.Name) and node.value == value


def split_args(call) -> Optional[Tuple[List, Dict[str, object]]]:
    """The call's positional argument values and its keyword arguments by name; None if it
    unpacks `*args` or `**kwargs` (what it passes cannot be known)."""
    positional: List = []
    keywords: Dict[str, object] = {}
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            positional.append(arg.value)
        else:
            keywords[arg.keyword.value] = arg
    return positional, keywords


def only_argument(call):
    """The value of the call's single positional argument (no keywords), else None."""
    if len(call.args) == 1 and not call.args[0].star and call.args[0].keyword is None:
        return call.args[0].value
    return None


def torch_alias(imports: ImportMap) -> Optional[str]:
    """A module-level name bound to the `torch` module itself (`torch`, or `T`), else None."""
    names = sorted(name for name, target in imports.table.items() if target == "torch")
    return "torch" if "torch" in names else (names[0] if names else None)


def has_comment(node) -> bool:
    """A comment inside the node: a fix that rebuilds it from its parts would drop it."""
    # a comment is code that starts with `#`: without one, importing the matchers (a
    # second or more per process) and walking the node with them would find nothing
    if "#" not in cst.Module(body=[]).code_for_node(node):
        return False
    from libcst import matchers

    return bool(matchers.findall(node, matchers.Comment()))


_ATOMS = ("Name", "Attribute", "Call", "Subscript", "List", "Tuple", "Dict", "Set", "ListComp", "DictComp", "SetComp")


def receiver_code(module, node) -> str:
    """The node's code, parenthesised where it would not bind as `code.method()` or where it
    spans lines (which only brackets allow)."""
    code = module.code_for_node(node)
    if (type(node).__name__ in _ATOMS or node.lpar) and "\n" not in code and "\r" not in code:
        return code
    return f"({code})"


def rewritten_call(module, call, function_form: bool, imports, operand, name: str, indent: str = "") -> str:
    """`<torch>.name(operand)` in the spelling the call used (`torch.exp(...)` renamed, its
    argument as its author laid it out), or `operand.name()` when the module has no name for
    `torch` (only `from torch import log`): the tensor method needs no new import. `indent`:
    the indentation of the blocks around the call (`code_at_indent`)."""
    func = call.func
    prefix = None
    if function_form and isinstance(func, cst.Attribute) and len(call.args) == 1 and call.args[0].value is operand:
        return code_at_indent(module, call.with_changes(func=func.with_changes(attr=cst.Name(name))), indent)
    if function_form:
        prefix = module.code_for_node(func.value) if isinstance(func, cst.Attribute) else torch_alias(imports)
    if prefix is not None:
        return f"{prefix}.{name}({code_at_indent(module, operand, indent)})"
    return f"{receiver_code(module, operand)}.{name}()"


def code_at_indent(module, node, indent: str) -> str:
    """The node's code as it reads inside blocks indented by `indent`: the rows it continues
    on within brackets keep their place in the file (`Module.code_for_node` writes them as
    if the node stood at the module's top level). Strings are written as they are."""
    if not indent:
        return module.code_for_node(node)
    statement = cst.SimpleStatementLine(body=[cst.Expr(node)])
    holder = cst.FunctionDef(name=cst.Name("_"), params=cst.Parameters(),
                             body=cst.IndentedBlock(body=[statement], indent=indent))
    head = f"def _():{module.default_newline}{indent}"
    code = module.code_for_node(holder)
    return code[len(head):len(code) - len(module.default_newline)]


def definitions_calling(view, words: Tuple[str, ...], *functions: str) -> List[ast.stmt]:
    """The top-level definitions holding one of `words` or a call of one of `functions`
    imported under another name (`e(` after `from torch import exp as e`, which a trigger
    such as `exp(` misses), as rule sites (see `Rule.sites`)."""
    from torchlint.core.partial_parse import definitions_holding

    renamed = tuple(
        f"{local}(" for local, target in view.imports.items() if target in functions and not target.endswith(f".{local}")
    )
    return definitions_holding(view, words + renamed)
