"""Code actions: each finding's fix as a quick fix, `# noqa` for a finding's line, and
"Fix all torchlint" (the safe fixes, by the same fixer loop as `--fix`)."""

from __future__ import annotations

import os
import tokenize
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from lsprotocol import types

from torchlint.fixing.add_noqa import lines_with_directives
from torchlint.fixing.apply import is_applicable
from torchlint.core.diagnostics import SYNTAX_CODE, Applicability, Diagnostic, Edit, Location
from torchlint.integrations.server.protocol import Findings, TextPositions

QUICK_FIX = types.CodeActionKind.QuickFix.value
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.torchlint"
FIX_ALL_TITLE = "Fix all torchlint"

MakeEdit = Callable[[List[types.TextEdit]], types.WorkspaceEdit]


def wanted(kind: str, only: Optional[Sequence[str]]) -> bool:
    """Whether the client asked for actions of `kind` (`only` names kinds or their parents)."""
    return not only or any(kind == asked or kind.startswith(f"{asked}.") for asked in only)


def quick_fixes(findings: Findings, rows: Tuple[int, int], encoding: str, make_edit: MakeEdit) -> List[types.CodeAction]:
    """A fix action for each finding on `rows` that has one, then one "disable" action per
    code and line."""
    positions = TextPositions(findings.text, encoding)
    on_rows = findings.on_rows(*rows)
    actions = []
    for ours, theirs in on_rows:
        fix = ours.fix
        if not is_applicable(fix, unsafe=True):
            continue
        safe = fix.applicability is Applicability.SAFE
        actions.append(
            types.CodeAction(
                title=f"{ours.code}: {fix.message}{'' if safe else ' (unsafe)'}",
                kind=QUICK_FIX,
                diagnostics=[theirs],
                is_preferred=safe,
                edit=make_edit([positions.text_edit(edit) for edit in fix.edits]),
            )
        )
    return actions + _noqa_actions(findings.text, on_rows, positions, make_edit)


def _noqa_actions(text: str, on_rows, positions: TextPositions, make_edit: MakeEdit) -> List[types.CodeAction]:
    wanted_on: Dict[Tuple[int, str], List[types.Diagnostic]] = {}
    for ours, theirs in on_rows:
        if ours.code != SYNTAX_CODE and ours.noqa_row is not None:
            wanted_on.setdefault((ours.noqa_row, ours.code), []).append(theirs)
    actions = []
    for (row, code), diagnostics in wanted_on.items():
        try:
            changed = lines_with_directives(text, {row: {code}})
        except (SyntaxError, tokenize.TokenError):
            continue
        if row not in changed:
            continue  # a bare noqa comment there already covers every code
        old_length = len(_line_body(text, positions, row))
        edit = Edit(Location(row, 1), Location(row, old_length + 1), changed[row])
        actions.append(
            types.CodeAction(
                title=f"Disable {code} for this line",
                kind=QUICK_FIX,
                diagnostics=diagnostics,
                edit=make_edit([positions.text_edit(edit)]),
            )
        )
    return actions


def _line_body(text: str, positions: TextPositions, row: int) -> str:
    return text[positions.starts[row - 1] : positions.starts[row]].rstrip("\r\n")


def has_safe_fix(diagnostics: Sequence[Diagnostic]) -> bool:
    return any(is_applicable(d.fix, unsafe=False) for d in diagnostics)


def fix_all_action(data: Optional[dict] = None, edit: Optional[types.WorkspaceEdit] = None) -> types.CodeAction:
    return types.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL, data=data, edit=edit)


def whole_text_edit(before: str, after: str, encoding: str) -> List[types.TextEdit]:
    """One edit that turns `before` into `after`, as small as their common prefix and
    suffix allow (replacing the whole text would move the cursor and folds)."""
    if before == after:
        return []
    start = len(os.path.commonprefix([before, after]))
    end = len(os.path.commonprefix([before[start:][::-1], after[start:][::-1]]))
    # a position between "\r" and "\n" is none in the LSP: widen the edit over the pair
    if before[start - 1 : start + 1] == "\r\n":
        start -= 1
    if end and before[len(before) - end - 1 : len(before) - end + 1] == "\r\n":
        end -= 1
    positions = TextPositions(before, encoding)
    replaced = types.Range(positions.at_offset(start), positions.at_offset(len(before) - end))
    return [types.TextEdit(replaced, after[start : len(after) - end])]

