"""JUnit XML for CI dashboards: a testsuite per file, a failing testcase per finding."""

from __future__ import annotations

import posixpath
import re
import xml.etree.ElementTree as ET
from typing import Sequence, TextIO

from torchlint.core.diagnostics import Diagnostic
from torchlint.core import paths
from torchlint.report.context import ReportContext


# characters XML 1.0 cannot hold, even escaped (a file name may have them)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """`text` with the characters XML cannot hold written `\\xNN`, as names that are not
    UTF-8 are written in every format."""
    return _NOT_XML.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def to_xml(diagnostics: Sequence[Diagnostic], ctx: ReportContext) -> ET.Element:
    """The `<testsuites>` element; empty when there is nothing to report."""
    count = str(len(diagnostics))
    suites = ET.Element(
        "testsuites", name="torchlint", tests=count, failures=count, errors="0"
    )
    by_file: dict[str, list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        by_file.setdefault(xml_safe(paths.for_root(diagnostic.filename, ctx.root)), []).append(diagnostic)
    for path, items in by_file.items():
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=path,
            tests=str(len(items)),
            failures=str(len(items)),
            errors="0",
            package="torchlint",
        )
        classname = posixpath.splitext(path)[0]
        for d in items:
            row, col = d.location.row, d.location.column
            case = ET.SubElement(
                suite,
                "testcase",
                name=f"torchlint.{d.code}",
                classname=classname,
                line=str(row),
                column=str(col),
            )
            message = xml_safe(d.message)
            failure = ET.SubElement(case, "failure", message=message, type=ctx.rule_level(d.code))
            cell = "" if d.cell is None else f"cell {d.cell}, "
            failure.text = f"{cell}line {row}, col {col}, {message}"
    return suites


def render(diagnostics: Sequence[Diagnostic], ctx: ReportContext, out: TextIO) -> None:
    """Write the XML document with its declaration."""
    root = to_xml(diagnostics, ctx)
    ET.indent(root, space="    ")
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(root, encoding="unicode") + "\n")
