"""Untrusted text made safe for a terminal: control characters are shown, never obeyed.

A log pasted from an issue, a `collect_env` text, a hostile file or a file's name can hold
escape sequences (`ESC ]0;...BEL` sets the window title, `ESC [2J` clears the screen) that a
terminal would act on, bidi controls that reorder what it shows, or newlines that forge
a line of output of its own. Human-readable output passes such text through `visible`
(texts of many lines) or `visible_line` (names and one-line messages); machine formats
(JSON, SARIF) stay exact and rely on their own escaping.
"""

from __future__ import annotations

import re

# The bidirectional formatting characters, which make a terminal show text in another order
# than it is read ("Trojan Source", CVE-2021-42574): ALM, LRM, RLM, LRE..RLO, LRI..PDI.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# C0 except tab and newline, DEL, C1 (U+0080..U+009F, which some terminals obey as 8-bit
# controls: U+009B is CSI) and the bidi controls
CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
# the same and the newline: what a name or a one-line message may not hold either
LINE_CONTROL = re.compile(f"[\x00-\x08\x0a-\x1f\x7f-\x9f{_BIDI}]")
_NAMED = {"\n": "\\n", "\r": "\\r"}


def escaped(char: str) -> str:
    """One control character as a visible escape: `\\n`, `\\r`, `\\x1b`, `\\u202e`."""
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")


def visible(text: str) -> str:
    """`text` with every control character but tab and newline written as an escape."""
    return CONTROL.sub(lambda match: escaped(match.group()), text) if CONTROL.search(text) else text


def visible_line(text: str) -> str:
    """`text` as one line: every control character but tab escaped, a newline as `\\n`
    (a file name or a message that could start a line of its own, such as a CI's
    `::add-mask::` workflow command)."""
    return LINE_CONTROL.sub(lambda match: escaped(match.group()), text) if LINE_CONTROL.search(text) else text
