"""Load the signature knowledge base and match logs against it."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Dict, List, Mapping, Optional, Tuple, TypeVar

from torchlint.explain.code_families import all_codes, apply_families, code_table, load_families
from torchlint.explain.evidence import FEATURE_NAMES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

KNOWLEDGE_FILE = "signatures.toml"
_TEXT_FIELDS = ("id", "title", "regex", "root_cause", "docs")
_LIST_FIELDS = ("anchors", "workarounds", "dead_ends", "rules", "doctor_checks", "sources")
_OPTIONAL_LIST_FIELDS = ("secondary_to", "evidence", "unless")
_CAUSE_LIST_FIELDS = ("when", "unless", "requires", "workarounds")
EVIDENCE_KINDS = ("kernels", "driver", "visible-devices", "wsl", "loader")  # the diagnoses of explain/reasoning.py
# A signature's regex runs only near its anchors (literal strings, found with str.find), in a
# window this wide on each side, at no more than MAX_ANCHOR_HITS places: the cost of a
# signature is bounded however often its anchor repeats in a huge log.
WINDOW = 8000
MAX_ANCHOR_HITS = 16
CONDENSE_ABOVE = 4 << 20


@dataclass(frozen=True)
class Cause:
    """One of several causes an error can have; the log's evidence features rank them."""

    id: str
    text: str
    when: Tuple[str, ...] = ()  # evidence features (explain/evidence.py FEATURES) that support it
    unless: Tuple[str, ...] = ()  # features that rule it out
    requires: Tuple[str, ...] = ()  # features without which it is not a candidate
    workarounds: Tuple[str, ...] = ()  # tried before the signature's own
    gpu: bool = True  # False: when it leads, the log shows no GPU problem (a model on the CPU)


@dataclass(frozen=True)
class Signature:
    id: str
    title: str
    pattern: "re.Pattern[str]"
    anchors: Tuple[str, ...]
    specificity: int
    asynchronous: bool
    root_cause: str
    workarounds: Tuple[str, ...]
    dead_ends: Tuple[str, ...]
    rules: Tuple[str, ...]
    doctor_checks: Tuple[str, ...]
    docs: str
    sources: Tuple[str, ...]
    # ids of signatures that, when they also match, are the cause and this one a consequence
    secondary_to: Tuple[str, ...] = ()
    # evidence features with which a match is not the log's failure (JAX's backend warning in a torch program)
    unless: Tuple[str, ...] = ()
    # which environment diagnoses can explain this error (explain/reasoning.py KINDS)
    evidence: Tuple[str, ...] = ()
    # the causes this error can have, in the order to assume when the log shows nothing more
    causes: Tuple[Cause, ...] = ()
    # false for errors that say nothing about a GPU (a shape mismatch, a removed API)
    gpu: bool = True


@dataclass(frozen=True)
class Framework:
    """A framework a log can come from: the evidence feature that names it in a log, and the
    pattern that names it in a piece of advice (its API, its variables, its install commands).
    A printer shared by several frameworks (TensorFlow's and XLA's stream_executor) has no advice
    pattern: its logs keep only advice that names no framework."""

    name: str
    feature: str
    advice: "Optional[re.Pattern[str]]"


@dataclass(frozen=True)
class KnowledgeBase:
    signatures: Tuple[Signature, ...]
    rule_names: Mapping[str, str] = field(default_factory=dict)
    asynchronous_note: str = ""
    frameworks: Tuple[Framework, ...] = ()

    def fits(self, advice: str, features: "frozenset[str] | set[str]") -> bool:
        """False for advice that names only frameworks the log does not name (torch's `pip install
        nvidia-cudnn-cu12==...` for a TensorFlow log). A log that names no framework keeps only the
        advice that names none: which framework printed it is unknown, and another's advice misleads."""
        in_log = {framework.name for framework in self.frameworks if framework.feature in features}
        named = {framework.name for framework in self.frameworks
                 if framework.advice is not None and framework.advice.search(advice)}
        return not named or bool(named & in_log)


@dataclass(frozen=True)
class Match:
    signature: Signature
    offset: int  # where in the log the match starts
    excerpt: str  # the log line where the match starts, trimmed
    line: int  # 1-based line of the log where the match starts


class KnowledgeError(ValueError):
    """The knowledge base file is malformed (a packaging bug, caught by the tests)."""


@lru_cache(maxsize=1)
def load_knowledge() -> KnowledgeBase:
    """The knowledge base shipped with torchlint: signatures.toml with the code families applied."""
    data = tomllib.loads(resources.files("torchlint.explain").joinpath(KNOWLEDGE_FILE).read_text("utf-8"))
    return parse_knowledge(apply_families(data, load_families(), all_codes(code_table())))


def parse_knowledge(data: Mapping[str, Any]) -> KnowledgeBase:
    """Validate and compile the TOML document of a knowledge base."""
    signatures = []
    seen = set()
    for index, entry in enumerate(data.get("signature", [])):
        where = f"signature #{index + 1} ({entry.get('id', '?')})"
        for key in _TEXT_FIELDS:
            if not isinstance(entry.get(key), str):
                raise KnowledgeError(f"{where}: `{key}` must be a string")
        for key in _LIST_FIELDS:
            if not isinstance(entry.get(key), list) or not all(isinstance(v, str) for v in entry[key]):
                raise KnowledgeError(f"{where}: `{key}` must be a list of strings")
        for key in _OPTIONAL_LIST_FIELDS:
            if not isinstance(entry.get(key, []), list) or not all(isinstance(v, str) for v in entry.get(key, [])):
                raise KnowledgeError(f"{where}: `{key}` must be a list of strings")
        if not set(entry.get("evidence", [])) <= set(EVIDENCE_KINDS):
            raise KnowledgeError(f"{where}: `evidence` entries must be among {', '.join(EVIDENCE_KINDS)}")
        if not entry["anchors"] or not all(entry["anchors"]):
            raise KnowledgeError(f"{where}: `anchors` needs at least one non-empty literal")
        if not isinstance(entry.get("specificity"), int) or not isinstance(entry.get("asynchronous"), bool):
            raise KnowledgeError(f"{where}: needs integer `specificity` and boolean `asynchronous`")
        if entry["id"] in seen:
            raise KnowledgeError(f"{where}: duplicate id")
        seen.add(entry["id"])
        try:
            pattern = re.compile(entry["regex"], re.MULTILINE)
        except re.error as error:
            raise KnowledgeError(f"{where}: bad regex: {error}") from None
        causes = tuple(_cause(where, cause) for cause in entry.get("cause", []))
        if not isinstance(entry.get("gpu", True), bool):
            raise KnowledgeError(f"{where}: `gpu` must be a boolean")
        signatures.append(Signature(
            id=entry["id"], title=entry["title"], pattern=pattern, anchors=tuple(entry["anchors"]),
            secondary_to=tuple(entry.get("secondary_to", [])), evidence=tuple(entry.get("evidence", [])),
            unless=tuple(entry.get("unless", [])),
            specificity=entry["specificity"],
            asynchronous=entry["asynchronous"], root_cause=entry["root_cause"],
            workarounds=tuple(entry["workarounds"]), dead_ends=tuple(entry["dead_ends"]),
            rules=tuple(entry["rules"]), doctor_checks=tuple(entry["doctor_checks"]),
            docs=entry["docs"], sources=tuple(entry["sources"]), causes=causes, gpu=entry.get("gpu", True),
        ))
    rule_names: Dict[str, str] = dict(data.get("rules", {}))
    frameworks = tuple(_framework(entry) for entry in data.get("framework", []))
    return KnowledgeBase(tuple(signatures), rule_names, data.get("asynchronous_note", ""), frameworks)


def _framework(entry: Mapping[str, Any]) -> Framework:
    if not all(isinstance(entry.get(key), str) for key in ("name", "feature", "advice")):
        raise KnowledgeError("each [[framework]] needs string `name`, `feature` and `advice`")
    if entry["feature"] not in FEATURE_NAMES:
        raise KnowledgeError(f"framework {entry['name']}: unknown evidence feature {entry['feature']!r}")
    try:
        return Framework(entry["name"], entry["feature"], re.compile(entry["advice"]) if entry["advice"] else None)
    except re.error as error:
        raise KnowledgeError(f"framework {entry['name']}: bad advice regex: {error}") from None


def _cause(where: str, entry: Mapping[str, Any]) -> Cause:
    if not isinstance(entry.get("id"), str) or not isinstance(entry.get("text"), str):
        raise KnowledgeError(f"{where}: each cause needs a string `id` and `text`")
    for key in _CAUSE_LIST_FIELDS:
        if not isinstance(entry.get(key, []), list) or not all(isinstance(v, str) for v in entry.get(key, [])):
            raise KnowledgeError(f"{where}: cause `{key}` must be a list of strings")
    unknown = {f for key in ("when", "unless", "requires") for f in entry.get(key, [])} - set(FEATURE_NAMES)
    if unknown:
        raise KnowledgeError(f"{where}: cause {entry['id']}: unknown evidence features {sorted(unknown)}")
    if not isinstance(entry.get("gpu", True), bool):
        raise KnowledgeError(f"{where}: cause {entry['id']}: `gpu` must be true or false")
    return Cause(entry["id"], entry["text"], tuple(entry.get("when", [])), tuple(entry.get("unless", [])),
                 tuple(entry.get("requires", [])), tuple(entry.get("workarounds", [])), entry.get("gpu", True))


def rank_causes(signature: Signature, features: "frozenset[str] | set[str]") -> List[Cause]:
    """The signature's causes, those the evidence supports first (most supporting features first),
    those it rules out (or lacks a required feature for) dropped; otherwise in the order listed."""
    kept = [cause for cause in signature.causes
            if not set(cause.unless) & features and set(cause.requires) <= features]
    return sorted(kept, key=lambda cause: -len(set(cause.when) & features))


_DIGITS = str.maketrans("", "", "0123456789")
KEEP_PER_TEMPLATE = 3
Log = TypeVar("Log", str, bytes)


def condense(text: Log) -> Log:
    """A big log (text, or its bytes) with at most KEEP_PER_TEMPLATE lines of each template,
    in first-seen order.

    Huge logs are mostly one line repeated with other numbers (a loss per step, a progress bar, a
    warning per batch); a line's template is the line without its digits. Matching and evidence then
    cost what the distinct templates cost. Small logs are kept whole.
    """
    if len(text) <= CONDENSE_ABOVE:
        return text
    if isinstance(text, bytes):
        newline, templates = b"\n", text.translate(None, b"0123456789")
    else:
        newline, templates = "\n", text.translate(_DIGITS)
    seen: Dict[Log, int] = {}
    kept = []
    for line, template in zip(text.split(newline), templates.split(newline)):
        count = seen.get(template, 0)
        if count < KEEP_PER_TEMPLATE:
            seen[template] = count + 1
            kept.append(line)
    return newline.join(kept)


def match(text: str, knowledge: KnowledgeBase, original: "Optional[str | bytes]" = None) -> List[Match]:
    """Every signature found in `text`, most specific first (then earliest in the log).

    `text` may be `condense(original)` (of the text or of its bytes): line numbers are then
    those of `original`, where the matched line is found there.
    A signature that another matched signature is `secondary_to` (NCCL reporting an
    illegal memory access) is ranked after it, whatever its specificity.
    """
    found = []
    first: Dict[str, int] = {}
    for signature in knowledge.signatures:
        start = _first_match(text, signature, first)
        if start is None:
            continue
        line_start = text.rfind("\n", 0, start) + 1
        end = text.find("\n", start)
        line_text = text[line_start:end if end != -1 else len(text)]
        line = text.count("\n", 0, start) + 1
        if isinstance(original, bytes):
            at = original.find(line_text.encode("utf-8", "surrogateescape"))
            line = original.count(b"\n", 0, at) + 1 if at != -1 else line
        elif original is not None and original is not text:
            at = original.find(line_text)
            line = original.count("\n", 0, at) + 1 if at != -1 else line
        found.append(Match(signature, start, line_text.strip()[:200], line))
    ids = {m.signature.id for m in found}
    return sorted(found, key=lambda m: (bool(ids & set(m.signature.secondary_to)), -m.signature.specificity, m.line))


def _first_match(text: str, signature: Signature, first: Dict[str, int]) -> Optional[int]:
    best: Optional[int] = None
    for anchor in signature.anchors:
        if anchor not in first:  # signatures share anchors: each is looked up in the log once
            first[anchor] = text.find(anchor)
        position = first[anchor]
        hits = 0
        while position != -1 and hits < MAX_ANCHOR_HITS and (best is None or position < best + WINDOW):
            offset = max(0, position - WINDOW)
            hit = signature.pattern.search(text, offset, position + len(anchor) + WINDOW)
            if hit is not None:
                best = hit.start() if best is None else min(best, hit.start())
                break
            hits += 1
            # the next window starts past this one: occurrences inside it were already searched
            position = text.find(anchor, position + WINDOW)
    return best
