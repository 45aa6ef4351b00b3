"""Time `torchlint explain` on 100 MB logs: `python bench/explain_speed.py [DIR]`.

Two logs: one of repeated lines (condensed to its distinct lines), one whose every line differs
(nothing condenses) with the error on the last line. Prints wall and CPU seconds of each run.
"""

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ERROR = ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a "
         "non-contiguous input.\n")


def repeated(handle):
    block = ERROR * 40 + "".join(f"step {i} loss 0.{i:06d} lr 1e-4 grad_norm {i % 97}\n" for i in range(40))
    for _ in range(100_000_000 // len(block) + 1):
        handle.write(block)


def distinct(handle):
    handle.write("".join(f"epoch {i // 1000} step {i} loss 0.{i:06d} lr 0.0001 grad_norm {i % 977}.25 "
                         f"tokens/s {i % 9000}\n" for i in range(1_300_000)))
    handle.write(ERROR)


def main(argv):
    folder = Path(argv[0]) if argv else Path(tempfile.mkdtemp(prefix="explain-speed-"))
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    for write in (repeated, distinct):
        log = folder / f"{write.__name__}.log"
        with open(log, "w") as handle:
            write(handle)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "torchlint", "explain", str(log)], capture_output=True,
                             text=True, env=env)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        print(f"{write.__name__}: {log.stat().st_size / 1e6:.0f} MB, exit {out.returncode}, "
              f"wall {wall:.2f} s, CPU {cpu:.2f} s, top match {'[cudnn-not-supported]' in out.stdout}")
        log.unlink()


if __name__ == "__main__":
    main(sys.argv[1:])
