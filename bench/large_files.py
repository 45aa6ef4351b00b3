"""Lint generated large files and report what one file costs: wall and CPU time, CPU
per line against timm's, and peak RSS.

    python bench/large_files.py [--dir DIR] [--timm PATH] [--timeout SECONDS]

Files (each holds a trigger, so it reaches LibCST, and real findings):
- `data_literal.py`: a 5 MB single-line data literal (`DATA = [0.123456, ...]`) after
  `import wandb` and a function that uses it;
- `data_literal_10mb.py`: the same at 10 MB (the bound: under 30 s and 1 GiB);
- `generated.py`: 150,000 lines of generated functions and modules;
- `statements_1m.py`: 1,000,000 one-line top-level statements (about 10 MB) around the
  header's functions, linted through the statements rules need (torchlint/core/large_files.py).

Targets: any file up to 10 MB under 30 s and 1 GiB peak RSS; no more CPU per line than
twice timm's. timm's CPU per line is measured with `--timm PATH` (a `--jobs 1
--no-cache` run), else taken from bench/RESULTS.md (2026-11-22, `--jobs 1`: 7.874 s
CPU for 141,127 lines).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

from measure import measure

TORCHLINT = (sys.executable, "-m", "torchlint", "check", "--no-cache", "--exit-zero", "-q")
TIMM_MS_PER_LINE = 7.874 * 1000 / 141_127
MAX_SECONDS = 30.0
MAX_RSS = 1024 * 1024 * 1024

HEADER = "import torch\nimport wandb\n\n\ndef log(values):\n    wandb.log({'mean': torch.tensor(values).mean().item()})\n\n\n"


def data_literal(size: int, seed: int = 0) -> str:
    """A module whose bulk is one line: `DATA = [0.123456, ...]` of about `size` bytes."""
    generator = random.Random(seed)
    values, total = [], 0
    while total < size:
        value = f"{generator.random():.6f}"
        values.append(value)
        total += len(value) + 2
    return HEADER + "DATA = [" + ", ".join(values) + "]\n"


_BLOCK = '''class Block{i}(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d({c}, {c}, 3, padding=1)
        self.scale = {i}

    def forward(self, x):
        y = self.conv(x) * self.scale
        return torch.relu(y + x)


def step_{i}(model, batch):
    loss = model(batch).mean()
    return loss.item()


'''


def generated_module(lines: int) -> str:
    """Generated code of about `lines` lines: modules, their `forward`s, helpers."""
    blocks = []
    count = 0
    index = 0
    per_block = _BLOCK.count("\n")
    while count < lines:
        blocks.append(_BLOCK.format(i=index, c=8 + index % 8))
        count += per_block
        index += 1
    return "import torch\nimport torch.nn as nn\n" + HEADER + "".join(blocks)


def statements(count: int) -> str:
    """A module of `count` one-line statements (`v12 = 0`) after the header."""
    return HEADER + "".join(f"v{i} = 0\n" for i in range(count))


def write_files(directory: Path, only=None) -> list:
    files = {
        "data_literal.py": lambda: data_literal(5_000_000),
        "data_literal_10mb.py": lambda: data_literal(10_000_000),
        "generated.py": lambda: generated_module(150_000),
        "statements_1m.py": lambda: statements(1_000_000),
    }
    paths = []
    for name, text in files.items():
        if only and name not in only:
            continue
        path = directory / name
        path.write_text(text())
        paths.append(path)
    return paths


def _line_count(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, help="write the files here (default: a temporary directory)")
    parser.add_argument("--timm", type=Path, help="a timm source tree: measure its CPU per line now")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--only", nargs="*", help="measure only these files (by name)")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        directory = options.dir or Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        timm_ms = TIMM_MS_PER_LINE
        if options.timm is not None:
            sample = measure([*TORCHLINT, "--jobs", "1", "."], options.timm, options.timeout)
            lines = sum(_line_count(p) for p in options.timm.rglob("*.py"))
            timm_ms = sample.cpu * 1000 / lines
            print(f"timm: {lines:,} lines, {sample.cpu:.2f} s CPU, {timm_ms:.4f} ms/line (measured now)")
        else:
            print(f"timm: {timm_ms:.4f} ms/line CPU (bench/RESULTS.md, --jobs 1)")
        print("| file | MB | lines | wall s | CPU s | CPU ms/line | × timm | peak RSS MiB | exit | verdict |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        failed = False
        for path in write_files(directory, options.only):
            sample = measure([*TORCHLINT, path.name], directory, options.timeout)
            lines = _line_count(path)
            per_line = sample.cpu * 1000 / lines
            ok = sample.exit_code == 0 and sample.rss_process < MAX_RSS and sample.wall < MAX_SECONDS
            if lines > 1000:  # the per-line target is for many-line files
                ok = ok and per_line <= 2 * timm_ms
            failed = failed or not ok
            print(
                f"| {path.name} | {path.stat().st_size / 1e6:.1f} | {lines:,} | {sample.wall:.2f} | {sample.cpu:.2f} "
                f"| {per_line:.4f} | {per_line / timm_ms:.2f} | {sample.rss_process / 2**20:.0f} "
                f"| {sample.exit_code}{' (timed out)' if sample.timed_out else ''} | {'met' if ok else 'MISSED'} |"
            )
            if sample.exit_code != 0:
                print(sample.stderr_tail.strip())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
