"""Untrusted text made safe for a terminal: control characters are shown, never obeyed.

A log pasted from an issue, a `collect_env` text or a hostile file can hold escape
sequences (`ESC ]0;...BEL` sets the window title, `ESC [2J` clears the screen) that a
terminal would act on. Human-readable output passes such text through `visible`;
machine formats (JSON, SARIF) stay exact and rely on their own escaping.
"""

from __future__ import annotations

import re

# C0 except tab and newline, DEL, and C1 (U+0080..U+009F, which some terminals obey as
# 8-bit controls: U+009B is CSI)
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escaped(char: str) -> str:
    """One control character as a visible escape, `\\x1b`."""
    return f"\\x{ord(char):02x}"


def visible(text: str) -> str:
    """`text` with every control character but tab and newline written as `\\xNN`."""
    return CONTROL.sub(lambda match: escaped(match.group()), text) if CONTROL.search(text) else text
