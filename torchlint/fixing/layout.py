"""Lay out the code a fix writes as a formatter (ruff format, black) would, so that a
formatter run after `--fix` finds nothing to change in it: within the line length, split
inside the last brackets; their contents on one line of their own if they fit there,
else one item per line with a trailing comma."""

from __future__ import annotations

import io
import keyword
import tokenize
from typing import List, Optional, Sequence

from torchlint.core.diagnostics import Edit, Location

INDENT = "    "
_OPENING = {"(": ")", "[": "]", "{": "}"}


def width(line: str) -> int:
    return len(line.expandtabs(len(INDENT)))


def bracket_lines(head: str, items: Sequence[str], tail: str, line_length: int, indent: str = "") -> List[str]:
    """`head` (ending in an opening bracket), `items` (comma-separated), `tail` (starting
    with the closing bracket), for a line indented by `indent`; the lines are returned
    without that indentation."""
    joined = ", ".join(items)
    if width(f"{indent}{head}{joined}{tail}") <= line_length:
        return [f"{head}{joined}{tail}"]
    if width(f"{indent}{INDENT}{joined}") <= line_length:
        return [head, f"{INDENT}{joined}", tail]
    return [head, *(f"{INDENT}{item}," for item in items), tail]


def call_lines(function: str, arguments: Sequence[str], line_length: int, indent: str = "") -> List[str]:
    """A call statement `function(arguments)` laid out for a line indented by `indent`."""
    return bracket_lines(f"{function}(", arguments, ")", line_length, indent)


def argument_lines(function: str, arguments: Sequence[Sequence[str]], line_length: int, indent: str = "") -> List[str]:
    """A call statement whose arguments are each given as lines (`comparison_lines`,
    `string_lines`): on one line if every argument is one line and it fits, else as
    `call_lines` lays it out if that fits, else one argument per line, each taking as
    many lines as it was given (the last with the comma)."""
    if all(len(lines) == 1 for lines in arguments):
        lines = call_lines(function, [only for only, in arguments], line_length, indent)
        if all(width(f"{indent}{line}") <= line_length for line in lines):
            return lines
    body = [f"{INDENT}{line}" for lines in arguments for line in (*lines[:-1], f"{lines[-1]},")]
    return [f"{function}(", *body, ")"]


def comparison_lines(left: str, operator: str, right: str, room: int) -> List[str]:
    """`left operator right` in at most `room` columns: one line, else in parentheses
    with the operator leading the right side's line, as black splits it."""
    one = f"{left} {operator} {right}"
    if width(one) <= room:
        return [one]
    return ["(", f"{INDENT}{left}", f"{INDENT}{operator} {right}", ")"]


def string_lines(text: str, room: int) -> List[str]:
    """The f-string whose content is `text` as adjacent literals of at most `room`
    columns each where it can be (a placeholder or a word is never split): cut after a
    clause's comma if that is enough, else after spaces, never inside a placeholder; a
    literal without a placeholder is a plain string."""
    for separator in (", ", " "):
        pieces = _packed(_cut_after(text, separator), room)
        if all(width(_literal(piece)) <= room for piece in pieces):
            break
    return [_literal(piece) for piece in pieces]


def _cut_after(text: str, separator: str) -> List[str]:
    """`text` cut after each `separator` outside braces."""
    parts: List[str] = []
    depth, start = 0, 0
    for index, char in enumerate(text):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0 and text.startswith(separator, index):
            parts.append(text[start : index + len(separator)])
            start = index + len(separator)
    return [*parts, text[start:]] if text[start:] else parts


def _packed(parts: Sequence[str], room: int) -> List[str]:
    pieces: List[str] = []
    for part in parts:
        if pieces and width(_literal(pieces[-1] + part)) <= room:
            pieces[-1] += part
        else:
            pieces.append(part)
    return pieces


def _literal(piece: str) -> str:
    return f'f"{piece}"' if "{" in piece else f'"{piece}"'


def edit_fits(edit: Edit, lines: Sequence[str], line_length: int) -> bool:
    """Whether an edit that rewrites a statement its author laid out over several rows keeps
    to the line length: what it writes fits, or the rows it replaces were already longer (the
    author's layout, not the fix's). An edit within one row is fitted as every fix is
    (`fit_edit`). `lines` are the file's rows. Cost: the rows the edit replaces and writes."""
    if edit.start.row == edit.end.row:
        return True
    replaced = lines[edit.start.row - 1 : edit.end.row]
    if any(width(line) > line_length for line in replaced):
        return True
    prefix = replaced[0][: edit.start.column - 1]
    suffix = replaced[-1][edit.end.column - 1 :]
    return all(width(line) <= line_length for line in (prefix + edit.content + suffix).splitlines())


def fit_edit(edit: Edit, line: str, whole_statement: bool, line_length: int, newline: str,
             continuation: bool = False) -> Edit:
    """`edit`, or, when the row it writes is past the line length, an edit that lays it out
    as a formatter would: a one-line statement split inside its last brackets (also one
    whose code was already too long, when the fix lengthens it and every line of the split
    fits; not one that only its trailing comment made long), or, in a statement the
    author spread over several rows, an argument appended at a row's end (`, name=value`)
    moved to a row of its own under the row's first argument.

    `line` is the edited row's text (no newline); `whole_statement` says that the row is
    one complete logical line (not part of a bracket, string or continued line), which
    is what makes re-splitting it safe; `continuation` that it is a later row of a logical
    line (inside brackets the statement opened on an earlier row)."""
    if edit.start.row != edit.end.row or "\n" in edit.content or "\r" in edit.content:
        return edit
    after = line[: edit.start.column - 1] + edit.content + line[edit.end.column - 1 :]
    if width(after) <= line_length:
        return edit
    # a row already too long is its author's layout unless the fix lengthens code that does not fit (not a row
    # that only its own trailing comment made long)
    if width(line) > line_length and (width(after) <= width(line) or width(_without_comment(after)) <= line_length):
        return edit
    if not whole_statement:
        if not continuation:
            return edit
        own = _split_own_brackets(after, line_length) if _inside_own_brackets(line, edit.start.column - 1) else None
        if own is None:
            return _argument_on_its_own_row(edit, line, line_length, newline)
        return Edit(Location(edit.start.row, 1), Location(edit.start.row, len(line) + 1), newline.join(own))
    lines = split_statement(after, line_length)
    if lines is None:
        return edit
    return Edit(Location(edit.start.row, 1), Location(edit.start.row, len(line) + 1), newline.join(lines))


def _without_comment(line: str) -> str:
    """The row without its trailing comment (the row itself when it does not tokenize alone)."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(line + "\n").readline):
            if token.type == tokenize.COMMENT:
                return line[: token.start[1]].rstrip()
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return line


def _inside_own_brackets(line: str, column: int) -> bool:
    """Whether column `column` (0-based) of a row is inside brackets the row itself opens
    (`torch.load(path, ...)` as one argument of a call that an earlier row opened)."""
    code = line[:column].lstrip(" \t")
    depth = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.OP and token.string in _OPENING:
                depth += 1
            elif token.type == tokenize.OP and token.string in _OPENING.values():
                depth -= 1
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # the row ends inside its brackets: the tokens so far are counted
    return depth > 0


def _split_own_brackets(row: str, line_length: int) -> Optional[List[str]]:
    """A continuation row that holds one whole bracketed item (`torch.load(a, b),`) split inside
    its brackets as `split_statement` splits a statement, its trailing comma kept; None when
    that does not fit or the row is not such an item."""
    code = row.rstrip()
    comma = "," if code.endswith(",") else ""
    lines = split_statement(code[: len(code) - len(comma)], line_length)
    if lines is None or width(lines[-1] + comma) > line_length:
        return None
    return [*lines[:-1], lines[-1] + comma]


def _argument_on_its_own_row(edit: Edit, line: str, line_length: int, newline: str) -> Edit:
    """An argument appended at the end of a continuation row written on a row of its own,
    aligned with the row's first argument; `edit` itself for any other edit, or when the
    row does not start with an argument (its first character closes or opens a bracket)."""
    code = line.lstrip(" \t")
    indent = line[: len(line) - len(code)]
    appended = edit.content[2:]
    if edit.start != edit.end or not edit.content.startswith(", ") or not code or code[0] in ")]}([{":
        return edit
    if width(indent + appended) > line_length:
        return edit
    return Edit(edit.start, edit.end, f",{newline}{indent}{appended}")


# how many single-item brackets inside each other `split_statement` splits in turn (`f(g(h(a, b)))`)
_NESTED_SPLITS = 4


def split_statement(line: str, line_length: int, nesting: int = 0) -> Optional[List[str]]:
    """A one-line statement split as a formatter splits it: the value of an assignment or
    `return` that is a call chain or a conditional expression in parentheses (`_chain_lines`,
    `_conditional_lines`), else inside its last brackets (black's right-hand split); None
    when it does not end in a non-empty bracket pair (and attributes of its result) or would
    still not fit. A trailing subscript (`f(a)["state_dict"]`) is split around its
    index when the line up to it fits, as ruff and black do; otherwise the call before it
    is split and the subscript closes its last line. A one-item call whose item is still too
    long splits the item in turn, up to `_NESTED_SPLITS` deep (`nesting`: how deep this is).
    Cost: one tokenization of the line per level."""
    code = line.lstrip(" \t")
    indent = line[: len(line) - len(code)]
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code + "\n").readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    significant = [t for t in tokens if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.COMMENT)]
    parenthesised = _chain_lines(code, significant, line_length, indent)
    if parenthesised is None:
        parenthesised = _conditional_lines(code, significant, line_length, indent)
    if parenthesised is not None:
        return [indent + text for text in parenthesised]
    close = _before_attributes(significant, len(significant) - 1)
    while close >= 0 and significant[close].string in _OPENING.values():
        index = _opening_of(significant, close)
        inner = significant[index + 1 : close] if index is not None else []
        if not inner:
            if index is None or significant[index].string != "(":
                return None
            close = _before_attributes(significant, index - 1)  # `.cuda()`: split the call before it
            continue
        head = code[: significant[index].end[1]]
        tail = code[significant[close].start[1] :]
        if significant[index].string == "(":
            items = _top_level_items(code, inner)
            lines = bracket_lines(head, items, tail, line_length, indent) if items is not None else None
            too_long = lines is not None and any(width(indent + text) > line_length for text in lines)
            if too_long and len(items) == 1 and nesting < _NESTED_SPLITS:
                # one item that does not fit on its own line is split in turn (`f(g(a, b))`), no comma after it
                nested = split_statement(f"{indent}{INDENT}{items[0]}", line_length, nesting + 1)
                if nested is not None:
                    return [indent + head, *nested, indent + tail]
            if lines is not None and len(lines) > 3 and not _may_take_a_comma(significant, index, inner):
                return None  # a comma after the one item would make a tuple, or be a syntax error
        elif significant[index].string == "[":
            # the index on a line of its own, never exploded: a trailing comma would make it a tuple
            index_text = code[inner[0].start[1] : inner[-1].end[1]]
            lines = bracket_lines(head, [index_text], tail, line_length, indent)
            if len(lines) != 3 or any(width(indent + text) > line_length for text in lines):
                close = _before_attributes(significant, index - 1)  # split the brackets before it instead
                continue
        else:
            return None
        if lines is None or any(width(indent + text) > line_length for text in lines):
            return None
        return [indent + text for text in lines]
    return None


def _chain_lines(code: str, significant: List[tokenize.TokenInfo], line_length: int, indent: str) -> Optional[List[str]]:
    """An assignment or `return` of a call chain with two or more calls on a call's result
    (`f(x).to(device).eval()`), laid out as ruff and black do: the value in parentheses on a
    line of its own, or, when that is too long, one `.call(...)` per line; None for any other
    statement or when a line would still not fit. Cost: one pass over the line's tokens."""
    depths = _depths(significant)
    start = _value_start(significant, depths)
    if start is None or not _one_chain(significant, depths, start):
        return None
    cuts = [
        i for i in range(start + 1, len(significant))
        if significant[i].string == "." and significant[i - 1].string in (")", "]") and depths[i] == 0
    ]
    if len(cuts) < 2:
        return None
    columns = [significant[i].start[1] for i in cuts]
    return _parenthesised(code, significant[start].start[1], columns, line_length, indent)


def _value_start(significant: List[tokenize.TokenInfo], depths: List[int]) -> Optional[int]:
    """Where the value of an assignment (`x = ...`, one `=`) or a `return` starts; None for any
    other statement, or for one with no value."""
    if significant and significant[0].type == tokenize.NAME and significant[0].string == "return":
        start = 1
    else:
        equals = [i for i, t in enumerate(significant) if t.type == tokenize.OP and t.string == "=" and depths[i] == 0]
        if len(equals) != 1:
            return None
        start = equals[0] + 1
    return start if start < len(significant) else None


def _conditional_lines(
    code: str, significant: List[tokenize.TokenInfo], line_length: int, indent: str
) -> Optional[List[str]]:
    """An assignment or `return` of one conditional expression (`a if c else b`), laid out as ruff
    and black do: the value in parentheses on a line of its own, or, when that is too long, its
    value, `if` and `else` parts on a line each; None for any other statement or when a line would
    still not fit. Cost: one pass over the line's tokens."""
    depths = _depths(significant)
    start = _value_start(significant, depths)
    if start is None:
        return None
    outside = [i for i in range(start, len(significant)) if depths[i] == 0 and significant[i].type == tokenize.NAME]
    words = [significant[i].string for i in outside if significant[i].string in ("if", "else", "lambda")]
    if words != ["if", "else"]:
        return None  # no conditional, a nested one, or one inside a lambda's body
    cuts = [i for i in outside if significant[i].string in ("if", "else")]
    columns = [significant[i].start[1] for i in cuts]
    return _parenthesised(code, significant[start].start[1], columns, line_length, indent)


def _parenthesised(code: str, begin: int, cuts: List[int], line_length: int, indent: str) -> Optional[List[str]]:
    """The value that starts at column `begin` in parentheses: on a line of its own, or, when that
    is too long, cut before each column of `cuts`, a part per line; None when a line would not fit."""
    head, value = code[:begin] + "(", code[begin:].rstrip()
    if width(f"{indent}{INDENT}{value}") <= line_length:
        return [head, f"{INDENT}{value}", ")"]
    bounds = [begin, *cuts, len(value) + begin]
    lines = [head, *(f"{INDENT}{code[a:b].strip()}" for a, b in zip(bounds, bounds[1:])), ")"]
    return lines if all(width(indent + text) <= line_length for text in lines) else None


def _one_chain(significant: List[tokenize.TokenInfo], depths: List[int], start: int) -> bool:
    """Whether the tokens from `start` on are one primary and its trailers (`a.b(c)[d].e()`), with no
    operator or keyword outside brackets (`f(x).sum() / n` is an arithmetic expression)."""
    for position in range(start, len(significant)):
        if depths[position] > 0:
            continue
        token = significant[position]
        if token.type == tokenize.NAME and not keyword.iskeyword(token.string):
            continue
        if token.type in (tokenize.STRING, tokenize.NUMBER) and position == start:
            continue
        if token.type == tokenize.OP and token.string in ".()[]{}" and not (token.string == "." and position == start):
            continue
        return False
    return True


def _depths(significant: List[tokenize.TokenInfo]) -> List[int]:
    """How many brackets are open before each token."""
    depths, depth = [], 0
    for token in significant:
        if token.type == tokenize.OP and token.string in _OPENING.values():
            depth -= 1
        depths.append(depth)
        if token.type == tokenize.OP and token.string in _OPENING:
            depth += 1
    return depths


def _may_take_a_comma(significant: List[tokenize.TokenInfo], opening: int, inner: List[tokenize.TokenInfo]) -> bool:
    """Whether the brackets opening at `opening` take a trailing comma after their items: a call's
    arguments do, unless the one argument is a bare generator (`all(x for x in y)`); parentheses
    that only group an expression (`= (a + b)`, `= (x for x in y)`) do not."""
    before = significant[opening - 1] if opening > 0 else None
    call = before is not None and (
        (before.type == tokenize.NAME and not keyword.iskeyword(before.string)) or before.string in ")]"
    )
    depths = _depths(inner)
    generator = any(t.type == tokenize.NAME and t.string == "for" and d == 0 for t, d in zip(inner, depths))
    return call and not generator


def _before_attributes(significant: List[tokenize.TokenInfo], close: int) -> int:
    """The position of the token before the attributes that end at `close` (`f(a).layer4`:
    the attributes stay on the closing line)."""
    while close >= 2 and significant[close].type == tokenize.NAME and significant[close - 1].string == ".":
        close -= 2
    return close


def _opening_of(significant: List[tokenize.TokenInfo], close: int) -> Optional[int]:
    """The position of the bracket that the closing bracket at `close` matches."""
    depth = 0
    for index in range(close, -1, -1):
        token = significant[index]
        if token.type != tokenize.OP:
            continue
        if token.string in _OPENING.values():
            depth += 1
        elif token.string in _OPENING:
            depth -= 1
            if depth == 0:
                return index
    return None


def _top_level_items(code: str, inner: List[tokenize.TokenInfo]) -> Optional[List[str]]:
    """The comma-separated items between a pair of brackets; None with a trailing comma
    (a formatter keeps such a collection exploded: not a shape to guess)."""
    items: List[str] = []
    depth = 0
    start = inner[0].start[1]
    for token in inner:
        if token.type != tokenize.OP:
            continue
        if token.string in _OPENING:
            depth += 1
        elif token.string in _OPENING.values():
            depth -= 1
        elif token.string == "," and depth == 0:
            items.append(code[start : token.start[1]].strip())
            start = token.end[1]
    last = code[start : inner[-1].end[1]].strip()
    if not last:
        return None
    items.append(last)
    return items


def tidy_line_deletion(edit: Edit, lines: Sequence[str]) -> Edit:
    """A deletion of whole lines (rows `edit.start.row` up to `edit.end.row`, exclusive),
    extended over the blank lines after it: at the top of the file all of them (a file
    does not start with blank lines), elsewhere as many as leave the larger of the two
    gaps that met (two blank lines around a removed import stay two, not four)."""

    def blank(row: int) -> bool:
        return 1 <= row <= len(lines) and not lines[row - 1].strip()

    row = edit.start.row - 1
    before = 0
    while blank(row):
        before, row = before + 1, row - 1
    at_top = row == 0
    following = 0
    while blank(edit.end.row + following):
        following += 1
    extra = following if at_top else min(before, following)
    return Edit(edit.start, Location(edit.end.row + extra, 1), edit.content)
