"""Print the answer vocabulary of `torchlint explain` (ids and titles only) for a held-out collector.

    python tools/answer_ids.py > /work/heldoutNN/VOCAB.md

A collector decides a thread's family and resolution first and reads this list only afterwards, to phrase the
`expect` regex in the ids explain can print (tests/explain/heldoutNN/COLLECTOR_PROMPT.md). It holds no pattern,
evidence or cause text, so it cannot steer which threads are collected or how they are labelled.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from torchlint.explain.knowledge import load_knowledge  # noqa: E402

HEADER = """# The answer vocabulary of `torchlint explain` (ids only)

explain's top answer is one of these strings: `<entry id>`, `<entry id>/<cause id>`, or `diag:<kind>`.
This list is ONLY for phrasing your `expect`/`partial` regexes so that they match the id that names the
thread's cause family. Never choose or skip a thread because of this list.

## diag kinds

- `diag:driver`: the NVIDIA driver is too old / mismatched for the CUDA build
- `diag:kernels`: the build has no kernels for this GPU architecture
- `diag:loader`: a shared library (CUDA/cuDNN/...) cannot be loaded or found
- `diag:visible-devices`: CUDA_VISIBLE_DEVICES / device index problems
- `diag:wsl`: WSL-specific GPU setup

## entries (id: title; causes)
"""


def vocabulary() -> str:
    lines = [HEADER]
    for signature in load_knowledge().signatures:
        causes = ", ".join(cause.id for cause in signature.causes)
        lines.append(f"- `{signature.id}`: {signature.title}" + (f"; causes: {causes}" if causes else ""))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(vocabulary())
