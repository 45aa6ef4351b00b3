"""The timed twin of tests/test_complexity.py: each shape of tests/complexity_shapes.py at
n, 2n, 4n, ..., timed (CPU seconds of this process, least of `--repeat` runs), and the
ratio of each doubling.

    python bench/complexity.py [--shapes rebinding_chain elif_chain] [--start 50] [--doublings 3] [--budget 20]

`torchlint check --no-cache -j 1 --select ALL` runs in this process (`torchlint.cli.main`)
after one warm-up run, so imports and start-up are not timed. A shape stops doubling once
a run takes more than `--budget` seconds. Exit code 1 when a doubling costs more than
2.5 times (the test's bound on counted work is 2.2; time is noisier).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from complexity_shapes import SHAPES  # noqa: E402

from torchlint.cli import main as torchlint_main  # noqa: E402

BOUND = 2.5


def cpu_seconds(shape: str, n: int, repeat: int) -> float:
    with tempfile.TemporaryDirectory(prefix="torchlint-complexity-") as scratch:
        root = Path(scratch)
        for relative, source in SHAPES[shape](n).items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(source, encoding="utf-8")
        best = float("inf")
        for _ in range(repeat):
            started = time.process_time()
            with contextlib.redirect_stdout(io.StringIO()):
                torchlint_main(["check", "--no-cache", "-j", "1", "--select", "ALL", "--exit-zero", "-q", str(root)])
            best = min(best, time.process_time() - started)
        return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="+", default=sorted(SHAPES), choices=sorted(SHAPES))
    parser.add_argument("--start", type=int, default=50)
    parser.add_argument("--doublings", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--budget", type=float, default=20.0, metavar="SECONDS")
    args = parser.parse_args(argv)
    cpu_seconds("long_trainer", 2, 1)  # warm-up: imports, tables
    worst = 0.0
    print("| shape | n | CPU s | × previous |\n|---|---|---|---|")
    for shape in args.shapes:
        previous = None
        n = args.start
        for _ in range(args.doublings + 1):
            seconds = cpu_seconds(shape, n, args.repeat)
            ratio = seconds / previous if previous else None
            if ratio is not None:
                worst = max(worst, ratio)
            print(f"| {shape} | {n} | {seconds:.3f} | {f'{ratio:.2f}' if ratio else ''} |", flush=True)
            if seconds > args.budget:
                break
            previous, n = seconds, 2 * n
    print(f"\nworst doubling: ×{worst:.2f} (bound ×{BOUND})")
    return 0 if worst <= BOUND else 1


if __name__ == "__main__":
    sys.exit(main())
