from __future__ import annotations

import os
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
# TL001 reports a module-level heavy import only when a function reads it later (an unread
# import is flake8's F401): append WANDB_READ_LATER to a source that ends with `import wandb`.
WANDB_READ_LATER = "\n\ndef f():\n    return wandb\n"
WANDB_USED = "import wandb\n" + WANDB_READ_LATER


def run_torchlint(*args, cwd=None, input=None, env=None, prefix=()):
    """The real console entry point, in a subprocess (run under `prefix`, e.g. setpriv, if given)."""
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    full_env.pop("FORCE_COLOR", None)
    return subprocess.run(
        [*prefix, sys.executable, "-m", "torchlint", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        env=full_env,
        timeout=300,
    )


def write_tree(root: Path, files: dict) -> Path:
    """Write `{relative name: text}` under `root` (folders made as needed); return `root`."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


MARKER = re.compile(r"#\s*expect:\s*(?P<items>TL\d{3}:\d+(?:\s*,\s*TL\d{3}:\d+)*)")


def expected_findings(project: Path) -> set:
    """The (file, row, column, code) findings that the `# expect: CODE:COL` markers under
    `project` name; in a notebook the file is `name.ipynb:cell N` and rows count in the cell."""
    expected = set()
    sources = [(path.relative_to(project).as_posix(), path.read_text(encoding="utf-8")) for path in sorted(project.rglob("*.py"))]
    for path in sorted(project.rglob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for number, cell in enumerate(cells, start=1):
            if cell["cell_type"] == "code":
                sources.append((f"{path.relative_to(project).as_posix()}:cell {number}", "".join(cell["source"])))
    for name, text in sources:
        for row, line in enumerate(text.splitlines(), start=1):
            match = MARKER.search(line)
            if match:
                for item in match.group("items").split(","):
                    code, column = item.strip().split(":")
                    expected.add((name, row, int(column), code))
    return expected
