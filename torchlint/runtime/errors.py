"""The guard's error: which module, which check, what it saw, what to do."""

from __future__ import annotations

from typing import Sequence, Tuple


class GuardError(RuntimeError):
    """A guard check failed before the call that would have failed (or faulted on the GPU).

    `module` is the module's path in the model (`model.decoder.fusion`, or the call's name
    when no module is running), `check` the check's id (`conv-channels`), `facts` the
    lines describing the tensors involved, `advice` what to do.
    """

    def __init__(self, module: str, kind: str, check: str, facts: Sequence[str], advice: str) -> None:
        self.module = module
        self.kind = kind
        self.check = check
        self.facts: Tuple[str, ...] = tuple(facts)
        self.advice = advice
        lines = [f"torchlint guard: check `{check}` failed at {module} ({kind})"]
        lines += [f"  {fact}" for fact in self.facts]
        lines.append(f"  what to do: {advice}")
        super().__init__("\n".join(lines))

    def with_fact(self, fact: str, advice: str = "") -> "GuardError":
        """The same finding with one more fact (and other advice, when given)."""
        return GuardError(self.module, self.kind, self.check, self.facts + (fact,), advice or self.advice)



class GuardWarning(UserWarning):
    """Something the guard cannot check (code inside a compiled graph), or a limit the current torch
    works around (cuDNN's batch-norm sizes)."""
