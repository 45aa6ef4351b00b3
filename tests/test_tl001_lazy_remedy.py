"""TL001 reports what a lazy import can fix (issue 9): a name used at import time
(`@numba.njit`) only with `report-import-time-use`; nothing when another module-level
import of the project keeps the heavy module loaded; imports spelled as calls; names
only in annotations that never run; the moved import keeps its comments."""

from __future__ import annotations

import json

import pytest

from cli_support import run_torchlint, write_tree
from flake8_support import run_flake8

NUMBA_AT_IMPORT = "import numba\n\n\n@numba.njit\ndef add(x):\n    return x + 1\n"
OPTION = "[tool.torchlint.heavy-import-at-module-level]\nreport-import-time-use = true\n"


def findings(root, *paths):
    result = run_torchlint("check", "--no-cache", "--select", "TL001", "--output-format", "json-lines", *paths, cwd=root)
    assert result.returncode in (0, 1), result.stderr.decode()
    return [json.loads(line) for line in result.stdout.decode().splitlines() if line.strip()]


def fixed(root, name):
    result = run_torchlint("check", "--fix", "--no-cache", "--select", "TL001", name, cwd=root)
    assert result.returncode in (0, 1), result.stderr.decode()
    return (root / name).read_text()


def test_a_name_used_at_import_time_is_reported_only_with_the_option(tmp_path):
    write_tree(tmp_path, {"kernels.py": NUMBA_AT_IMPORT})
    assert findings(tmp_path, ".") == []
    (tmp_path / "pyproject.toml").write_text(OPTION)
    [found] = findings(tmp_path, ".")
    assert "used when the module is imported" in found["message"] and found["fix"] is None


@pytest.mark.slow
def test_flake8_follows_the_default_too(tmp_path):
    write_tree(tmp_path, {"kernels.py": NUMBA_AT_IMPORT, "train.py": "import wandb\n\n\ndef f():\n    wandb.init()\n"})
    output = run_flake8("--isolated", "--select", "TL001", ".", cwd=tmp_path).stdout
    assert "train.py:1:1: TL001" in output and "kernels.py" not in output


def test_a_second_import_of_a_module_that_stays_is_not_reported(tmp_path):
    write_tree(
        tmp_path,
        {"kernels.py": "from numba import cuda\nimport numba\n\n\n@cuda.jit\ndef k(x):\n    pass\n\n\ndef f():\n    return numba.config\n"},
    )
    assert findings(tmp_path, ".") == []


RNNT = "import numba\n\nfrom {how} import kernel\n\n\ndef loss(x):\n    return numba.cuda.is_available(), kernel\n"
KERNEL_AT_IMPORT = "from numba import cuda\n\n\n@cuda.jit\ndef kernel(x):\n    pass\n"
KERNEL_LAZY = "from numba import cuda\n\n\ndef kernel(x):\n    return cuda.is_available()\n"


def test_no_finding_when_an_imported_project_module_keeps_the_heavy_module_loaded(tmp_path):
    for how in (".utils.gpu", "pkg.utils.gpu"):
        write_tree(
            tmp_path,
            {
                "src/pkg/__init__.py": "",
                "src/pkg/utils/__init__.py": "",
                "src/pkg/utils/gpu.py": KERNEL_AT_IMPORT,
                "src/pkg/rnnt.py": RNNT.format(how=how),
            },
        )
        assert findings(tmp_path, "src") == [], how
        # the flake8 plugin sees one file: there the finding stays
        assert "rnnt.py:1:1: TL001" in run_flake8("--isolated", "--select", "TL001", "src", cwd=tmp_path).stdout


def test_through_a_chain_of_imports_and_only_when_that_import_stays(tmp_path):
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/gpu.py": KERNEL_AT_IMPORT,
            "pkg/middle.py": "from .gpu import kernel\n",
            "pkg/rnnt.py": RNNT.format(how=".middle"),
        },
    )
    assert findings(tmp_path, ".") == []
    # a fixable import elsewhere does not silence this one: fixing both saves the import
    (tmp_path / "pkg/gpu.py").write_text(KERNEL_LAZY)
    found = sorted((f["filename"].split("/")[-1], f["fix"] is not None) for f in findings(tmp_path, "."))
    assert found == [("gpu.py", True), ("rnnt.py", True)]
    assert "    import numba\n" in fixed(tmp_path, "pkg/rnnt.py")


def test_imports_spelled_as_calls(tmp_path):
    write_tree(
        tmp_path,
        {
            "monai_like.py": 'from monai.utils import optional_import\n\nmlflow, _ = optional_import("mlflow")\n\n\ndef log():\n    mlflow.log_metric("a", 1)\n',
            "importlib_like.py": 'import importlib\n\nwandb = importlib.import_module("wandb")\n\n\ndef log():\n    wandb.log({})\n',
            "builtin_like.py": 'neptune = __import__("neptune")\n\n\ndef log():\n    neptune.init_run()\n',
            "at_import.py": 'import importlib\n\nnumba = importlib.import_module("numba")\nJIT = numba.njit\n',
            "unrelated.py": 'import importlib\n\njson = importlib.import_module("json")\n',
        },
    )
    found = {f["filename"].split("/")[-1]: f for f in findings(tmp_path, ".")}
    assert sorted(found) == ["builtin_like.py", "importlib_like.py", "monai_like.py"]
    assert all("spelled as a call" in f["message"] and f["fix"] is None for f in found.values())
    assert found["monai_like.py"]["location"] == {"row": 3, "column": 1}


def test_names_only_in_annotations_that_never_run(tmp_path):
    local = "import wandb\n\n\ndef train():\n    run: wandb.Run = wandb.init()\n    return run\n"
    postponed = "from __future__ import annotations\n\nimport wandb\n\n\ndef train(run: wandb.Run):\n    wandb.log({})\n"
    string = 'import wandb\n\n\ndef train(run: "wandb.Run"):\n    wandb.log({})\n'
    evaluated = "import wandb\n\n\ndef train(run: wandb.Run):\n    wandb.log({})\n"
    write_tree(tmp_path, {"local.py": local, "postponed.py": postponed, "quoted.py": string, "evaluated.py": evaluated})
    found = {f["filename"].split("/")[-1]: f for f in findings(tmp_path, ".")}
    assert sorted(found) == ["local.py", "postponed.py", "quoted.py"]
    assert found["local.py"]["fix"] is not None
    for name in ("postponed.py", "quoted.py"):
        assert "TYPE_CHECKING" in found[name]["message"] and found[name]["fix"] is None
    assert fixed(tmp_path, "local.py") == "def train():\n    import wandb\n\n    run: wandb.Run = wandb.init()\n    return run\n"


def test_the_moved_import_keeps_its_comments_and_its_place(tmp_path):
    source = (
        "import os\n\n"
        "# log runs to the dashboard\n"
        "import wandb  # type: ignore[import-untyped]\n\n\n"
        "def train():\n"
        '    """Train."""\n\n'
        "    # start the run\n"
        "    wandb.init()\n"
        "    return os\n"
    )
    write_tree(tmp_path, {"train.py": source})
    assert fixed(tmp_path, "train.py") == (
        "import os\n\n\n"
        "def train():\n"
        '    """Train."""\n\n'
        "    # log runs to the dashboard\n"
        "    import wandb  # type: ignore[import-untyped]\n\n"
        "    # start the run\n"
        "    wandb.init()\n"
        "    return os\n"
    )


def test_a_file_header_stays_and_the_file_never_starts_with_blank_lines(tmp_path):
    write_tree(tmp_path, {"a.py": "import wandb\n\n\ndef f():\n    wandb.init()\n", "b.py": "# Copyright\nimport wandb\n\n\ndef f():\n    wandb.init()\n"})
    assert fixed(tmp_path, "a.py") == "def f():\n    import wandb\n\n    wandb.init()\n"
    assert fixed(tmp_path, "b.py") == "# Copyright\n\n\ndef f():\n    import wandb\n\n    wandb.init()\n"


def test_a_comment_naming_a_group_of_imports_stays(tmp_path):
    source = "import os\n\n# third-party imports\nimport wandb\nimport yaml\n\n\ndef train():\n    wandb.init()\n    return os, yaml\n"
    write_tree(tmp_path, {"train.py": source})
    assert fixed(tmp_path, "train.py") == (
        "import os\n\n# third-party imports\nimport yaml\n\n\ndef train():\n    import wandb\n\n    wandb.init()\n    return os, yaml\n"
    )


def test_the_comment_right_above_the_import_moves_with_it(tmp_path):
    # issue 23, item 9: `# experiment tracking` used to end up above `import torch`
    source = "import os\n\n# experiment tracking\nimport wandb\nimport torch\n\n\ndef train():\n    wandb.init()\n    return os, torch\n"
    write_tree(tmp_path, {"train.py": source})
    assert fixed(tmp_path, "train.py") == (
        "import os\n\nimport torch\n\n\ndef train():\n    # experiment tracking\n    import wandb\n\n"
        "    wandb.init()\n    return os, torch\n"
    )


def test_the_measured_trackers_are_in_the_default_list(tmp_path):
    for name in ("clearml", "aim", "dvclive"):
        write_tree(tmp_path, {f"track_{name}.py": f"import {name}\n\n\ndef log():\n    return {name}.__name__\n"})
    found = sorted(f["filename"].split("/")[-1] for f in findings(tmp_path, "."))
    assert found == ["track_aim.py", "track_clearml.py", "track_dvclive.py"]
