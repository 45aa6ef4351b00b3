"""The slowest real files: `torchlint check --no-cache FILE` on each file of the corpora above
a size, less the same run on an empty file (start-up), slowest first.

    python bench/slowest_files.py [--corpus training timm transformers] [--min-lines 500] [--repeat 3] [--top 10]

Each file is timed in a throw-away copy of its corpus, run from the copy's root (so the
project's configuration applies, as when a user lints that one file); each repetition
times the empty file and then the file, and the figures are medians. CPU is user +
system time of the process (a loaded machine inflates wall time more than CPU time).
Target: no file above 1 s (wall, above start-up). A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import List, Sequence

import corpora
from measure import measure

TARGET_SECONDS = 1.0
CHECK = (sys.executable, "-m", "torchlint", "check", "--no-cache", "-q", "--exit-zero", "--output-format", "concise")
EMPTY = "_torchlint_bench_empty_.py"


def timed_files(name: str, tree: Path, min_lines: int, repeat: int) -> List[dict]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="torchlint-slowest-") as scratch:
        work = corpora.working_copy(tree, Path(scratch))
        (work / EMPTY).write_text("", encoding="utf-8")
        for path in sorted(work.rglob("*.py")):
            lines = path.read_bytes().count(b"\n")
            if lines < min_lines:
                continue
            relative = str(path.relative_to(work))
            empty, full = [], []
            for _ in range(repeat):
                empty.append(measure([*CHECK, EMPTY], work))
                full.append(measure([*CHECK, relative], work))
            rows.append({
                "corpus": name, "file": relative, "lines": lines,
                "wall": statistics.median(s.wall for s in full) - statistics.median(s.wall for s in empty),
                "cpu": statistics.median(s.cpu for s in full) - statistics.median(s.cpu for s in empty),
                "exit": sorted({s.exit_code for s in full}),
            })
            print(f"{name} {relative} {lines} lines: {rows[-1]['wall']:.2f} s wall, {rows[-1]['cpu']:.2f} s CPU",
                  file=sys.stderr)
    return rows


def report(rows: Sequence[dict], top: int) -> str:
    ordered = sorted(rows, key=lambda row: row["wall"], reverse=True)
    lines = ["| file | lines | wall s above start-up | CPU s above start-up |", "|---|---|---|---|"]
    lines += [f"| {row['corpus']}: `{row['file']}` | {row['lines']:,} | {row['wall']:.2f} | {row['cpu']:.2f} |"
              for row in ordered[:top]]
    over = [row for row in rows if row["wall"] > TARGET_SECONDS]
    lines.append("")
    lines.append(f"{len(rows)} files of the given size; {len(over)} above {TARGET_SECONDS:.0f} s (wall) above start-up.")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", nargs="+", default=["training"], choices=[*sorted(corpora.PINNED), "training"])
    parser.add_argument("--min-lines", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--corpus-dir", type=Path, default=corpora.DEFAULT_CACHE)
    args = parser.parse_args(argv)
    names = [name for corpus in args.corpus for name in (corpora.TRAINING if corpus == "training" else (corpus,))]
    rows = []
    for name in names:
        rows += timed_files(name, corpora.fetch(name, args.corpus_dir), args.min_lines, args.repeat)
    print(report(rows, args.top))
    return 0 if all(row["wall"] <= TARGET_SECONDS for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
