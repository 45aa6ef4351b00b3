"""How a use of a deprecated torch API is rewritten, by the `rewrite` named in its table row.

Each rewrite takes the use (a Call, or the bare reference when `call` is None), the
replacement as this file spells it, and whether the use is a decorator; it returns the
new code, or None when the arguments cannot be reasoned about (`upper=cfg.upper`), in
which case the finding has no fix.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence

from torchlint.core.lazy import cst


def code(node) -> str:
    return cst.Module([]).code_for_node(node)


def _plain_args(call) -> Optional[List]:
    """The call's arguments, or None if any is `*args` or `**kwargs`."""
    args = list(call.args)
    return None if any(arg.star for arg in args) else args


def _split(args) -> tuple:
    positional = [arg for arg in args if arg.keyword is None]
    keywords = {arg.keyword.value: arg for arg in args if arg.keyword is not None}
    return positional, keywords


def _arg_text(arg) -> str:
    value = code(arg.value)
    return f"{arg.keyword.value}={value}" if arg.keyword is not None else value


def _call(function: str, parts: Sequence[str]) -> str:
    return f"{function}({', '.join(parts)})"


def _literal_bool(node) -> Optional[bool]:
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


def _literal_int(node) -> Optional[int]:
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value, 0)
    return None


def _parameter(positional, keywords, index: int, name: str):
    """The argument given for parameter `name` (position `index`), or None."""
    if len(positional) > index:
        return positional[index]
    return keywords.get(name)


def rename(call, spelled: str, decorator: bool) -> Optional[str]:
    return spelled if call is None else None  # the reference itself is replaced (see `edits_reference`)


def _bound(call, most_positional: int, keywords_allowed: frozenset) -> Optional[tuple]:
    """(positional, keywords) of a call with at least one argument, at most
    `most_positional` of them positional and only the keywords allowed; else None."""
    args = _plain_args(call) if call is not None else None
    if not args:
        return None
    positional, keywords = _split(args)
    if len(positional) > most_positional or set(keywords) - keywords_allowed:
        return None
    return positional, keywords


def _input_and_flag(call, flag: str, default: bool) -> Optional[tuple]:
    """(input code, the literal value of `flag`, keywords) of `f(input, flag)`; None if
    the flag is not a literal or the input is missing. The input is written positionally:
    the torch.linalg functions call it `A`, not `input`."""
    bound = _bound(call, 2, frozenset({"input", flag, "out"}))
    if bound is None:
        return None
    positional, keywords = bound
    flag_arg = _parameter(positional, keywords, 1, flag)
    value = default if flag_arg is None else _literal_bool(flag_arg.value)
    first = _parameter(positional, keywords, 0, "input")
    if value is None or first is None:
        return None
    return code(first.value), value, keywords


def _out(keywords) -> List[str]:
    return [_arg_text(keywords["out"])] if "out" in keywords else []


def qr(call, spelled: str, decorator: bool) -> Optional[str]:
    found = _input_and_flag(call, "some", True)
    if found is None:
        return None
    first, reduced, keywords = found
    return _call(spelled, [first] + ([] if reduced else ['mode="complete"']) + _out(keywords))


def cholesky(call, spelled: str, decorator: bool) -> Optional[str]:
    found = _input_and_flag(call, "upper", False)
    if found is None or (found[1] and "out" in found[2]):
        return None
    first, upper, keywords = found
    return _call(spelled, [first] + _out(keywords)) + (".mH" if upper else "")


def chain_matmul(call, spelled: str, decorator: bool) -> Optional[str]:
    args = _plain_args(call) if call is not None else None
    if not args or len(args) < 2 or any(arg.keyword is not None for arg in args):
        return None
    return f"{spelled}([{', '.join(code(arg.value) for arg in args)}])"


def lu(call, spelled: str, decorator: bool) -> Optional[str]:
    args = _plain_args(call) if call is not None else None
    if not args or len(args) != 1 or args[0].keyword is not None:
        return None
    return _call(spelled, [code(args[0].value)])


def lu_solve(call, spelled: str, decorator: bool) -> Optional[str]:
    args = _plain_args(call) if call is not None else None
    if not args or len(args) != 3 or any(arg.keyword is not None for arg in args):
        return None
    b, data, pivots = (code(arg.value) for arg in args)
    return _call(spelled, [data, pivots, b])


def range_(call, spelled: str, decorator: bool) -> Optional[str]:
    """`torch.range(a, b, s)` holds a, a+s, ... up to b inclusive, as floating-point values.
    With integer literals, `torch.arange(a, b + 1, s)` (`b - 1` for a negative step) holds
    the same values; written as float literals it makes the default floating dtype too."""
    args = _plain_args(call) if call is not None else None
    if not args:
        return None
    positional, keywords = _split(args)
    step_arg = positional[2] if len(positional) > 2 else keywords.get("step")
    if len(positional) not in (2, 3) or (len(positional) == 3 and "step" in keywords):
        return None
    numbers = [_literal_int(arg.value) for arg in positional[:2]]
    step = 1 if step_arg is None else _literal_int(step_arg.value)
    if None in numbers or not step:
        return None
    start, end = numbers
    end += 1 if step > 0 else -1
    floats = "dtype" not in keywords
    values = [start, end] + ([step] if step != 1 or step_arg is not None else [])
    parts = [f"{value}.0" if floats else str(value) for value in values]
    parts += [_arg_text(arg) for name, arg in keywords.items() if name != "step"]
    return _call(spelled, parts)


def _appended(call, spelled: str, extra: Sequence[str]) -> Optional[str]:
    args = _plain_args(call) if call is not None else None
    if args is None:
        return None
    return _call(spelled, [_arg_text(arg) for arg in args] + list(extra))


def upsampling_nearest(call, spelled: str, decorator: bool) -> Optional[str]:
    return _appended(call, spelled, ['mode="nearest"'])


def upsampling_bilinear(call, spelled: str, decorator: bool) -> Optional[str]:
    return _appended(call, spelled, ['mode="bilinear"', "align_corners=True"])


def _device_first(device: str, keywords_only: bool) -> Callable:
    def rewrite(call, spelled: str, decorator: bool) -> Optional[str]:
        args = _plain_args(call) if call is not None else None
        if args is None or (keywords_only and any(arg.keyword is None for arg in args)):
            return None
        return _call(spelled, [f'"{device}"'] + [_arg_text(arg) for arg in args])

    return rewrite


def device_type_cuda(call, spelled: str, decorator: bool) -> Optional[str]:
    if call is None:
        return _call(spelled, ['device_type="cuda"']) if decorator else None
    return _appended(call, spelled, ['device_type="cuda"'])


def variable(call, spelled: str, decorator: bool) -> Optional[str]:
    args = _plain_args(call) if call is not None else None
    if not args or len(args) != 1 or args[0].keyword is not None:
        return None
    return code(args[0].value)


REWRITES: Dict[str, Callable] = {
    "rename": rename,
    "qr": qr,
    "cholesky": cholesky,
    "chain_matmul": chain_matmul,
    "lu": lu,
    "lu_solve": lu_solve,
    "range": range_,
    "upsampling_nearest": upsampling_nearest,
    "upsampling_bilinear": upsampling_bilinear,
    # GradScaler's own parameters keep their order after the device; autocast's do not
    "device_cuda": _device_first("cuda", keywords_only=False),
    "device_cpu": _device_first("cpu", keywords_only=False),
    "autocast_cuda": _device_first("cuda", keywords_only=True),
    "autocast_cpu": _device_first("cpu", keywords_only=True),
    "device_type_cuda": device_type_cuda,
    "variable": variable,
}
