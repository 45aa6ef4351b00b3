"""`torchlint.runtime.verify()`: the doctor's checks as the first line of a training script.

```python
import torchlint.runtime
torchlint.runtime.verify()  # raises EnvironmentMismatch with the table as its message
```

It reads the same `[tool.torchlint.runtime]` table as `torchlint doctor` and, on a
CPU-only machine, costs a few milliseconds once torch is imported.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, List, Mapping, Optional, Union

__all__ = ["EnvironmentMismatch", "InvalidRequirements", "verify"]

GUARD_VARIABLE = "TORCHLINT_GUARD"
RequirementsArg = Union[None, str, "os.PathLike[str]", Mapping[str, Any]]


class EnvironmentMismatch(RuntimeError):
    """The environment fails a declared requirement or a smoke test.

    The message is the doctor's table in plain text; `results` holds the rows.
    """

    def __init__(self, message: str, results: Optional[list] = None) -> None:
        super().__init__(message)
        self.results = list(results or [])


class InvalidRequirements(EnvironmentMismatch):
    """The requirements themselves are wrong (unknown key, bad specifier, unreadable file)."""


def verify(
    requirements: RequirementsArg = None,
    smoke: bool = False,
    *,
    smoke_timeout: Optional[float] = None,
    warn: bool = True,
) -> List[Any]:
    """Check this process's torch/CUDA environment; raise `EnvironmentMismatch` on failure.

    `requirements` is None (the nearest pyproject.toml/torchlint.toml above the current
    directory), a path to a TOML file (as `torchlint doctor --requirements`), or the
    runtime table itself as a mapping. With `smoke=True` the GPU smoke programs run too,
    each in a child process. Warnings (e.g. CUDA_LAUNCH_BLOCKING left set) are issued
    as one `RuntimeWarning` unless `warn=False`. With `TORCHLINT_GUARD=1` in the
    environment, a passing check also installs the run-time guard for the whole process
    (`torchlint.runtime.guard()` with its defaults; see docs/guard.md). Returns the list
    of `CheckResult`s.
    """
    from torchlint.core.config_files import ConfigError
    from torchlint.doctor.check import run_checks
    from torchlint.doctor.probe import collect
    from torchlint.doctor.render import render_plain
    from torchlint.core.runtime_requirements import load_requirements, parse_requirements
    from torchlint.doctor.results import WARN, failed

    try:
        if isinstance(requirements, Mapping):
            declared = parse_requirements(requirements)
        elif requirements is not None:
            declared = load_requirements(Path(os.fspath(requirements)))
        else:
            declared = load_requirements(None, Path.cwd())
    except ConfigError as error:
        raise InvalidRequirements(str(error)) from None

    facts = collect()
    results = run_checks(facts, declared)
    if smoke:
        from torchlint.doctor.smoke import DEFAULT_TIMEOUT, run_gpu_smoke

        results += run_gpu_smoke(facts, smoke_timeout or DEFAULT_TIMEOUT)
    if failed(results):
        raise EnvironmentMismatch("torchlint: the environment does not match its requirements\n"
                                  + render_plain(results), results)
    warned = [result for result in results if result.status == WARN]
    if warn and warned:
        warnings.warn("torchlint: environment warnings\n" + render_plain(warned), RuntimeWarning, stacklevel=2)
    if guard_requested():
        from torchlint.runtime.guards import install_process_guard

        install_process_guard()
    return results


def guard_requested() -> bool:
    """`TORCHLINT_GUARD=1` (or true/yes/on) asks `verify()` to guard every module of the process."""
    return os.environ.get(GUARD_VARIABLE, "").strip().lower() in ("1", "true", "yes", "on")
