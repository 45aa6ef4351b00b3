"""Turn measured samples into the report: medians, ratios, targets, machine and versions."""

from __future__ import annotations

import hashlib
import os
import platform
import shlex
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import peers
from corpora import TRAINING

MIB = 1024 * 1024
REPO = Path(__file__).resolve().parent.parent
BASELINE = "cold"

INTRO = """# torchlint benchmark results

Produced by `python bench/run.py` (see its `--help`); the newest run is first, older runs
stay below so that regressions show. How it measures:

- Every tool runs on the same throw-away copy of a pinned corpus (a release of a real
  package, fetched with `pip download --no-deps`), from the copy's root, output sent to
  /dev/null. Each repetition runs every tool once, round-robin; figures are medians.
- **wall**: spawn to exit. **CPU**: user + system of the process and every descendant it
  reaped (`os.wait4`), so pool workers are included. **RSS/process**: the largest peak
  RSS of any single process of the run (`ru_maxrss` from `os.wait4`; the kernel keeps
  the maximum over reaped descendants). **RSS tree**: the summed RSS of the whole
  process tree, sampled every 20 ms from /proc; it counts pages shared between forked
  workers once per process and can miss peaks shorter than 20 ms.
- **files/s, lines/s**: the files torchlint discovers (`*.py`, `*.pyi`) and their lines,
  over the wall time, for every tool alike.
- **× cold**: the figure divided by torchlint's cold run (`--no-cache`).
- **torchlint warm**: the cache (`.torchlint_cache/`) was filled by the previous run and
  nothing changed. **one file touched**: a comment line appended to one file (the largest
  file that reaches LibCST) before the run, removed after it.
- **Prefilter**: computed in-process with torchlint's own `triggered_rules` (trigger
  substrings) and each rule's `sites` (stdlib `ast`): the files and lines that never reach
  a LibCST parse.
- **flake8 plugin cost**: plain flake8 runs in a venv with only flake8 (the same flake8,
  pyflakes, pycodestyle and mccabe versions); "flake8 + torchlint plugin" is the same
  flake8 in the environment where torchlint is installed, so the difference is the
  plugin's whole cost (ignoring TL codes would not stop the plugin from running).
"""


@dataclass
class Figures:
    wall: float
    cpu: float
    rss_process: float  # MiB
    rss_tree: float  # MiB
    exit_codes: str
    runs: int

    @property
    def parallelism(self) -> float:
        return self.cpu / self.wall if self.wall else 0.0


@dataclass
class Report:
    runs: list
    environment: Dict[str, str]
    command: str
    notes: Sequence[str] = ()
    when: datetime = field(default_factory=lambda: datetime.now(timezone.utc))


def figures(samples) -> Figures:
    def median(values):
        return statistics.median(values)

    return Figures(
        wall=median([s.wall for s in samples]),
        cpu=median([s.cpu for s in samples]),
        rss_process=median([s.rss_process for s in samples]) / MIB,
        rss_tree=median([s.rss_tree for s in samples]) / MIB,
        exit_codes=",".join(sorted({str(s.exit_code) if not s.timed_out else "timeout" for s in samples})),
        runs=len(samples),
    )


def all_figures(run) -> Dict[str, Figures]:
    return {key: figures(samples) for key, samples in run.samples.items()}


# ---- the machine and the versions ----------------------------------------------------

def _first(path: str, prefix: str) -> str:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(prefix):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def _git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
    return done.stdout.strip()


def torchlint_revision() -> str:
    dirty = _git("status", "--porcelain", "--untracked-files=no", "--", "torchlint", "rules")
    untracked = _git("status", "--porcelain", "--", "rules")
    state = " + uncommitted changes in torchlint/ or rules/" if dirty or untracked else ""
    return f"{_git('rev-parse', '--short=12', 'HEAD')}{state}"


def _load(values: Sequence[float]) -> str:
    return " / ".join(f"{value:.2f}" for value in values)


def code_fingerprint() -> str:
    """A hash of the torchlint code that runs (the editable install reads the working tree,
    which other people may be editing while the benchmark runs)."""
    digest = hashlib.sha1()
    for path in sorted([*REPO.glob("torchlint/**/*.py"), *REPO.glob("rules/*.py")]):
        digest.update(path.relative_to(REPO).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def environment(peer_paths: Optional[Dict[str, Path]]) -> Dict[str, str]:
    """The machine, its load (other work on it inflates wall times) and the versions,
    taken before the runs (the commit is the code that was timed)."""
    memory_kib = int(_first("/proc/meminfo", "MemTotal").split()[0] or 0)
    env = {
        "CPU": f"{_first('/proc/cpuinfo', 'model name')}, {os.cpu_count()} cores "
        f"({len(os.sched_getaffinity(0))} usable)",
        "RAM": f"{memory_kib / MIB:.1f} GiB",
        "OS": platform.platform(),
        "load average (1/5/15 min) at the start": _load(os.getloadavg()),
        "Python": f"{platform.python_version()} ({sys.executable})",
        "torchlint": f"{metadata.version('torchlint')}, commit {torchlint_revision()}, "
        f"code fingerprint {code_fingerprint()}",
        "libcst (torchlint's)": metadata.version("libcst"),
        "flake8 (with torchlint)": peers.output_of([sys.executable, "-m", "flake8", "--version"]),
    }
    if peer_paths:
        env.update(peers.versions(peer_paths))
    return env


def finish(environment_at_start: Dict[str, str]) -> Dict[str, str]:
    finished = {**environment_at_start, "load average (1/5/15 min) at the end": _load(os.getloadavg())}
    if code_fingerprint() not in environment_at_start["torchlint"]:
        finished["warning"] = (f"torchlint's code changed during the run (fingerprint now {code_fingerprint()}): "
                               "runs before and after the change timed different code")
    return finished


def command_line(argv: Optional[Sequence[str]]) -> str:
    arguments = list(sys.argv[1:] if argv is None else argv)
    return shlex.join(["python", "bench/run.py", *arguments])


# ---- targets ---------------------------------------------------------------------------

def _verdict(ok: Optional[bool]) -> str:
    return "n/a" if ok is None else ("met" if ok else "**missed**")


def targets(run, table: Dict[str, Figures]) -> List[tuple]:
    """(target, measured, verdict) rows; n/a where the run lacks the figures."""
    cold = table[BASELINE]
    rows = []

    def add(name: str, measured: str, ok: Optional[bool]) -> None:
        rows.append((name, measured, _verdict(ok)))

    def peer(key: str) -> Optional[Figures]:
        found = table.get(key)
        return found if found and found.exit_codes != "timeout" else None

    torchfix, flake8, ruff, plugin = peer("torchfix"), peer("flake8"), peer("ruff"), peer("flake8-tl")
    add("cold ≤ 1/20 of TorchFix (wall)",
        f"{cold.wall / torchfix.wall:.4f} of TorchFix" if torchfix else "TorchFix not run",
        cold.wall * 20 <= torchfix.wall if torchfix else None)
    add("cold below plain flake8 (wall)",
        f"{cold.wall / flake8.wall:.3f} of flake8" if flake8 else "flake8 not run",
        cold.wall < flake8.wall if flake8 else None)
    warm = table.get("warm")
    add("warm (unchanged) < 1 s", f"{warm.wall:.3f} s" if warm else "warm not run",
        warm.wall < 1.0 if warm else None)
    add("warm ≤ 5 % of cold", f"{100 * warm.wall / cold.wall:.1f} %" if warm else "warm not run",
        warm.wall <= 0.05 * cold.wall if warm else None)
    add("warm within 3× of `ruff check --no-cache`",
        f"{warm.wall / ruff.wall:.2f}× ruff" if warm and ruff else "warm or ruff not run",
        warm.wall <= 3 * ruff.wall if warm and ruff else None)
    files = run.prefilter["total"]["files"]
    add("CPU/wall ≥ 1.8 (cold, 100+ files)", f"{cold.parallelism:.2f} on {files} files",
        cold.parallelism >= 1.8 if files >= 100 else None)
    ours = [table[key] for key in ("cold", "cold-cache", "warm", "touched", "jobs1") if key in table]
    biggest = max(f.rss_process for f in ours)
    add("peak RSS < 250 MiB per process (every torchlint run)", f"{biggest:.0f} MiB", biggest < 250)
    add("peak RSS of the cold run's tree < 500 MB (transformers)",
        f"{cold.rss_tree * MIB / 1e6:.0f} MB",
        cold.rss_tree * MIB < 500e6 if run.name == "transformers" else None)
    add("flake8 plugin adds ≤ 50 % to flake8 (wall)",
        f"+{100 * (plugin.wall / flake8.wall - 1):.0f} %" if plugin and flake8 else "flake8 not run",
        plugin.wall <= 1.5 * flake8.wall if plugin and flake8 else None)
    training = run.name in TRAINING
    add("training corpus: cold ≤ 0.5× plain flake8 (wall)",
        f"{cold.wall / flake8.wall:.3f}× flake8" if flake8 else "flake8 not run",
        cold.wall <= 0.5 * flake8.wall if flake8 and training else None)
    add("training corpus: flake8 plugin ≤ 1.25× flake8 (wall)",
        f"{plugin.wall / flake8.wall:.2f}× flake8" if plugin and flake8 else "flake8 not run",
        plugin.wall <= 1.25 * flake8.wall if plugin and flake8 and training else None)
    return rows


# ---- rendering -------------------------------------------------------------------------

COLUMNS = ("tool", "wall s", "CPU s", "CPU/wall", "RSS/process MiB", "RSS tree MiB",
           "files/s", "lines/s", "wall × cold", "CPU × cold", "RSS × cold", "exit", "runs")


def figure_rows(run, table: Dict[str, Figures]) -> List[tuple]:
    cold = table[BASELINE]
    files, lines = run.prefilter["total"]["files"], run.prefilter["total"]["lines"]
    rows = []
    for key, f in table.items():
        rows.append((
            run.labels[key], f"{f.wall:.3f}", f"{f.cpu:.3f}", f"{f.parallelism:.2f}",
            f"{f.rss_process:.0f}", f"{f.rss_tree:.0f}",
            f"{files / f.wall:,.0f}", f"{lines / f.wall:,.0f}",
            f"{f.wall / cold.wall:.2f}", f"{f.cpu / cold.cpu:.2f}", f"{f.rss_process / cold.rss_process:.2f}",
            f.exit_codes, str(f.runs),
        ))
    return rows


def prefilter_rows(prefilter: dict) -> List[tuple]:
    total = prefilter["total"]

    def share(stage: dict, unit: str) -> str:
        return f"{100 * (1 - stage[unit] / total[unit]):.1f} %" if total[unit] else "n/a"

    return [
        ("skipped by trigger substrings alone", share(prefilter["past_substrings"], "files"),
         share(prefilter["past_substrings"], "lines"), f"{prefilter['seconds_substrings']:.3f}"),
        ("skipped by substrings + gates (never parsed by LibCST)", share(prefilter["past_gates"], "files"),
         share(prefilter["past_gates"], "lines"), f"{prefilter['seconds_gates']:.3f}"),
    ]


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def lines_per_second_rows(report: Report) -> List[tuple]:
    rows = []
    for run in report.runs:
        cold = all_figures(run)[BASELINE]
        total = run.prefilter["total"]
        rows.append((f"{run.name} {run.version}", f"{total['files']:,}", f"{total['lines']:,}",
                     f"{cold.wall:.2f}", f"{total['lines'] / cold.wall:,.0f}",
                     f"{cold.rss_process:.0f}", f"{cold.rss_tree:.0f}"))
    return rows


def corpus_section(run) -> str:
    table = all_figures(run)
    total = run.prefilter["total"]
    parts = [
        f"### {run.name} {run.version}: {total['files']:,} files, {total['lines']:,} lines",
        f"Rules selected: {', '.join(run.prefilter['rules'])}. Touched file: `{run.touched}`.",
        markdown_table(COLUMNS, figure_rows(run, table)),
        "Prefilter (in-process; seconds are the summed time of that stage over all files, one process):",
        markdown_table(("stage", "files", "lines", "seconds"), prefilter_rows(run.prefilter)),
        "Targets:",
        markdown_table(("target", "measured", "verdict"), targets(run, table)),
        "Commands (run from the corpus copy's root):\n\n" + "\n".join(
            f"- {run.labels[key]}: `{shlex.join(_short(argv))}`" for key, argv in run.commands.items()),
    ]
    if run.notes:
        parts.append("Notes:\n\n" + "\n".join(f"- {note}" for note in run.notes))
    return "\n\n".join(parts)


def _short(argv: Sequence[str]) -> List[str]:
    """Commands with the interpreter and venv paths shortened to their last parts."""
    return [Path(arg).name if "/" in arg else arg for arg in argv]


def markdown(report: Report) -> str:
    stamp = report.when.strftime("%Y-%m-%d %H:%M UTC")
    names = ", ".join(f"{run.name} {run.version}" for run in report.runs)
    parts = [
        f"## {stamp}: {names}",
        f"Command: `{report.command}`",
        "\n".join(f"- {key}: {value}" for key, value in report.environment.items()),
    ]
    parts += [f"> {note}" for note in report.notes]
    parts += [corpus_section(run) for run in report.runs]
    parts.append("Cold lines/s by corpus:\n\n" + markdown_table(
        ("corpus", "files", "lines", "cold wall s", "cold lines/s", "RSS/process MiB", "RSS tree MiB"),
        lines_per_second_rows(report)))
    return "\n\n".join(parts) + "\n"


def text_table(report: Report) -> str:
    out = []
    for run in report.runs:
        table = all_figures(run)
        out.append(f"{run.name} {run.version}")
        header = ("tool", "wall s", "CPU s", "CPU/wall", "RSS MiB", "lines/s", "wall×cold")
        rows = [(r[0], r[1], r[2], r[3], r[4], r[7], r[8]) for r in figure_rows(run, table)]
        widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
        for row in (header, *rows):
            out.append("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)))
        out += [f"  {name}: {measured} ({verdict})" for name, measured, verdict in targets(run, table)]
    return "\n".join(out)


def prepend(path: Path, section: str) -> None:
    """Write INTRO, then the new section, then every older section already in the file."""
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    start = old.find("\n## ")
    older = old[start + 1:] if start >= 0 else ""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(INTRO + "\n" + section + ("\n" + older if older else ""), encoding="utf-8")
