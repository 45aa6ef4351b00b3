"""The smoke runner on CPU: children that pass, crash, hang, fail or report their own status."""

import json
import time

import pytest

from torchlint.doctor.results import FAIL, PASS, SKIP, WARN
from torchlint.doctor.smoke import GPU_PROGRAMS, MARKER, SmokeProgram, run_gpu_smoke, run_program, run_programs


def test_a_passing_child_passes():
    result = run_program(SmokeProgram("ok", "print('hello')"), timeout=30)
    assert (result.name, result.status) == ("smoke: ok", PASS)


def test_a_crashing_child_fails_with_how_it_died():
    code = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"
    result = run_program(SmokeProgram("segfault", code), timeout=30)
    assert result.status == FAIL and "SIGSEGV" in result.found


def test_a_raising_child_fails_with_its_error_text():
    code = "raise RuntimeError('CUDA error: an illegal memory access was encountered')"
    result = run_program(SmokeProgram("raises", code), timeout=30)
    assert result.status == FAIL
    assert "illegal memory access" in result.found
    assert "Traceback" in result.detail and "illegal memory access" in result.detail


def test_a_hanging_child_is_killed_at_the_timeout():
    start = time.monotonic()
    result = run_program(SmokeProgram("hang", "import time; time.sleep(60)"), timeout=1.5)
    assert time.monotonic() - start < 15
    assert result.status == FAIL and "timed out after 1.5 s" in result.found


def test_a_child_can_report_its_own_status():
    line = MARKER + json.dumps({"status": "warn", "found": "not supported", "advice": "see TL004"})
    result = run_program(SmokeProgram("reports", f"print({line!r})"), timeout=30)
    assert (result.status, result.found, result.advice) == (WARN, "not supported", "see TL004")


def test_programs_run_in_separate_processes():
    # The first child poisons its own process; the second is unaffected.
    results = run_programs([SmokeProgram("poison", "import os; os.abort()"), SmokeProgram("clean", "pass")], timeout=30)
    assert [r.status for r in results] == [FAIL, PASS]


def test_without_a_gpu_every_smoke_test_is_skipped_with_the_reason(load_facts):
    results = run_gpu_smoke(load_facts("cpu-only"))
    assert [r.status for r in results] == [SKIP] * len(GPU_PROGRAMS)
    assert all("no CUDA GPU" in r.found for r in results)


def _on_cpu(code):
    return (code.replace('torch.device("cuda")', 'torch.device("cpu")')
                .replace("torch.cuda.synchronize()", "pass")
                .replace("torch.cuda.is_bf16_supported()", "True"))


@pytest.mark.slow
@pytest.mark.parametrize("program", GPU_PROGRAMS, ids=lambda p: p.name)
def test_the_gpu_programs_themselves_run_when_pointed_at_the_cpu(program):
    """No GPU here, so prove the child programs are sound by running them on the CPU."""
    result = run_program(SmokeProgram(program.name, _on_cpu(program.code)), timeout=120)
    assert result.status == PASS, result.detail
