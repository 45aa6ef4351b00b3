"""The baseline: findings a project has accepted for now, so that only new ones fail.

A filter between the project pass and the reporters. Each finding is identified by the
fingerprint SARIF uses (rule, path, stripped line text; no row), so that line shifts and
unrelated edits keep it; identical findings in a file are counted, not merged.

The file is JSON, sorted and stable so that a re-written baseline diffs cleanly:

    {"version": 1, "findings": [{"path": "src/train.py", "code": "TL001",
      "fingerprint": "3f1c...", "count": 1, "message": "..."}, ...]}

Paths are relative to the project root (the configuration file's directory).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from torchlint.core.bounded_read import ReadRefused, loads_json, read_bounded
from torchlint.report.fingerprint import FingerprintKeys, line_hash
from torchlint.core.config import Config
from torchlint.core.diagnostics import Diagnostic
from torchlint.run.cache_ground import Directory

FORMAT_VERSION = 1
MAX_BYTES = 64 * 1024 * 1024  # about 300,000 entries

EntryKey = Tuple[str, str, str]  # path, code, fingerprint


class BaselineError(Exception):
    """A baseline file that cannot be read, parsed or written; the message is one line."""


@dataclass(frozen=True)
class Filtered:
    """What the baseline let through, and what it hid."""

    diagnostics: List[Diagnostic]
    hidden: int
    stale: int  # baseline entries (counted with multiplicity) that no longer occur

    def summary(self, baseline_file: str) -> str:
        """One line for the end of the report, or "" when the baseline changed nothing."""
        parts = []
        if self.hidden:
            parts.append(f"{_plural(self.hidden, 'finding')} hidden by the baseline")
        if self.stale:
            entries = "baseline entry no longer occurs" if self.stale == 1 else "baseline entries no longer occur"
            parts.append(f"{self.stale} {entries} (run --write-baseline {baseline_file} to prune)")
        return "; ".join(parts) + "." if parts else ""


class Baseline:
    """The accepted findings, counted per (path, code, fingerprint)."""

    def __init__(self, counts: Mapping[EntryKey, int]):
        self.counts = Counter(counts)

    def filter(
        self,
        diagnostics: Sequence[Diagnostic],
        sources: Mapping[str, str],
        root: Path,
        checked: Iterable[str],
    ) -> Filtered:
        """Drop the findings the baseline holds (as many of each as it counts).

        `checked` names the files this run linted: an entry of a file that was not
        linted is not stale, it was just not looked at (pre-commit passes a few files)."""
        keys = FingerprintKeys(sources, root)
        remaining = Counter(self.counts)
        kept: List[Diagnostic] = []
        for diagnostic in diagnostics:
            entry = _entry_key(keys, diagnostic)
            if remaining[entry] > 0:
                remaining[entry] -= 1
            else:
                kept.append(diagnostic)
        looked_at = {keys.relative_path(name) for name in checked}
        stale = sum(
            count
            for (path, _, _), count in remaining.items()
            if count > 0 and (path in looked_at or not (root / path).exists())
        )
        return Filtered(kept, len(diagnostics) - len(kept), stale)


def _entry_key(keys: FingerprintKeys, diagnostic: Diagnostic) -> EntryKey:
    code, path, text = keys.key(diagnostic)
    return (path, code, line_hash((code, path, text)))


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def load(path: Path, within: Optional[Path] = None) -> Baseline:
    """Read a baseline file; BaselineError (one line) if it is missing or malformed, or
    is a symbolic link out of `within` (the project, for a baseline its config names)."""
    try:
        data = loads_json(read_bounded(path, MAX_BYTES, within=within).decode("utf-8"))
    except OSError as error:
        raise BaselineError(f"{path}: cannot read the baseline: {error.strerror or error}") from None
    except ReadRefused as error:
        raise BaselineError(f"{path}: cannot read the baseline: {error}") from None
    except ValueError as error:  # not UTF-8, invalid or too deeply nested JSON
        raise BaselineError(f"{path}: not a torchlint baseline (invalid JSON: {error})") from None
    if not isinstance(data, dict) or "version" not in data or "findings" not in data:
        raise BaselineError(f"{path}: not a torchlint baseline (expected an object with `version` and `findings`)")
    if data["version"] != FORMAT_VERSION:
        raise BaselineError(
            f"{path}: baseline version {data['version']!r} is not supported (this torchlint reads {FORMAT_VERSION})"
        )
    if not isinstance(data["findings"], list):
        raise BaselineError(f"{path}: not a torchlint baseline (`findings` must be a list)")
    counts: Counter = Counter()
    for index, item in enumerate(data["findings"]):
        counts[_parse_entry(path, index, item)] += item["count"]
    return Baseline(counts)


_LOADED: Dict[Tuple[str, int, int], Baseline] = {}


def configured(config: Config) -> Optional[Baseline]:
    """The baseline `config` names (None without one), read again only when the file
    changes: the flake8 plugin and the language server ask for every file and keystroke.
    BaselineError as `load`."""
    if config.baseline is None:
        return None
    try:
        info = os.stat(config.baseline)
        version = (str(config.baseline), info.st_mtime_ns, info.st_size)
    except OSError:
        version = None
    if version is not None and version in _LOADED:
        return _LOADED[version]
    baseline = load(config.baseline, within=config.root)
    if version is not None:
        _LOADED.clear()  # one project's baseline at a time is what an editor needs
        _LOADED[version] = baseline
    return baseline


def without_baselined(diagnostics: Sequence[Diagnostic], sources: Mapping[str, str], config: Config) -> List[Diagnostic]:
    """The findings of these files that the configured baseline does not hold, for a tool
    that shows a file at a time (the flake8 plugin, the language server); `sources`: the
    text of each file named. BaselineError if the baseline cannot be read."""
    baseline = configured(config)
    if baseline is None or not diagnostics:
        return list(diagnostics)
    return baseline.filter(diagnostics, sources, config.root, ()).diagnostics


def _parse_entry(path: Path, index: int, item) -> EntryKey:
    fields = ("path", "code", "fingerprint")
    valid = (
        isinstance(item, dict)
        and all(isinstance(item.get(name), str) for name in fields)
        and type(item.get("count")) is int
        and item["count"] > 0
    )
    if not valid:
        raise BaselineError(
            f"{path}: finding {index + 1} of the baseline needs string `path`, `code`, `fingerprint` "
            "and a positive integer `count`"
        )
    return (item["path"], item["code"], item["fingerprint"])


def write(path: Path, diagnostics: Sequence[Diagnostic], sources: Mapping[str, str], root: Path) -> int:
    """Record `diagnostics` in `path`; returns how many were recorded."""
    keys = FingerprintKeys(sources, root)
    counts: Counter = Counter()
    messages: Dict[EntryKey, str] = {}
    for diagnostic in diagnostics:
        entry = _entry_key(keys, diagnostic)
        counts[entry] += 1
        messages.setdefault(entry, diagnostic.message)
    findings = [
        {"path": p, "code": c, "fingerprint": f, "count": counts[(p, c, f)], "message": messages[(p, c, f)]}
        for p, c, f in sorted(counts)
    ]
    text = json.dumps({"version": FORMAT_VERSION, "findings": findings}, indent=2, ensure_ascii=False) + "\n"
    try:
        # temp file + rename inside the opened directory: a link at `path` (committed, or
        # dangling) is replaced, never written through
        directory = Directory.at(str(path.parent))
        try:
            directory.write(path.name, text.encode("utf-8"), durable=True)
        finally:
            directory.close()
    except OSError as error:
        raise BaselineError(f"{path}: cannot write the baseline: {error.strerror or error}") from None
    return len(diagnostics)
