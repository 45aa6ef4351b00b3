"""Smoke tests: tiny real GPU programs, each in its own child process with a timeout.

One CUDA fault (an illegal memory access, a cuDNN crash) poisons the whole process, so
every program runs in a fresh `python -I -c` child, in an empty temporary directory:
isolated mode (no current directory or PYTHON* variables on the path) and a clean working
directory, so a repository's `./torch.py` is never what `import torch` loads. A program
that needs more on its path (the user's model for `--model`) adds it itself, by absolute
path. The runner is generic: a program is a name plus Python source. A child passes by exiting 0; it may instead report a status of
its own by printing one line `@@torchlint-smoke {"status": ..., "found": ..., "advice": ...}`.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import List, Mapping, Optional, Sequence

from torchlint.doctor.facts import Facts
from torchlint.doctor.results import FAIL, PASS, SKIP, STATUSES, CheckResult

MARKER = "@@torchlint-smoke "
DEFAULT_TIMEOUT = 120.0  # the first CUDA/cuDNN initialisation alone can take tens of seconds


@dataclass(frozen=True)
class SmokeProgram:
    name: str
    code: str
    expected: str = "runs"


def run_program(
    program: SmokeProgram,
    timeout: float = DEFAULT_TIMEOUT,
    python: str = sys.executable,
    env: Optional[Mapping[str, str]] = None,
) -> CheckResult:
    """Run one program in a child interpreter and judge how it ended."""
    name = f"smoke: {program.name}"
    try:
        with tempfile.TemporaryDirectory(prefix="torchlint-smoke-") as workdir:
            completed = subprocess.run(
                [python, "-I", "-c", program.code],
                capture_output=True,
                text=True,
                errors="replace",
                timeout=timeout,
                env=dict(env) if env is not None else None,
                stdin=subprocess.DEVNULL,
                cwd=workdir,
            )
    except subprocess.TimeoutExpired as expired:
        return CheckResult(name, FAIL, f"timed out after {timeout:g} s", program.expected,
                           "The child was killed. A hang in CUDA initialisation often means a "
                           "driver/GPU problem; check `nvidia-smi`.", _text(expired.stderr))
    except OSError as error:
        return CheckResult(name, FAIL, f"could not start {python}: {error}", program.expected)
    reported = _reported(completed.stdout)
    if completed.returncode != 0:
        error_text = completed.stderr.strip()
        advice = "See the error text." if error_text else "It died without output (a native crash)."
        return CheckResult(name, FAIL, _how_it_died(completed.returncode, completed.stderr), program.expected,
                           advice, error_text)
    if reported is not None:
        return CheckResult(name, reported.get("status", PASS), reported.get("found", "ran"), program.expected,
                           reported.get("advice", ""), reported.get("detail", ""))
    return CheckResult(name, PASS, "ran", program.expected)


def run_programs(
    programs: Sequence[SmokeProgram],
    timeout: float = DEFAULT_TIMEOUT,
    python: str = sys.executable,
    env: Optional[Mapping[str, str]] = None,
) -> List[CheckResult]:
    """Run programs one after another (they share one GPU), each in its own child."""
    return [run_program(program, timeout, python, env) for program in programs]


def run_gpu_smoke(facts: Facts, timeout: float = DEFAULT_TIMEOUT) -> List[CheckResult]:
    """The GPU smoke suite, or one skip per program when this machine has no CUDA GPU."""
    if not facts.has_gpu or facts.torch_build != "cuda":
        reason = "no CUDA GPU" if facts.torch_build != "rocm" else "ROCm build: CUDA smoke tests only"
        return [CheckResult(f"smoke: {p.name}", SKIP, reason, p.expected) for p in GPU_PROGRAMS]
    return run_programs(GPU_PROGRAMS, timeout)


def _reported(stdout: str) -> Optional[dict]:
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARKER):
            try:
                data = json.loads(line[len(MARKER):])
            except ValueError:
                return None
            if isinstance(data, dict) and data.get("status", PASS) in STATUSES:
                return {key: str(value) for key, value in data.items()}
            return None
    return None


def _how_it_died(returncode: int, stderr: str) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
    return f"exit {returncode}: {last[:200]}" if last else f"exit {returncode}"


def _text(data) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else str(data)


_PRELUDE = f'''
import json, sys
import torch

def report(status, found, advice=""):
    print({MARKER!r} + json.dumps({{"status": status, "found": found, "advice": advice}}))
    sys.exit(0)

dev = torch.device("cuda")
torch.manual_seed(0)
'''

_CONV = _PRELUDE + '''
dtype = getattr(torch, DTYPE)
if dtype is torch.bfloat16 and not torch.cuda.is_bf16_supported():
    report("skip", "bf16 not supported on this GPU")
torch.backends.cudnn.enabled = True
conv = torch.nn.Conv2d(3, 8, 3, padding=1).to(dev, dtype)
x = torch.randn(2, 3, 32, 32, device=dev, dtype=dtype, requires_grad=True)
conv(x).float().square().mean().backward()
torch.cuda.synchronize()
report("pass", "forward+backward ok (cuDNN %s)" % torch.backends.cudnn.version())
'''

_LSTM = _PRELUDE + '''
lstm = torch.nn.LSTM(8, 16, num_layers=2, batch_first=True).to(dev)
x = torch.randn(4, 5, 8, device=dev, requires_grad=True)
out, _ = lstm(x)
out.square().mean().backward()
torch.cuda.synchronize()
report("pass", "forward+backward ok")
'''

_PROJECTED_LSTM_DOUBLE_BACKWARD = _PRELUDE + '''
lstm = torch.nn.LSTM(8, 16, proj_size=4, batch_first=True).to(dev)
x = torch.randn(4, 5, 8, device=dev, requires_grad=True)
try:
    out, _ = lstm(x)
    (grad,) = torch.autograd.grad(out.square().mean(), x, create_graph=True)
    grad.square().sum().backward()
    torch.cuda.synchronize()
except (RuntimeError, NotImplementedError) as error:
    text = str(error)
    lowered = text.lower()
    if "not supported" in lowered or "not_supported" in lowered or "not implemented" in lowered:
        report("warn", text.strip().splitlines()[0][:200],
               "cuDNN RNNs have no double backward. Run this RNN's forward under "
               "`torch.backends.cudnn.flags(enabled=False)` (rule TL004 cudnn-rnn-double-backward).")
    raise
report("pass", "double backward ok")
'''

_MATMUL = _PRELUDE + '''
a = torch.randn(256, 256)
b = torch.randn(256, 256)
expected = a @ b
for dtype, tolerance in ((torch.float32, 1e-2), (torch.float16, 1.0)):
    got = (a.to(dev, dtype) @ b.to(dev, dtype)).float().cpu()
    error = (got - expected).abs().max().item()
    if error > tolerance:
        report("fail", "%s result off by %.3g" % (dtype, error), "cuBLAS returned wrong numbers.")
report("pass", "fp32 and fp16 match the CPU")
'''

GPU_PROGRAMS = (
    SmokeProgram("conv2d fp32", _CONV.replace("DTYPE", "'float32'"), "fwd+bwd via cuDNN"),
    SmokeProgram("conv2d fp16", _CONV.replace("DTYPE", "'float16'"), "fwd+bwd via cuDNN"),
    SmokeProgram("conv2d bf16", _CONV.replace("DTYPE", "'bfloat16'"), "fwd+bwd via cuDNN"),
    SmokeProgram("lstm", _LSTM, "fwd+bwd via cuDNN"),
    SmokeProgram("proj-lstm double backward", _PROJECTED_LSTM_DOUBLE_BACKWARD, "double backward"),
    SmokeProgram("matmul", _MATMUL, "matches CPU"),
)
