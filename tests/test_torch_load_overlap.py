"""TL201 and TL209 overlap on loads of a file chosen outside the code: TL209 reports
those while it is selected, TL201 otherwise. Every combination of the two selected,
with and without TL201's `report-explicit-false`, through `torchlint.cli.main`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import run_torchlint, write_tree

LOADS = (
    "import pickle\n"
    "import torch\n\n\n"
    "def restore(path):\n"
    "    return torch.load(path, weights_only=False)\n\n\n"  # 6: explicit, from a parameter
    "def fetch(args):\n"
    "    return torch.hub.load_state_dict_from_url(args.url)\n\n\n"  # 10: hub default, a configured URL
    "def vocab():\n"
    "    return torch.load('vocab.pt')\n\n\n"  # 14: old default, a literal file
    "def custom(path):\n"
    "    return torch.load(path, pickle_module=pickle)  # noqa: TL209\n"  # 18: TL209 silenced
)
OUTSIDE = "outside the code"

# (row, code, whether the message says the file comes from outside) per selection
WITHOUT_OPTION = {
    "TL201": [(10, "TL201", True), (14, "TL201", False)],
    "TL209": [(6, "TL209", True), (10, "TL209", True)],
    "TL201,TL209": [(6, "TL209", True), (10, "TL209", True), (14, "TL201", False)],
}
WITH_OPTION = {
    "TL201": [(6, "TL201", True), (10, "TL201", True), (14, "TL201", False), (18, "TL201", True)],
    "TL209": WITHOUT_OPTION["TL209"],
    "TL201,TL209": WITHOUT_OPTION["TL201,TL209"],
}


def _findings(root: Path, select: str) -> list:
    result = run_torchlint("check", "--no-cache", "--output-format", "json", "--select", select, ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr.decode()
    return sorted(
        (item["location"]["row"], item["code"], OUTSIDE in item["message"]) for item in json.loads(result.stdout)
    )


@pytest.mark.parametrize("option", [False, True], ids=["default", "report-explicit-false"])
@pytest.mark.parametrize("select", ["TL201", "TL209", "TL201,TL209"])
def test_each_load_is_reported_once_by_the_rule_that_owns_it(tmp_path, select, option):
    config = "[tool.torchlint.torch-load-without-weights-only]\nreport-explicit-false = true\n" if option else ""
    write_tree(tmp_path, {"pyproject.toml": config, "m.py": LOADS})
    expected = (WITH_OPTION if option else WITHOUT_OPTION)[select]
    assert _findings(tmp_path, select) == expected


def test_neither_selected_reports_nothing_here(tmp_path):
    write_tree(tmp_path, {"m.py": LOADS})
    assert _findings(tmp_path, "TL3") == []
