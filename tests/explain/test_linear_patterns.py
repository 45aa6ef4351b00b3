"""Every pattern that reads pasted text is linear: adversarial lines cost time in proportion
to their length, never its square or cube (issue 34, item 4).

Each evidence, feature and signature pattern of `explain` and each `collect_env` pattern of
`doctor --facts` meets lines made of long runs (spaces, digits, letters, brackets,
backticks) and of its own literals, repeated or followed by such a run. Each line is
LINE characters; a superlinear pattern takes seconds or hours on it, a linear one
milliseconds. A CPU-time alarm ends a runaway match, so a regression fails fast.
"""

from __future__ import annotations

import re
import resource
import shutil
import signal
import time
from typing import Iterator, Tuple

import pytest

from cli_support import run_torchlint_process
from torchlint.doctor import check_basics, collect_env
from torchlint.explain.evidence import _PATTERNS, FEATURES
from torchlint.explain.knowledge import load_knowledge

LINE = 20_000
SECONDS_PER_LINE = 0.3  # 15 s per MB at worst, where a quadratic pattern needs hours
RUNS = (" ", "1", "a", "[", "(", "<", "`", "'", " 1", "_")


def _literals(source: str) -> list:
    """The literal words of a pattern's source (`name:`, `major:`, `CUDNN_STATUS_`)."""
    found = re.findall(r"(?<!\\)[A-Za-z0-9_:'\"=`<>.\- ]{2,}", source)
    return sorted({word.strip() for word in found if word.strip()})[:30]


def adversarial_lines(source: str) -> Iterator[Tuple[str, str]]:
    for run in RUNS:
        yield f"a run of {run!r}", run * (LINE // len(run))
    for literal in _literals(source):
        yield f"{literal!r} repeated", literal * (LINE // len(literal))
        yield f"{literal!r} and a space, repeated", (literal + " ") * (LINE // (len(literal) + 1))
        for run in RUNS[:7]:
            yield f"{literal!r} then a run of {run!r}", literal + run * LINE
            yield f"{literal!r} then a run of {run!r} then x", literal + run * LINE + "x"
            yield f"{literal!r} then a run of {run!r} then itself", literal + run * LINE + literal


class _Runaway(Exception):
    pass


def _alarm(signum, frame):
    raise _Runaway()


def _all_patterns():
    for name, pattern in _PATTERNS:
        yield f"evidence:{name}", pattern, lambda p, text: sum(1 for _ in p.finditer(text))
    for name, pattern in FEATURES:
        yield f"feature:{name}", pattern, lambda p, text: p.search(text)
    for signature in load_knowledge().signatures:
        yield f"signature:{signature.id}", signature.pattern, lambda p, text: p.search(text)
    for framework in load_knowledge().frameworks:
        if framework.advice is not None:  # a shared printer names no framework in advice
            yield f"framework:{framework.name}", framework.advice, lambda p, text: p.search(text)
    yield "doctor:driver-too-old", check_basics._DRIVER_TOO_OLD, lambda p, text: p.search(text)
    for name in ("_FIELD", "_GPU_LINE", "_PACKAGE_LINE"):
        yield f"collect_env:{name}", getattr(collect_env, name), lambda p, text: p.match(text)


PATTERNS = {name: (pattern, apply) for name, pattern, apply in _all_patterns()}


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_a_pattern_costs_linear_time_on_adversarial_lines(name):
    pattern, apply = PATTERNS[name]
    previous = signal.signal(signal.SIGPROF, _alarm)
    try:
        for label, line in adversarial_lines(pattern.pattern):
            started = time.process_time()
            signal.setitimer(signal.ITIMER_PROF, 5 * SECONDS_PER_LINE)
            try:
                apply(pattern, line)
            except _Runaway:
                pytest.fail(f"{name} on {label}: still matching after {5 * SECONDS_PER_LINE} s of CPU")
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
            spent = time.process_time() - started
            assert spent < SECONDS_PER_LINE, f"{name} on {label}: {spent:.2f} s for {len(line):,} characters"
    finally:
        signal.signal(signal.SIGPROF, previous)


def _cpu_of(result_started) -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime - result_started


def _timed(*args, cwd, input=None, limit_bytes=None):
    prefix = ()
    if limit_bytes is not None:
        if shutil.which("prlimit") is None:
            pytest.skip("prlimit (util-linux) bounds the child's memory")
        prefix = (shutil.which("prlimit"), f"--as={limit_bytes}", "--")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = run_torchlint_process(*args, cwd=cwd, input=input, prefix=prefix, timeout=120)
    return result, _cpu_of(usage.ru_utime + usage.ru_stime)


def test_explain_reads_a_log_with_a_line_of_spaces_in_linear_time(tmp_path):
    log = tmp_path / "crash.log"
    spaces = " " * 4000
    log.write_text(f"name:{spaces}x\nDriver Version{spaces}x\ntorch{spaces}x\nAssertion `{'<' * 4000}\n"
                   "RuntimeError: CUDA error: device-side assert triggered\n")
    result, cpu = _timed("explain", str(log), cwd=tmp_path)
    assert result.returncode == 0 and b"device-side assert" in result.stdout
    assert cpu < 10


def test_doctor_reads_collect_env_with_an_80000_character_line_in_linear_time(tmp_path):
    facts = tmp_path / "env.txt"
    spaces = " " * 80000  # then a letter: a lazy value before `\s*$` tries every split of the spaces
    facts.write_text("PyTorch version: 2.3.0+cu121\nCUDA used to build PyTorch: 12.1\n"
                     f"GPU models and configuration:\nGPU 0: NVIDIA{spaces}x\n"
                     f"Nvidia driver version: 535.1{spaces}x\n")
    result, cpu = _timed("doctor", "--facts", str(facts), cwd=tmp_path)
    assert b"Traceback" not in result.stderr and result.returncode in (0, 1), result.stderr
    assert cpu < 10


def test_explain_refuses_a_device_and_a_log_beyond_its_bound_in_one_line(tmp_path):
    huge = tmp_path / "huge.log"
    with open(huge, "wb") as handle:
        handle.truncate(300 << 20)  # sparse
    for name, reason in (("/dev/zero", "a device, not a log"), (str(huge), "larger than 256 MiB")):
        result, cpu = _timed("explain", name, cwd=tmp_path, limit_bytes=1 << 30)
        assert result.returncode == 2 and result.stdout == b""
        [line] = result.stderr.decode().splitlines()
        assert line.startswith(f"error: {name}: cannot read: {reason}")
        assert cpu < 10


def test_a_match_in_a_condensed_log_keeps_its_line_in_the_file(tmp_path):
    log = tmp_path / "train.log"
    steps = "".join(f"step {i} loss 0.{i:06d}\n" for i in range(300_000))  # over 4 MiB, one template
    log.write_text(steps + "RuntimeError: CUDA error: device-side assert triggered\n")
    result = run_torchlint_process("explain", "--format", "json", str(log), cwd=tmp_path, timeout=120)
    import json

    assert [found["line"] for found in json.loads(result.stdout)["matches"]][:1] == [300_001]
