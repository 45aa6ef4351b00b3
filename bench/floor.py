"""What bounds torchlint's cold run: floors measured on the same files, in the same run as
torchlint and flake8.

    python bench/floor.py [--corpus training] [--tree PATH] [--repeat 3] [--results bench/FLOOR.md]

Every command is a process of its own, spawned from the corpus copy's root and measured
as bench/run.py measures (measure.py); each repetition runs them round-robin and the
figures are medians of wall time:

- **flake8**: plain flake8 (the venv of peers.py), and **torchlint cold** (`--no-cache`);
- **start-up**: `torchlint check --no-cache` of one empty file (imports, rules, config);
- **ast floor**: Python starting, then two forked workers (torchlint's default on two
  cores, largest files first, two files a task) that read each file, `ast.parse` it and
  walk its tree once: the least a linter of Python source does;
- **ast + LibCST floor**: the same, with LibCST imported before the fork and each worker
  also running LibCST's `parse_module` on the text torchlint's gates give it
  (`torchlint.engine.libcst_input`: the files some rule may fire in, without the
  definitions no rule needs). Those texts are computed beforehand, untimed.

From these: **LibCST's part** (ast + LibCST floor less the ast floor) and the
**plugin floor** (flake8 plus LibCST's part, over flake8: the flake8 plugin gets flake8's
tree but must still parse with LibCST). A cold-run target below a floor's ratio cannot be
met without parsing less. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import ast
import multiprocessing
import statistics
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import corpora
import peers
from measure import measure
from run import byte_compile_torchlint

CHECK = (sys.executable, "-m", "torchlint", "check", "--no-cache", "-q", "--exit-zero", "--output-format", "concise")
EMPTY = "_torchlint_bench_empty_.py"
WORKERS = 2
COLUMNS = ("flake8", "cold", "start-up", "ast floor", "ast + LibCST floor")
INTRO = """# What bounds torchlint's cold run

Produced by `python bench/floor.py` (see its docstring for what each floor runs); the
newest run is first. Wall seconds, medians.
"""


def libcst_texts(tree: Path, scratch: Path) -> List[Tuple[str, str]]:
    """(file, the file holding the text LibCST parses of it, or "") for every file
    torchlint discovers, largest first."""
    from torchlint.analysis.source_view import SourceView
    from torchlint.core.config import load_config
    from torchlint.core.source import DecodeError, decode_source
    from torchlint.engine import gated_rules, libcst_input, triggered_rules
    from torchlint.rule_api.registry import all_rules, option_defaults, rule_codes, select_rules
    from torchlint.run.discovery import discover

    config = load_config(None, tree, option_defaults(), rule_codes())
    rules = select_rules(all_rules(), config.select, config.extend_select, config.ignore)
    entries = []
    for number, (display, path) in enumerate(discover([str(tree)], config)):
        if path.suffix != ".py":
            continue
        parsed = ""
        try:
            text = decode_source(path.read_bytes()).text
        except DecodeError:
            continue
        view = SourceView(text, display)
        passing = gated_rules(view, config, triggered_rules(text, display, config, rules))
        if passing and view.syntax_error is None:
            source, elided = libcst_input(view, config, passing)
            target = scratch / f"{number}.py"
            target.write_text(source.text if elided is None else elided.text, encoding="utf-8")
            parsed = str(target)
        entries.append((path.stat().st_size, str(path), parsed))
    return [(path, parsed) for _, path, parsed in sorted(entries, reverse=True)]


def _read_and_walk(entry: Tuple[str, str, bool]) -> int:
    path, parsed, with_libcst = entry
    try:
        nodes = sum(1 for _ in ast.walk(ast.parse(Path(path).read_bytes())))
    except (SyntaxError, ValueError):
        return 0
    if with_libcst and parsed:
        import libcst

        libcst.parse_module(Path(parsed).read_text(encoding="utf-8"))
    return nodes


def worker_main(kind: str, listing: Path) -> int:
    """One floor run: the files of `listing` (tab-separated lines from `libcst_texts`)."""
    with_libcst = kind == "libcst"
    if with_libcst:
        import libcst  # noqa: F401  (before the fork, as torchlint loads it)
    entries = [(*line.split("\t"), with_libcst) for line in listing.read_text(encoding="utf-8").splitlines()]
    with multiprocessing.get_context("fork").Pool(WORKERS) as pool:
        sum(pool.imap_unordered(_read_and_walk, entries, chunksize=2))
    return 0


def commands(work: Path, listing: Path, flake8: Path) -> Dict[str, List[str]]:
    here = str(Path(__file__).resolve())
    return {
        "flake8": [str(flake8), "--exit-zero", "."],
        "cold": [*CHECK, "."],
        "start-up": [*CHECK, EMPTY],
        "ast floor": [sys.executable, here, "--worker", "ast", str(listing)],
        "ast + LibCST floor": [sys.executable, here, "--worker", "libcst", str(listing)],
    }


def floor_corpus(name: str, tree: Path, repeat: int, flake8: Path) -> Dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="torchlint-floor-") as scratch:
        scratch_path = Path(scratch)
        work = corpora.working_copy(tree, scratch_path)
        texts = scratch_path / "libcst-texts"
        texts.mkdir()
        entries = libcst_texts(work, texts)
        listing = scratch_path / "listing.txt"
        listing.write_text("".join(f"{path}\t{parsed}\n" for path, parsed in entries), encoding="utf-8")
        (work / EMPTY).write_text("", encoding="utf-8")
        argvs = commands(work, listing, flake8)
        walls: Dict[str, List[float]] = {key: [] for key in argvs}
        for _ in range(repeat):
            for key, argv in argvs.items():
                sample = measure(argv, work)
                if sample.exit_code != 0:
                    raise SystemExit(f"{name}: {key} exited {sample.exit_code}: {sample.stderr_tail}")
                walls[key].append(sample.wall)
        lines = sum(Path(path).read_bytes().count(b"\n") for path, _ in entries)
        parsed = sum(Path(text).read_text(encoding="utf-8").count("\n") for _, text in entries if text)
    figures = {key: statistics.median(values) for key, values in walls.items()}
    figures.update(files=len(entries), lines=lines, parsed_lines=parsed)
    return figures


def row(name: str, figures: Dict[str, float]) -> str:
    flake8 = figures["flake8"]
    libcst_part = figures["ast + LibCST floor"] - figures["ast floor"]
    cells = [
        name, f"{figures['files']:,}", f"{figures['lines']:,}", f"{figures['parsed_lines']:,}",
        *(f"{figures[key]:.3f}" for key in COLUMNS),
        f"{figures['cold'] / flake8:.2f}", f"{figures['start-up'] / flake8:.2f}",
        f"{figures['ast floor'] / flake8:.2f}", f"{figures['ast + LibCST floor'] / flake8:.2f}",
        f"{libcst_part:.3f}", f"{(flake8 + libcst_part) / flake8:.2f}",
    ]
    return "| " + " | ".join(cells) + " |"


HEADER = (
    "| package | files | lines | lines LibCST parses | flake8 s | cold s | start-up s | ast floor s "
    "| ast + LibCST floor s | cold ÷ flake8 | start-up ÷ flake8 | ast floor ÷ flake8 | ast + LibCST ÷ flake8 "
    "| LibCST's part s | plugin floor ÷ flake8 |"
)


def section(results: Dict[str, Dict[str, float]], argv: Sequence[str]) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    separator = "|" + "---|" * HEADER.count(" | ") + "---|"
    table = "\n".join([HEADER, separator, *(row(name, figures) for name, figures in results.items())])
    return f"## {stamp}\n\nCommand: `python bench/floor.py {' '.join(argv)}`\n\n{table}\n"


def prepend(path: Path, text: str) -> None:
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    start = old.find("\n## ")
    older = old[start + 1 :] if start >= 0 else ""
    path.write_text(INTRO + "\n" + text + ("\n" + older if older else ""), encoding="utf-8")


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", nargs="+", default=["training"], help="corpus names, or 'training'")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--results", type=Path, default=Path(__file__).with_name("FLOOR.md"))
    parser.add_argument("--cache", type=Path, default=corpora.DEFAULT_CACHE)
    parser.add_argument("--tree", type=Path, help="measure this tree instead of the corpora")
    parser.add_argument("--flake8", type=Path, help="the plain flake8 to run (default: the venv of peers.py)")
    parser.add_argument("--peers-dir", type=Path, default=peers.DEFAULT_HOME)
    parser.add_argument("--worker", nargs=2, metavar=("KIND", "LISTING"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker_main(args.worker[0], Path(args.worker[1]))
    if args.tree:
        trees = {args.tree.name: args.tree.resolve()}
    else:
        names = [n for name in args.corpus for n in (corpora.TRAINING if name == "training" else (name,))]
        trees = {f"{name} {corpora.PINNED[name]}": corpora.fetch(name, args.cache) for name in names}
    byte_compile_torchlint()
    flake8 = args.flake8 or peers.install(args.peers_dir)["flake8"]
    results = {}
    for label, tree in trees.items():
        results[label] = floor_corpus(label, tree, args.repeat, flake8)
        print(row(label, results[label]), flush=True)
    prepend(args.results, section(results, argv))
    print(f"results written to {args.results}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
