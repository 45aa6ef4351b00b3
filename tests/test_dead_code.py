"""No dead code in torchlint/ and rules/: vulture finds nothing at 60 % confidence but the
names below, each judged alive for the reason given (read by something vulture cannot see)."""

from __future__ import annotations

from pathlib import Path

import vulture

from torchlint.rule_api.registry import all_rules

REPO = Path(__file__).resolve().parent.parent

ALIVE = (
    # LibCST calls visitor methods by name; the registry and the example tests read these
    "visit_*", "leave_*", "VALID", "INVALID",
    # flake8's plugin interface (entry point in pyproject.toml)
    "TorchlintChecker", "parse_options",
    # PyTorch Lightning's callback hooks and PyTorch's hook signatures (runtime guard)
    "setup", "teardown", "on_train_batch_start", "on_validation_batch_start", "on_exception", "exception",
    "trainer", "stage",
    "batch", "batch_idx", "exc_info", "optimizer",
    # pygls calls a server's report_server_error when a notification fails
    "report_server_error",
    # module `__getattr__` (PEP 562): torchlint.runtime's lazy attributes
    "__getattr__",
    # rich's Console hook, set so that the CLI decides what a broken pipe means
    "on_broken_pipe",
    # fields of the doctor's JSON facts record and of explain's evidence, read by name
    "memory_bytes", "schema", "cudnn_version_raw", "driver_source", "amp",
    # ruff's fix applicability vocabulary (written into JSON output by value)
    "DISPLAY_ONLY",
    # the output formats, looked up by name in torchlint.report.FORMATS
    "render_json_lines",
    # the doctor's check names, the vocabulary explain's knowledge base is validated against
    "CHECK_NAMES",
    # which family holds each GPU error code: read by tools/error_codes_doc.py and its tests
    "family_of_codes",
    # set on a lazily imported module's spec: CPython's import machinery reads it at each import
    "_initializing",
)


def test_vulture_finds_no_dead_code():
    rule_classes = [rule.__name__ for rule in all_rules()]  # found by the registry, not by name
    finder = vulture.Vulture(ignore_names=[*ALIVE, *rule_classes])
    finder.scavenge([str(REPO / "torchlint"), str(REPO / "rules")])
    dead = [item.get_report() for item in finder.get_unused_code(min_confidence=60)]
    assert not dead, "\n".join(dead)
