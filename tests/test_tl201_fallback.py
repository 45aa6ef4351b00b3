"""TL201 offers no `weights_only=True` fix for a load whose own function loads the same source with
`weights_only=False` elsewhere: torch_geometric's `torch_load` tries `weights_only=True` on new torch,
falls back to `weights_only=False` when that fails, and on old torch loads `torch.load(f, map_location)`
(its datasets store classes). The function says the file may hold objects. The twin: a fallback that
loads another name leaves the fix. Through the real CLI, in process."""

from __future__ import annotations

import json

from cli_support import run_torchlint, write_tree

FALLBACK = """\
import pickle

import torch


def torch_load(path, map_location=None, new_torch=True):
    if new_torch:
        try:
            with open(path, "rb") as f:
                return torch.load(f, map_location, weights_only=True)
        except pickle.UnpicklingError:
            with open({fallback}, "rb") as f:
                return torch.load({fallback_source}, map_location, weights_only=False)
    with open(path, "rb") as f:
        return torch.load(f, map_location)
"""


def _findings(tmp_path, text: str) -> list:
    root = write_tree(tmp_path, {"fs.py": text})
    result = run_torchlint("check", "--no-cache", "--select", "TL201", "--output-format", "json", ".", cwd=root)
    assert result.returncode == 1, result.stderr.decode()
    return json.loads(result.stdout)


def test_a_load_whose_function_falls_back_to_weights_only_false_gets_no_fix(tmp_path):
    [found] = _findings(tmp_path, FALLBACK.format(fallback="path", fallback_source="f"))
    assert found["location"]["row"] == 15 and found["fix"] is None
    assert "`f` is loaded with `weights_only=False` in `torch_load` too" in found["message"]


def test_a_fallback_that_loads_another_source_leaves_the_fix(tmp_path):
    text = FALLBACK.format(fallback="path + '.bak'", fallback_source="backup")
    fallback = "as f:\n                return torch.load(backup"
    text = text.replace(fallback, fallback.replace("as f:", "as backup:"))
    [found] = _findings(tmp_path, text)
    assert found["location"]["row"] == 15 and found["fix"] is not None
