"""fixtures/: the findings match the inline `# expect: CODE:COL` markers exactly, and
`--fix` / `--unsafe-fixes` produce the `.fixed` / `.unsafe-fixed` files beside each sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import FIXTURES, expected_findings, run_torchlint

PROJECTS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and not p.name.startswith("."))


def actual_findings(project: Path, *extra):
    result = run_torchlint("check", "--no-cache", "--output-format", "json", *extra, ".", cwd=project)
    assert result.returncode in (0, 1), result.stderr.decode()
    found = set()
    for item in json.loads(result.stdout):
        relative = Path(item["filename"]).resolve().relative_to(project.resolve()).as_posix()
        if item.get("cell"):
            relative += f":cell {item['cell']}"
        found.add((relative, item["location"]["row"], item["location"]["column"], item["code"]))
    return found


@pytest.mark.parametrize("project", PROJECTS)
def test_findings_match_markers(project):
    expected = expected_findings(FIXTURES / project)
    assert expected, f"fixtures/{project} has no expect markers"
    assert actual_findings(FIXTURES / project) == expected


@pytest.mark.parametrize("project", PROJECTS)
@pytest.mark.parametrize("mode", ["fixed", "unsafe-fixed"])
def test_fix_produces_expected_files(project, mode, fixtures_copy):
    work = fixtures_copy / project
    flags = ["--fix"] if mode == "fixed" else ["--fix", "--unsafe-fixes"]
    result = run_torchlint("check", "--no-cache", *flags, "--output-format", "concise", ".", cwd=work)
    assert result.returncode in (0, 1), result.stderr.decode()
    for path in sorted([*work.rglob("*.py"), *work.rglob("*.ipynb")]):
        original = FIXTURES / project / path.relative_to(work)
        candidates = [Path(f"{original}.{mode}")]
        if mode == "unsafe-fixed":
            candidates.append(Path(f"{original}.fixed"))
        expected_path = next((c for c in candidates if c.exists()), original)
        assert path.read_text(encoding="utf-8") == expected_path.read_text(encoding="utf-8"), path
    again = run_torchlint("check", "--no-cache", *flags, "--output-format", "json", ".", cwd=work)
    before = {p: p.read_bytes() for p in [*work.rglob("*.py"), *work.rglob("*.ipynb")]}
    assert json.loads(again.stdout) is not None
    assert {p: p.read_bytes() for p in [*work.rglob("*.py"), *work.rglob("*.ipynb")]} == before
    assert "fixed" not in again.stderr.decode()
