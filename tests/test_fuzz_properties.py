"""Property-based fuzzing of every rule and every fix (safe and unsafe), with every rule
enabled: generated PyTorch-shaped modules and hypothesmith's arbitrary modules, both
salted with the rules' trigger shapes (fuzz_strategies.py), must keep the properties
of fuzz_checks.py through the library API, and the CLI must write what the library
computes, with the file's encoding, BOM and newlines.

Profiles (environment variable TORCHLINT_FUZZ_PROFILE): `fast` (default) is seeded and
runs in the normal suite in about 15 s; `long` is what bench/fuzz_long.py
runs (at least 10,000 programs, reproducers saved outside the repository).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from cli_support import run_torchlint
from fuzz_checks import CONFIG, Linter, PropertyFailure, check_program, compiles, fix_module, reparses
from fuzz_regressions import OPEN_DEFECTS, examples_for, open_defect
from fuzz_strategies import BOM, Program, salted_hypothesmith, torch_programs
from torchlint.core.source import decode_source

_COMMON = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    print_blob=True,
)
# no shrinking in the suite (it can take minutes): a failure shows the generated program
settings.register_profile("fast", derandomize=True, database=None, phases=[Phase.explicit, Phase.generate], **_COMMON)
settings.register_profile("long", database=None, **_COMMON)
PROFILE = os.environ.get("TORCHLINT_FUZZ_PROFILE", "fast")
# examples per test (besides the fixed reproducers): the fast budget is a seeded sample that
# keeps the three tests at about 15 s on two idle cores; the long one is bench/fuzz_long.py's
BUDGET = {
    "fast": {"torch": 40, "hypothesmith": 20, "cli": 1},
    "long": {"torch": 8000, "hypothesmith": 2000, "cli": 25},
}[PROFILE]
CLI_BATCH = 20


def profile(kind: str) -> settings:
    return settings(settings.get_profile(PROFILE), max_examples=BUDGET[kind])


def check_unless_open_defect(program: Program) -> bool:
    """Every property; a failure that is exactly an open defect's is counted, not raised.
    Whether the program hit an open defect."""
    try:
        check_program(program.to_bytes())
    except PropertyFailure as failure:
        defect = open_defect(failure, program.text)
        if defect is None:
            raise
        event(f"open defect: {defect.name[:60]}")
        return True
    return False


@examples_for("torch")
@profile("torch")
@given(torch_programs())
def test_torch_shaped_modules_keep_every_property(program: Program):
    check_unless_open_defect(program)


@examples_for("hypothesmith")
@profile("hypothesmith")
@given(salted_hypothesmith())
def test_salted_hypothesmith_modules_keep_every_property(program: Program):
    check_unless_open_defect(program)


@pytest.mark.xfail(strict=True, raises=PropertyFailure, reason="an open defect (see fuzz_regressions.py)")
@pytest.mark.parametrize("defect", OPEN_DEFECTS, ids=lambda d: d.name[:40])
def test_open_defect_reproducer_still_fails(defect):
    try:
        check_program(defect.reproducer.to_bytes())
    except PropertyFailure as failure:
        assert defect.matches(failure, defect.reproducer.text), f"it fails otherwise now: {failure}"
        raise


# ---- the CLI on a batch of files --------------------------------------------------------------


def _project(directory: Path) -> None:
    """A pyproject that selects every rule and sets every option as CONFIG does (every
    boolean option on)."""
    sections = ['[tool.torchlint]\nselect = ["ALL"]\n']
    for name, options in CONFIG.rule_options:
        body = "".join(f"{key} = {_toml_value(value)}\n" for key, value in options)
        sections.append(f"[tool.torchlint.{name}]\n{body}")
    (directory / "pyproject.toml").write_text("\n".join(sections))


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return json.dumps(list(value))  # a JSON array of strings or numbers is a TOML array
    return repr(value)


def expected_bytes(program: Program) -> bytes:
    """What `check --fix --unsafe-fixes` must leave in the file, from the library."""
    source = decode_source(program.to_bytes())
    fixed, rounds, errors = fix_module(source.text, Linter(source.newline), unsafe=True)
    return source.encode(fixed) if rounds and not errors else program.to_bytes()


@profile("cli")
@given(st.lists(torch_programs(), min_size=CLI_BATCH - 1, max_size=CLI_BATCH - 1), salted_hypothesmith())
def test_cli_fix_writes_what_the_library_computes(programs, salted):
    # one hypothesmith module per batch: hypothesmith sets a Hypothesis target per draw,
    # and a test case may set each target once
    programs = [p for p in programs + [salted] if compiles(p.to_bytes())]
    with tempfile.TemporaryDirectory(prefix="torchlint-fuzz-") as name:
        directory = Path(name)
        _project(directory)
        paths = [directory / f"module_{index:02d}.py" for index in range(len(programs))]
        for path, program in zip(paths, programs):
            path.write_bytes(program.to_bytes())
        # the files of programs that hit an open defect may only show that defect
        hits = {path.name for path, program in zip(paths, programs) if check_unless_open_defect(program)}
        first = run_torchlint("check", "--fix", "--unsafe-fixes", "--no-cache", ".", cwd=directory)
        stderr = first.stderr.decode(errors="replace")
        assert first.returncode in (0, 1), stderr
        assert "Traceback" not in stderr, stderr
        assert all(any(name in line for name in hits) for line in stderr.splitlines() if line.strip()), stderr
        for path, program in zip(paths, programs):
            written = path.read_bytes()
            if path.name in hits:
                assert compiles(written), path.name
                continue
            assert written.startswith(BOM) == program.bom, path.name
            source = decode_source(written)
            assert source.encoding == decode_source(program.to_bytes()).encoding, path.name
            assert reparses(source.text) is None, (path.name, reparses(source.text))
            assert written == expected_bytes(program), f"{path.name}: the CLI and the library disagree"
        before = {path: path.read_bytes() for path in paths}
        second = run_torchlint("check", "--fix", "--unsafe-fixes", "--no-cache", ".", cwd=directory)
        assert second.returncode in (0, 1), second.stderr.decode(errors="replace")
        changed = [path.name for path in paths if path.read_bytes() != before[path] and path.name not in hits]
        assert not changed, f"a second --fix changed {changed}"
