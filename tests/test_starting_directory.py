"""A finding, a cache entry and a baseline entry mean the same wherever the run starts
(issue 32, item 1): the same project (its config's directory) checked from its root, a
subdirectory and its parent, with and without the cache and a baseline, in either order,
finds the same things, and every path it prints names the right file from where it ran.
A message that names another file names it from the project root, as the baseline does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import WANDB_USED, run_torchlint, write_tree
from test_host_sync_across_files import SHARED_STEP_BASE, SHARED_STEP_MODEL
from test_tl004_cudnn_rnn_double_backward import GRU_MODEL, penalty

FILES = {  # findings within one file and across files, the imports absolute and relative, all in src/pkg
    "src/pkg/__init__.py": "",
    "src/pkg/base.py": SHARED_STEP_BASE,
    "src/pkg/model.py": SHARED_STEP_MODEL.replace("from .base import", "from pkg.base import"),
    "src/pkg/models.py": GRU_MODEL,
    "src/pkg/train.py": penalty("from pkg.models import Critic"),
    "src/pkg/log.py": WANDB_USED,
}
LATER = {"src/pkg/load.py": "import torch\n\n\ndef restore(path):\n    return torch.load(path)\n"}
# (where the run starts, relative to the project; what it names)
STARTS = {"root": (".", "."), "subdirectory": ("src", "."), "deeper": ("src/pkg", "."), "parent": ("..", "project")}


def _project(tmp_path: Path, baseline: bool) -> Path:
    project = write_tree(tmp_path / "project", FILES)
    (project / ".git").mkdir()
    (project / "pyproject.toml").write_text("[tool.torchlint]\n")
    if baseline:
        (project / "pyproject.toml").write_text('[tool.torchlint]\nbaseline = "torchlint-baseline.json"\n')
        wrote = run_torchlint("check", "--no-cache", "--write-baseline", "torchlint-baseline.json", ".", cwd=project)
        assert wrote.returncode == 0, wrote.stderr
    write_tree(project, LATER)  # a finding the baseline does not hold
    return project


def _run(project: Path, start: str, *flags: str):
    where, named = STARTS[start]
    cwd = (project / where).resolve()
    as_json = run_torchlint("check", "--output-format", "json", *flags, named, cwd=cwd)
    concise = run_torchlint("check", "--output-format", "concise", "--no-cache", *flags, named, cwd=cwd)
    findings = json.loads(as_json.stdout)
    for line in concise.stdout.decode().splitlines():  # every printed path names the file from `cwd`
        if ": TL" in line:
            assert (cwd / line.split(":")[0]).is_file(), (start, line)
    seen = sorted((f["filename"], f["code"], f["location"]["row"], f["message"]) for f in findings)
    return as_json.returncode, seen, concise.returncode


@pytest.mark.parametrize("baseline", [False, True], ids=["no baseline", "baseline"])
@pytest.mark.parametrize("order", [list(STARTS), list(reversed(STARTS))], ids=["root first", "parent first"])
def test_the_same_project_gives_the_same_findings_from_anywhere(tmp_path, baseline, order):
    project = _project(tmp_path, baseline)
    expected = _run(project, "root", "--no-cache")
    codes = {code for _, code, _, _ in expected[1]}
    assert codes == ({"TL201"} if baseline else {"TL001", "TL003", "TL004", "TL201"}), expected
    for start in order:  # each start with the cache the previous ones left, then without
        for flags in ((), ("--no-cache",)):
            code, seen, concise_code = _run(project, start, *flags)
            assert (code, seen) == expected[:2], (start, flags)
            assert concise_code == expected[0]
