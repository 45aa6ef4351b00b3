"""Plain data types shared by the engine, the fixer and the reporters."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Optional, Tuple


SYNTAX_CODE = "TL000"  # a file that cannot be read, decoded or parsed


class Applicability(str, enum.Enum):
    """How confident a fix is that it keeps behaviour (ruff's names)."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@dataclass(frozen=True, order=True)
class Location:
    """A position in a file: 1-based row, 1-based column counted in code points."""

    row: int
    column: int

    def to_json(self) -> dict:
        return {"row": self.row, "column": self.column}


@dataclass(frozen=True)
class Edit:
    """Replace the text between `start` and `end` (end exclusive) with `content`."""

    start: Location
    end: Location
    content: str

    def to_json(self) -> dict:
        return {
            "content": self.content,
            "location": self.start.to_json(),
            "end_location": self.end.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict) -> "Edit":
        return cls(
            Location(**data["location"]), Location(**data["end_location"]), data["content"]
        )


@dataclass(frozen=True)
class Fix:
    message: str
    edits: Tuple[Edit, ...]
    applicability: Applicability = Applicability.SAFE

    def to_json(self) -> dict:
        return {
            "applicability": self.applicability.value,
            "message": self.message,
            "edits": [edit.to_json() for edit in self.edits],
        }

    @classmethod
    def from_json(cls, data: dict) -> "Fix":
        return cls(
            data["message"],
            tuple(Edit.from_json(e) for e in data["edits"]),
            Applicability(data["applicability"]),
        )


@dataclass(frozen=True)
class Diagnostic:
    """One finding. `filename` is the path as the user named it (or discovery found it)."""

    code: str
    message: str
    filename: str
    location: Location
    end_location: Location
    fix: Optional[Fix] = None
    noqa_row: Optional[int] = None

    @property
    def sort_key(self) -> tuple:
        return (self.filename, self.location, self.code, self.message)

    def to_json(self) -> dict:
        return {
            "code": self.code,
            "message": self.message,
            "filename": self.filename,
            "location": self.location.to_json(),
            "end_location": self.end_location.to_json(),
            "fix": self.fix.to_json() if self.fix else None,
            "noqa_row": self.noqa_row,
        }

    @classmethod
    def from_json(cls, data: dict) -> "Diagnostic":
        return cls(
            code=data["code"],
            message=data["message"],
            filename=data["filename"],
            location=Location(**data["location"]),
            end_location=Location(**data["end_location"]),
            fix=Fix.from_json(data["fix"]) if data.get("fix") else None,
            noqa_row=data.get("noqa_row"),
        )


@dataclass(frozen=True)
class RuleInfo:
    """What reporters need to know about a rule, without importing the rule."""

    code: str
    name: str
    summary: str
    doc: str
    fixable: bool
    default_enabled: bool = True

    @property
    def url(self) -> str:
        return f"{DOCS_URL}#{self.code.lower()}-{self.name}"


DOCS_URL = "https://github.com/torchlint/torchlint/blob/main/README.md"


@dataclass
class FileResult:
    """Everything the per-file pass learned about one file."""

    path: str
    diagnostics: list = field(default_factory=list)
    facts: dict = field(default_factory=dict)
    errors: list = field(default_factory=list)
    parsed: bool = False
