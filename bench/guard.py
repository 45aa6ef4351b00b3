"""The guard's overhead per check family on CPU models, forward + backward + SGD step.

    python bench/guard.py [--steps 6] [--rounds 5] [--threads 1]

For each model (a ResNet-18 layout at 64x64, an LSTM tagger) it times training steps
without the guard and with each check family alone, with all shape/dtype/device
families together, and with the value families on every step (their worst case: by
default they run on the first 10 steps and every 100th after). Configurations take
turns, each timed right beside a run without the guard (in alternating order), and the
overhead is the median over rounds of the ratio of the two, with its interquartile
range: on a shared machine the load drifts, and a pair sees the same load. Time is this
process's CPU time (`time.process_time`, one torch thread), which other processes
disturb less than wall time. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from guard_models import make_resnet, make_tagger, train_steps  # noqa: E402

from torchlint.runtime import guard  # noqa: E402
from torchlint.runtime.options import META_FAMILIES, VALUE_FAMILIES  # noqa: E402

ALWAYS = 10**9  # `first`: value checks on every step
CONFIGURATIONS = (
    [("no guard", None, {})]
    + [(f"{family} only", [family], {}) for family in META_FAMILIES]
    + [("shape/dtype/device (conv+rnn+batchnorm)", list(META_FAMILIES), {})]
    + [(f"{family} only, every step", [family], {"first": ALWAYS}) for family in VALUE_FAMILIES]
    + [("all checks, values every step", None, {"first": ALWAYS}),
       ("all checks, default schedule (steps > 10)", None, {"first": 0, "every": 100})]
)
MODELS = {
    "resnet18 (8x3x64x64)": lambda: make_resnet(batch=8, size=64, width=64),
    "lstm tagger (16x40 tokens, 2x256 biLSTM)": lambda: make_tagger(batch=16, length=40),
}


def time_steps(model, batch_for, label, families, options, steps):
    handle = None if label == "no guard" else guard(model, checks=families, **options)
    try:
        train_steps(model, batch_for, 1, start=10_000)  # the guard's first call (path tables, plans)
        start = time.process_time()
        train_steps(model, batch_for, steps)
        return (time.process_time() - start) / steps
    finally:
        if handle is not None:
            handle.remove()


def bench_model(name, make, steps, rounds):
    torch.manual_seed(0)
    model, batch_for = make()
    train_steps(model, batch_for, 3)  # warm-up: allocator, oneDNN primitives
    base_times, times, ratios = [], {}, {}
    for round_ in range(rounds):
        for label, families, options in CONFIGURATIONS[1:]:
            # each configuration is timed right beside its own baseline, in alternating order,
            # so that both see the same load on the machine; the ratio is the measurement
            pair = [("no guard", None, {}), (label, families, options)]
            measured = {}
            for each in (pair if round_ % 2 == 0 else pair[::-1]):
                measured[each[0]] = time_steps(model, batch_for, *each, steps)
            base_times.append(measured["no guard"])
            times.setdefault(label, []).append(measured[label])
            ratios.setdefault(label, []).append(measured[label] / measured["no guard"])
    rows = [(name, "no guard", statistics.median(base_times) * 1000, "-")]
    for label, _, _ in CONFIGURATIONS[1:]:
        quartiles = statistics.quantiles(ratios[label], n=4) if len(ratios[label]) > 1 else ratios[label] * 3
        spread = f"{(quartiles[0] - 1) * 100:+.1f} .. {(quartiles[2] - 1) * 100:+.1f} %"
        rows.append((name, label, statistics.median(times[label]) * 1000,
                     f"{(statistics.median(ratios[label]) - 1) * 100:+.1f} % ({spread})"))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6, help="training steps per timing")
    parser.add_argument("--rounds", type=int, default=5, help="timings per configuration (median)")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1: steadier)")
    parser.add_argument("--models", nargs="*", default=list(MODELS), help="subset of: " + ", ".join(MODELS))
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s), {args.steps} steps x {args.rounds} rounds, "
          "CPU time per training step (forward + backward + SGD step)\n")
    print("| model | configuration | median CPU ms / step | overhead: median (quartiles) |")
    print("| --- | --- | ---: | ---: |")
    for name in args.models:
        for model, label, median, overhead in bench_model(name, MODELS[name], args.steps, args.rounds):
            print(f"| {model} | {label} | {median:.1f} | {overhead} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
