"""The fenced code blocks of README.md, CONTRIBUTING.md and docs/**/*.md, for the tests that keep them true.

A block is `lang` plus its text; `not_run` holds the reason given by a marker on the line
directly above its fence, `<!-- not run: REASON -->`, for a block that cannot run here
(it is still parsed)."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

from cli_support import REPO

FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>```+|~~~+)\s*(?P<lang>[\w+-]*)")
NOT_RUN = re.compile(r"^\s*<!--\s*not run:\s*(?P<reason>.+?)\s*-->\s*$")
SHELL_LANGS = ("bash", "sh", "shell", "console")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, from 1
    lang: str
    text: str
    not_run: Optional[str]

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"

    @property
    def is_shell(self) -> bool:
        """A shell block, or an unlabelled transcript whose first line is a `$ ` prompt."""
        return self.lang in SHELL_LANGS or (self.lang in ("", "text") and self.text.startswith("$ "))


def doc_files() -> List[Path]:
    return [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").rglob("*.md"))]


def blocks(path: Path) -> List[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    found, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and not lines[end].strip().startswith(opening.group("fence")):
            end += 1
        marker = NOT_RUN.match(lines[index - 1]) if index else None
        text = textwrap.dedent("\n".join(lines[index + 1:end]))
        found.append(Block(path, index + 1, opening.group("lang"), text, marker.group("reason") if marker else None))
        index = end + 1
    return found


def all_blocks() -> List[Block]:
    return [block for path in doc_files() for block in blocks(path)]


@dataclass(frozen=True)
class Command:
    """One command of a shell block; `output` is the text a transcript shows after it."""

    text: str
    output: str


def commands(block: Block) -> List[Command]:
    """The commands of a shell block: `$ `-prompted lines in a transcript (with the lines
    down to the next prompt as their output), else every line that is not a comment."""
    lines = block.text.splitlines()
    if not any(line.startswith("$ ") for line in lines):
        return [Command(line, "") for line in lines if line.strip() and not line.lstrip().startswith("#")]
    found: List[Command] = []
    for line in lines:
        if line.startswith("$ "):
            found.append(Command(line[2:], ""))
        elif found:
            found[-1] = Command(found[-1].text, found[-1].output + line + "\n")
    return found
