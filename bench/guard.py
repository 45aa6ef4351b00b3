"""The guard's overhead per check family on CPU models, forward + backward + SGD step.

    python bench/guard.py [--steps 6] [--rounds 5] [--threads 1] [--configurations "all checks"]

For each model (a ResNet-18 layout at 64x64, an LSTM tagger) it times training steps
without the guard and with each check family alone, with all shape/dtype/device
families together, and with the value families on every step (their worst case: by
default they run on the first 10 steps and every 100th after). Configurations take
turns, each timed right beside a run without the guard (in alternating order), and the
overhead is the median over rounds of the ratio of the two, with its interquartile
range: on a shared machine the load drifts, and a pair sees the same load. Time is this
process's CPU time (`time.process_time`, one torch thread), which other processes
disturb less than wall time.

Shape/dtype/device checks (and the value checks' off steps) cost per call, not per
element, so their cost is also measured on the same architecture at a tiny size (the
same module and torch calls, little compute): the guard's own milliseconds per step,
shown as a share of the real step. That figure is far less exposed to the machine's
noise than a few-percent difference between two long steps. With the value checks on every
step, the guard's own time is mostly its NaN/Inf tests, which read every element: they are timed
inside the real step instead (CPU time in `torchlint.runtime.finite`'s tests). Prints a Markdown table.
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

import torchlint.runtime.finite as finite_tests  # noqa: E402
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
# Metadata checks cost per call, not per element: their cost is also measured on the same
# architecture at a tiny size, where compute is small and the guard's own time stands out.
CALL_COUNT_DRIVEN = ["no guard"] + [label for label, families, options in CONFIGURATIONS
                                    if "every step" not in label and label != "no guard"]
MODELS = {
    "resnet18 (8x3x64x64)": (lambda: make_resnet(batch=8, size=64, width=64),
                             lambda: make_resnet(batch=2, size=32, width=8)),
    "lstm tagger (16x40 tokens, 2x256 biLSTM)": (lambda: make_tagger(batch=16, length=40),
                                                 lambda: make_tagger(batch=1, length=2)),
}


READ_TIME = [0.0]  # CPU seconds spent in the guard's NaN/Inf tests since the last reset


def _timed(test):
    def timed(*args, **kwargs):
        start = time.process_time()
        try:
            return test(*args, **kwargs)
        finally:
            READ_TIME[0] += time.process_time() - start
    return timed


# On value-check steps the guard's own time is mostly its NaN/Inf tests, which grow with the tensors: they are
# timed inside the real step (the module outputs' and parameter gradients' tests look them up in their module)
finite_tests.output_state = _timed(finite_tests.output_state)
finite_tests.non_finite = _timed(finite_tests.non_finite)


def time_steps(model, batch_for, label, families, options, steps):
    """CPU seconds per step, and of them the seconds in the guard's NaN/Inf tests."""
    handle = None if label == "no guard" else guard(model, checks=families, **options)
    try:
        train_steps(model, batch_for, 1, start=10_000)  # the guard's first call (path tables, plans)
        READ_TIME[0] = 0.0
        start = time.process_time()
        train_steps(model, batch_for, steps)
        return (time.process_time() - start) / steps, READ_TIME[0] / steps
    finally:
        if handle is not None:
            handle.remove()


def paired(make, labels, steps, rounds):
    """Per configuration: its step times, its differences to the baseline timed beside it, the ratios, and
    the time per step in the guard's NaN/Inf tests."""
    torch.manual_seed(0)
    model, batch_for = make()
    train_steps(model, batch_for, 3)  # warm-up: allocator, oneDNN primitives
    chosen = [configuration for configuration in CONFIGURATIONS if configuration[0] in labels]
    base, times, differences, ratios, reads = [], {}, {}, {}, {}
    for round_ in range(rounds):
        for label, families, options in chosen[1:]:
            # each configuration is timed right beside its own baseline, in alternating order,
            # so that both see the same load on the machine
            pair = [("no guard", None, {}), (label, families, options)]
            measured = {}
            read = {}
            for each in (pair if round_ % 2 == 0 else pair[::-1]):
                measured[each[0]], read[each[0]] = time_steps(model, batch_for, *each, steps)
            reads.setdefault(label, []).append(read[label])
            base.append(measured["no guard"])
            times.setdefault(label, []).append(measured[label])
            differences.setdefault(label, []).append(measured[label] - measured["no guard"])
            ratios.setdefault(label, []).append(measured[label] / measured["no guard"])
    return base, times, differences, ratios, reads


def _spread(values, scale, unit):
    quartiles = statistics.quantiles(values, n=4) if len(values) > 1 else values * 3
    return f"{statistics.median(values) * scale:+.{2 if unit == 'ms' else 1}f} {unit} " \
           f"({quartiles[0] * scale:+.{2 if unit == 'ms' else 1}f} .. {quartiles[2] * scale:+.{2 if unit == 'ms' else 1}f})"


def bench_model(name, makers, steps, rounds, labels):
    real, small = makers
    base, times, _, ratios, reads = paired(real, labels, steps, rounds)
    base_median = statistics.median(base)
    rows = [(name, "no guard", f"{base_median * 1000:.1f}", "-", "-")]
    own = {}
    if set(labels[1:]) & set(CALL_COUNT_DRIVEN):
        _, _, own, _, _ = paired(small, [label for label in CALL_COUNT_DRIVEN if label in labels], steps * 4, rounds)
    for label in labels[1:]:
        overhead = _spread([ratio - 1 for ratio in ratios[label]], 100, "%")
        own_cost = "-"
        if label in own:
            milliseconds = statistics.median(own[label]) * 1000
            own_cost = f"{_spread(own[label], 1000, 'ms')} = {milliseconds / (base_median * 1000) * 100:+.1f} %"
        elif "every step" in label:
            milliseconds = statistics.median(reads[label]) * 1000
            own_cost = (f"NaN/Inf tests: {_spread(reads[label], 1000, 'ms')} = "
                        f"{milliseconds / (base_median * 1000) * 100:+.1f} %")
        rows.append((name, label, f"{statistics.median(times[label]) * 1000:.1f}", overhead, own_cost))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6, help="training steps per timing")
    parser.add_argument("--rounds", type=int, default=5, help="timings per configuration (median)")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1: steadier)")
    parser.add_argument("--models", nargs="*", default=list(MODELS), help="subset of: " + ", ".join(MODELS))
    parser.add_argument("--configurations", default="",
                        help="only the configurations whose label contains this text (more rounds in the same time)")
    args = parser.parse_args(argv)
    labels = ["no guard"] + [label for label, _, _ in CONFIGURATIONS[1:] if args.configurations in label]
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s), {args.steps} steps x {args.rounds} rounds, "
          "CPU time per training step (forward + backward + SGD step)\n")
    print("| model | configuration | median CPU ms / step | overhead: median (quartiles) | "
          "guard's own time per step (quartiles) = % of the real step: tiny input; value rows: its NaN/Inf tests |")
    print("| --- | --- | ---: | ---: | ---: |")
    for name in args.models:
        for row in bench_model(name, MODELS[name], args.steps, args.rounds, labels):
            print("| " + " | ".join(row) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
