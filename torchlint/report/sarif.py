"""SARIF 2.1.0 for code-scanning services: one run, every rule, UTF-16 columns."""

from __future__ import annotations

import json
import re
from typing import Optional, Sequence, TextIO

from torchlint.report.fingerprint import FingerprintKeys, line_hashes
from torchlint.core.diagnostics import Diagnostic, Edit, Fix, RuleInfo
from torchlint.core import paths
from torchlint.report.context import ReportContext
from torchlint.report.sources import SourceLines

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/torchlint/torchlint"
SRCROOT = "%SRCROOT%"

_WHAT_IT_DOES = re.compile(r"^#+\s*What it does\s*\n+(.+?)(?:\n\s*\n|\n#|\Z)", re.S | re.M)


def _full_description(rule: RuleInfo) -> str:
    """The doc's "What it does" paragraph, else the summary."""
    match = _WHAT_IT_DOES.search(rule.doc or "")
    return " ".join(match.group(1).split()) if match else rule.summary


def _rule(rule: RuleInfo) -> dict:
    doc = rule.doc or rule.summary
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _full_description(rule)},
        "help": {"text": doc, "markdown": doc},
        "helpUri": rule.url,
        "defaultConfiguration": {"level": rule.level, "enabled": rule.default_enabled},
        "properties": {"fixable": rule.fixable, "tags": [rule.name]},
    }


class _Writer:
    """Converts one finding at a time; holds the per-run lookups."""

    def __init__(self, ctx: ReportContext):
        self.ctx = ctx
        self.sources = SourceLines(ctx.sources)
        self._artifacts: dict[str, dict] = {}

    def artifact(self, filename: str) -> dict:
        if filename not in self._artifacts:
            uri, relative = paths.sarif_uri(filename, self.ctx.root)
            self._artifacts[filename] = {"uri": uri, "uriBaseId": SRCROOT} if relative else {"uri": uri}
        return dict(self._artifacts[filename])

    def region(self, source_name: str, start, end) -> dict:
        column = self.sources.utf16_column
        return {
            "startLine": start.row,
            "startColumn": column(source_name, start.row, start.column),
            "endLine": end.row,
            "endColumn": column(source_name, end.row, end.column),
        }

    def fix(self, filename: str, fix: Fix) -> dict:
        def replacement(edit: Edit) -> dict:
            return {
                "deletedRegion": self.region(filename, edit.start, edit.end),
                "insertedContent": {"text": edit.content},
            }

        return {
            "description": {"text": fix.message},
            "artifactChanges": [
                {
                    "artifactLocation": self.artifact(filename),
                    "replacements": [replacement(e) for e in fix.edits],
                }
            ],
        }

    def result(self, diagnostic: Diagnostic, rule_index: Optional[int], fingerprint: str) -> dict:
        name = diagnostic.filename
        result: dict = {"ruleId": diagnostic.code}
        if rule_index is not None:
            result["ruleIndex"] = rule_index
        result["level"] = self.ctx.rule_level(diagnostic.code)
        result["message"] = {"text": diagnostic.message}
        region = self.region(diagnostic.source_name, diagnostic.location, diagnostic.end_location)
        if diagnostic.cell is not None:  # rows count within the notebook cell, not the file's JSON
            region["properties"] = {"cell": diagnostic.cell}
        result["locations"] = [{"physicalLocation": {"artifactLocation": self.artifact(name), "region": region}}]
        result["partialFingerprints"] = {"primaryLocationLineHash": fingerprint}
        # a notebook fix's edits are in cells, which a SARIF replacement cannot name
        if diagnostic.fix is not None and diagnostic.fix.edits and diagnostic.cell is None:
            result["fixes"] = [self.fix(name, diagnostic.fix)]
        return result


def to_sarif(diagnostics: Sequence[Diagnostic], ctx: ReportContext) -> dict:
    """The SARIF log as a JSON-ready dict."""
    rules = [ctx.rules[code] for code in sorted(ctx.rules)]
    index = {rule.code: i for i, rule in enumerate(rules)}
    writer = _Writer(ctx)
    keys = FingerprintKeys(ctx.sources, ctx.root)
    fingerprints = line_hashes(keys.key(d) for d in diagnostics)
    driver: dict = {"name": "torchlint", "informationUri": INFORMATION_URI}
    if ctx.tool_version:
        driver["version"] = ctx.tool_version
    driver["rules"] = [_rule(rule) for rule in rules]
    run = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {SRCROOT: {"uri": paths.root_uri(ctx.root)}},
        "columnKind": "utf16CodeUnits",
        "results": [
            writer.result(d, index.get(d.code), fp) for d, fp in zip(diagnostics, fingerprints)
        ],
    }
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def render(diagnostics: Sequence[Diagnostic], ctx: ReportContext, out: TextIO) -> None:
    """Write the SARIF log, pretty-printed."""
    out.write(json.dumps(to_sarif(diagnostics, ctx), indent=2, ensure_ascii=False) + "\n")
