"""Every fix kind proven by execution: each program of tests/fix_execution/ is fixed by the
real CLI, then the program before and after the fix runs on CPU torch.

A program's first lines say what to expect:

- `# fix: TL202 --unsafe-fixes` (the rule selected, and the CLI's fix flags);
- `# config: ...` (lines of the case's pyproject.toml, if any);
- `# expect: same` (safe fixes: the fix changes the file, and the program prints the same
  lines and ends with the same exception), `# expect: no fix` (the file is left as it is),
  `# expect: differs LABEL ...` (unsafe fixes: the lines with these labels differ, as
  the rule's doc states, and nothing else does), or `# expect: repairs ERROR` (an API
  this torch no longer has: before, the program ends with ERROR; after, it runs);
- `# cpu: ...` where the program's point needs CUDA: what the CPU run can show.

A program prints `label: value` lines; a second `--fix` must change nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cli_support import run_torchlint
from execution_support import run_programs

pytest.importorskip("torch")

CASES = Path(__file__).parent / "fix_execution"
PROGRAMS = sorted(CASES.glob("*.py"))


def header(program: Path) -> dict:
    found: dict = {"config": []}
    for line in program.read_text().splitlines():
        if not line.startswith("# "):
            break
        key, _, value = line[2:].partition(": ")
        if key == "config":
            found["config"].append(value)
        else:
            found[key] = value
    return found


@pytest.fixture(scope="module")
def fixed_and_run(tmp_path_factory):
    """Every case fixed in its own folder, then all befores and all afters run, each side
    in one child process: {case name: (header, fixed text, before, after)}."""
    root = tmp_path_factory.mktemp("fix_execution")
    cases = {}
    for program in PROGRAMS:
        info = header(program)
        before, after = root / program.stem / "before", root / program.stem / "after"
        for folder in (before, after):
            folder.mkdir(parents=True)
            shutil.copy(program, folder / "main.py")
        if info["config"]:
            (after / "pyproject.toml").write_text("\n".join(info["config"]) + "\n")
        code, *flags = info["fix"].split()
        args = ("check", "--fix", "--no-cache", "--select", code, *flags, "main.py")
        first = run_torchlint(*args, cwd=after)
        assert first.returncode in (0, 1), first.stdout.decode() + first.stderr.decode()
        fixed = (after / "main.py").read_text()
        run_torchlint(*args, cwd=after)
        assert (after / "main.py").read_text() == fixed, f"{program.name}: a second --fix changed the file"
        cases[program.stem] = (info, fixed, before / "main.py", after / "main.py")
    outcomes = run_programs([path for case in cases.values() for path in case[2:]])
    return {name: (info, fixed, outcomes[b], outcomes[a]) for name, (info, fixed, b, a) in cases.items()}


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda path: path.stem)
def test_the_fix_keeps_what_its_doc_promises(program, fixed_and_run):
    info, fixed, before, after = fixed_and_run[program.stem]
    original = program.read_text()
    expect = info["expect"].split()
    if expect == ["no", "fix"]:
        assert fixed == original
        assert after == before
        return
    assert fixed != original, f"{program.name}: no fix was applied"
    if expect[0] == "repairs":
        assert (before.error, after.error) == (expect[1], None), (before, after)
        return
    assert after.error == before.error, (before, after)
    if expect == ["same"]:
        assert after.stdout == before.stdout
        return
    assert expect[0] == "differs"
    changed = set(expect[1:])
    old, new = before.lines(), after.lines()
    assert old.keys() == new.keys(), (before, after)
    for label in old:
        if label in changed:
            assert old[label] != new[label], f"{label}: the stated difference did not show"
        else:
            assert old[label] == new[label], f"{label} changed: {old[label]} -> {new[label]}"
