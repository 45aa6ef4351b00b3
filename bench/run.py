"""Benchmark torchlint against TorchFix, flake8 and ruff on pinned real code.

    python bench/run.py [--corpus timm transformers espnet training ...] [--repeat 3] [--no-peers]
                        [--corpus-dir DIR] [--tree PATH] [--results bench/RESULTS.md]

Each repetition runs every tool once, round-robin, on the same working copy of the
corpus; the figures are the medians. Results are printed and prepended to RESULTS.md.
It is a benchmark, not a test: CI does not run it (tests/test_bench.py runs it on
bench/tiny/ only).
"""

from __future__ import annotations

import argparse
import compileall
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

import corpora
import peers
import results
from measure import Sample, measure

BENCH = Path(__file__).resolve().parent
CACHE_DIRNAME = ".torchlint_cache"
TORCHLINT = (sys.executable, "-m", "torchlint", "check", "--exit-zero", "-q", "--output-format", "concise")
FLAKE8_WITH_PLUGIN = (sys.executable, "-m", "flake8", "--exit-zero")


@dataclass
class Tool:
    key: str
    label: str
    argv: Sequence[str]
    ours: bool = True  # a torchlint crash stops the benchmark; a peer's is recorded
    prepare: Optional[Callable[[int], None]] = None  # called with the repetition number
    restore: Optional[Callable[[], None]] = None


@dataclass
class CorpusRun:
    name: str
    version: str
    tree: Path
    prefilter: dict
    touched: str
    samples: Dict[str, List[Sample]] = field(default_factory=dict)
    labels: Dict[str, str] = field(default_factory=dict)
    commands: Dict[str, Sequence[str]] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)


def torchlint_tools(work: Path, touched: Path) -> List[Tool]:
    original = touched.read_bytes()

    def clear_cache(_: int) -> None:
        shutil.rmtree(work / CACHE_DIRNAME, ignore_errors=True)

    def touch(repetition: int) -> None:
        touched.write_bytes(original + f"\n# torchlint-bench: touched in repetition {repetition}\n".encode())

    def untouch() -> None:
        touched.write_bytes(original)

    def fill_cache(_: int) -> None:
        # the cache must hold the files as they are now: a repetition's touched run left
        # the touched version in it, and a warm run would then relint that file
        measure(TORCHLINT + (".",), work)

    return [
        Tool("cold", "torchlint cold (--no-cache)", [*TORCHLINT, "--no-cache", "."]),
        Tool("cold-cache", "torchlint cold, empty cache (fills it)", [*TORCHLINT, "."], prepare=clear_cache),
        Tool("warm", "torchlint warm (cache full, nothing changed)", [*TORCHLINT, "."], prepare=fill_cache),
        Tool("touched", "torchlint warm, one file touched", [*TORCHLINT, "."], prepare=touch, restore=untouch),
        Tool("jobs1", "torchlint --jobs 1 --no-cache", [*TORCHLINT, "--jobs", "1", "--no-cache", "."]),
    ]


def peer_tools(paths: Dict[str, Path]) -> List[Tool]:
    return [
        Tool("torchfix", "TorchFix", [str(paths["torchfix"]), "."], ours=False),
        Tool("flake8", "flake8 (defaults, no plugin)", [str(paths["flake8"]), "--exit-zero", "."], ours=False),
        Tool("flake8-tl", "flake8 + torchlint plugin (defaults + TL)",
             [*FLAKE8_WITH_PLUGIN, "--extend-select", "TL", "."]),
        Tool("flake8-select-tl", "flake8 --select TL", [*FLAKE8_WITH_PLUGIN, "--select", "TL", "."]),
        Tool("ruff", "ruff check --no-cache (defaults)",
             [str(paths["ruff"]), "check", "--no-cache", "--exit-zero", "."], ours=False),
    ]


OUR_KEYS = ("cold", "cold-cache", "warm", "touched", "jobs1")
BASELINE = "cold"
PEER_LABELS = {tool.key: tool.label for tool in peer_tools({k: Path(k) for k in ("torchfix", "flake8", "ruff")})}


def run_prefilter(tree: Path) -> dict:
    done = subprocess.run(
        [sys.executable, str(BENCH / "prefilter.py"), str(tree)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def check_sample(tool: Tool, sample: Sample) -> None:
    """Stop at once if torchlint crashed: figures from a failed run would be meaningless."""
    if tool.ours and (sample.exit_code != 0 or sample.timed_out):
        raise SystemExit(
            f"{tool.label} failed (exit {sample.exit_code}, timed out: {sample.timed_out}):\n"
            f"{' '.join(tool.argv)}\n{sample.stderr_tail}"
        )
    if sample.exit_code < 0 or sample.exit_code >= 2:
        print(f"warning: {tool.label} exited {sample.exit_code}: {sample.stderr_tail[-500:]}", file=sys.stderr)


def run_one(tool: Tool, work: Path, repetition: int, timeout: float) -> Sample:
    if tool.prepare:
        tool.prepare(repetition)
    try:
        return measure(tool.argv, work, timeout)
    finally:
        if tool.restore:
            tool.restore()


def benchmark(tools: Sequence[Tool], work: Path, repeat: int, timeout: float, run: CorpusRun) -> None:
    """Round-robin: every tool once per repetition, so drift hits them all alike."""
    if any(tool.key == "touched" for tool in tools):
        measure(TORCHLINT + (".",), work)  # fill the cache for the touched runs
    active = list(tools)
    for repetition in range(1, repeat + 1):
        for tool in list(active):
            sample = run_one(tool, work, repetition, timeout)
            check_sample(tool, sample)
            run.samples.setdefault(tool.key, []).append(sample)
            print(f"  [{repetition}/{repeat}] {tool.label}: {sample.wall:.2f} s", file=sys.stderr)
            if sample.timed_out:
                run.notes.append(f"{tool.label} was stopped after {timeout:.0f} s and not repeated.")
                active.remove(tool)


def bench_corpus(name: str, version: str, tree: Path, args, peer_paths) -> CorpusRun:
    with tempfile.TemporaryDirectory(prefix="torchlint-bench-") as scratch:
        work = corpora.working_copy(tree, Path(scratch))
        prefilter = run_prefilter(work)
        touched = prefilter["largest_parsed"] or prefilter["largest_file"]
        run = CorpusRun(name, version, tree, prefilter, touched)
        tools = torchlint_tools(work, work / touched)
        if peer_paths:
            tools += [tool for tool in peer_tools(peer_paths) if not skipped(tool.key, name, args.skip)]
        if args.tools:
            tools = [tool for tool in tools if tool.key in args.tools or tool.key == BASELINE]
        total = prefilter["total"]
        print(f"{name} {version}: {total['files']} files, {total['lines']} lines", file=sys.stderr)
        run.labels = {tool.key: tool.label for tool in tools}
        run.commands = {tool.key: tool.argv for tool in tools}
        run.notes += [f"Not run: {label}." for key, label in PEER_LABELS.items()
                      if peer_paths and skipped(key, name, args.skip)]
        benchmark(tools, work, args.repeat, args.timeout, run)
    return run


def skipped(key: str, corpus: str, skips: Sequence[str]) -> bool:
    return key in skips or f"{corpus}:{key}" in skips


def targets_for(args) -> List[tuple]:
    """(name, version, tree) for each corpus to benchmark."""
    if args.tree:
        return [(Path(tree).resolve().name, "local", Path(tree).resolve()) for tree in args.tree]
    names = [name for corpus in args.corpus for name in (corpora.TRAINING if corpus == "training" else (corpus,))]
    return [(name, corpora.PINNED[name], corpora.fetch(name, args.corpus_dir)) for name in names]


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", nargs="+", choices=[*sorted(corpora.PINNED), "training"], default=["timm"],
                        help="pinned corpora; `training` is every package of the training corpus")
    parser.add_argument("--tree", nargs="+", help="benchmark these directories as they are (no download)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-peers", action="store_true", help="time torchlint only")
    parser.add_argument("--skip", nargs="+", default=[], metavar="[CORPUS:]TOOL",
                        help=f"peer runs to leave out, e.g. transformers:torchfix; tools: {', '.join(PEER_LABELS)}")
    parser.add_argument("--tools", nargs="+", metavar="KEY", choices=[*OUR_KEYS, *PEER_LABELS],
                        help=f"only these runs (torchlint cold is always run: it is the baseline); "
                        f"keys: {', '.join([*OUR_KEYS, *PEER_LABELS])}")
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="seconds before a run is stopped (a peer's is then not repeated)")
    parser.add_argument("--corpus-dir", type=Path, default=corpora.DEFAULT_CACHE)
    parser.add_argument("--peers-dir", type=Path, default=peers.DEFAULT_HOME)
    parser.add_argument("--results", type=Path, default=BENCH / "RESULTS.md")
    parser.add_argument("--note", action="append", default=[], help="a line added to the report")
    return parser.parse_args(argv)


def byte_compile_torchlint() -> None:
    """Write torchlint's .pyc files, as installing a wheel does: an editable install run with
    PYTHONDONTWRITEBYTECODE=1 would otherwise compile every module on every run (0.2 s)."""
    import torchlint
    import torchlint.rules

    for package in (torchlint, torchlint.rules):
        compileall.compile_dir(str(Path(package.__file__).parent), quiet=1)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    byte_compile_torchlint()
    peer_paths = None if args.no_peers else peers.install(args.peers_dir)
    environment = results.environment(peer_paths)
    runs = [bench_corpus(name, version, tree, args, peer_paths) for name, version, tree in targets_for(args)]
    report = results.Report(runs, results.finish(environment), results.command_line(argv), args.note)
    print(results.text_table(report))
    results.prepend(args.results, results.markdown(report))
    print(f"results written to {args.results}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
