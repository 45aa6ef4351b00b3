"""Record what torchlint reports and rewrites, to prove a restructuring changed nothing.

    python tools/behaviour_snapshot.py --out before.json fixtures ~/corpora/timm ~/corpora/transformers
    ... (check out the new code, reinstall) ...
    python tools/behaviour_snapshot.py --out after.json fixtures ~/corpora/timm ~/corpora/transformers
    python tools/behaviour_snapshot.py --compare before.json after.json

For each directory (copied to a temporary one first, so nothing is written where it lives):
every finding of every rule (`--select ALL`, no cache) as JSON with its message and fix
edits, and the unified diffs of `--fix` and of `--fix --unsafe-fixes`. Then every rule's
VALID and INVALID examples, run in-process through the engine with the project pass, as
the rule-example tests run them. The torchlint measured is the one this interpreter imports.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Dict, List


SCRATCH = re.compile(r'/[^"\s]*?/tl-snapshot-[^/"]+/')


def _torchlint(arguments: List[str], cwd: Path) -> str:
    command = [sys.executable, "-m", "torchlint", *arguments]
    completed = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if completed.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} in {cwd}: exit {completed.returncode}\n{completed.stderr}")
    return completed.stdout


def directory_snapshot(source: Path) -> Dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="tl-snapshot-") as scratch:
        copy = Path(scratch) / source.name
        shutil.copytree(source, copy, symlinks=True)
        common = ["check", "--no-cache", "--select", "ALL", "--exit-zero", "."]
        findings = json.loads(_torchlint([*common, "--output-format", "json"], copy) or "[]")
        for finding in findings:
            finding.pop("url", None)
        findings.sort(key=lambda f: (f["filename"], f["location"]["row"], f["location"]["column"], f["code"], f["message"]))
        return {
            "findings": findings,
            "fix_diff": _torchlint([*common, "--fix", "--diff"], copy),
            "unsafe_fix_diff": _torchlint([*common, "--fix", "--unsafe-fixes", "--diff"], copy),
        }


def _first(*names: str):
    """The first of these modules that imports: the packaged layout, else the flat one of
    older commits (a snapshot of old code must run too)."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError(names)


def examples_snapshot() -> Dict[str, object]:
    registry = _first("torchlint.rule_api.registry", "torchlint.registry")
    engine = _first("torchlint.engine", "torchlint.engine")
    config_module = _first("torchlint.core.config", "torchlint.config")
    recorded: Dict[str, object] = {}
    for rule in registry.all_rules():
        cases = [("valid", text, ()) for text in rule.VALID]
        cases += [("invalid", example.code, example.options) for example in rule.INVALID]
        for number, (kind, text, options) in enumerate(cases):
            config = config_module.Config()
            if options:
                config = replace(config, rule_options=((rule.name, tuple(options)),))
            result = engine.lint_text(text, "example.py", config, [rule])
            diagnostics = list(result.diagnostics)
            if hasattr(rule, "check_project"):  # before torchlint.index
                if rule.project_rule and rule.code in result.facts:
                    diagnostics += rule.check_project({"example.py": result.facts[rule.code]}, config)
            elif result.facts is not None:
                resolver = importlib.import_module("torchlint.index.resolver")
                diagnostics += resolver.project_findings({"example.py": result.facts}, [rule], config)
            recorded[f"{rule.code}/{kind}/{number}"] = [diagnostic.to_json() for diagnostic in diagnostics]
    return recorded


def _load(path: str) -> Dict[str, object]:
    """A snapshot with the scratch copies' names taken out of file names and diffs."""
    snapshot = json.loads(SCRATCH.sub("", Path(path).read_text()))
    return {Path(key).name: value for key, value in snapshot.items()}  # the same tree checked out elsewhere


def compare(before_path: str, after_path: str) -> int:
    before, after = _load(before_path), _load(after_path)
    differences = 0
    for key in sorted(set(before) | set(after)):
        if before.get(key) != after.get(key):
            differences += 1
            print(f"differs: {key}")
            old, new = before.get(key) or {}, after.get(key) or {}
            if isinstance(old, dict) and isinstance(new, dict):
                for part in sorted(set(old) | set(new)):
                    if old.get(part) != new.get(part):
                        print(f"  {part}")
    counts = {key: len(value["findings"]) for key, value in after.items() if key != "examples"}
    print(f"{differences} differences; findings per directory: {counts}; examples: {len(after.get('examples', {}))}")
    return 1 if differences else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directories", nargs="*", type=Path)
    parser.add_argument("--out")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    arguments = parser.parse_args()
    if arguments.compare:
        return compare(*arguments.compare)
    if not arguments.out:
        parser.error("--out is required to record a snapshot")
    snapshot: Dict[str, object] = {"examples": examples_snapshot()}
    for directory in arguments.directories:
        snapshot[str(directory.resolve())] = directory_snapshot(directory.resolve())
        print(f"{directory}: {len(snapshot[str(directory.resolve())]['findings'])} findings", file=sys.stderr)
    Path(arguments.out).write_text(json.dumps(snapshot, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
