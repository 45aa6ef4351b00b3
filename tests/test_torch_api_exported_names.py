"""TL102/TL103 never take away a name another module imports: an import this file never
reads moves to the name's new home (`from torch.func import vmap`); with no new home it
stays in a package `__init__` and while another file of the project imports the name,
and goes only when nothing does. Proven by running the importer on real torch before and
after `check --fix`."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cli_support import run_torchlint, write_tree

pytest.importorskip("torch")

IMPORTER = (
    "import torch\n"
    "from pkg import vmap, default_collate\n"
    "from pkg.plain import vmap as plain_vmap, default_collate as plain_collate\n"
    "print(vmap(torch.sin)(torch.arange(3.0)).tolist(), default_collate([1, 2]).tolist())\n"
    "print(plain_vmap(torch.cos)(torch.zeros(2)).tolist(), plain_collate([3]).tolist())\n"
)
EXPORTING = {
    "pkg/__init__.py": (
        "from functorch import vmap, grad\nfrom torch.utils.data._utils.collate import default_collate\n"
    ),
    "pkg/plain.py": "from functorch import vmap\nfrom torch.utils.data._utils.collate import default_collate\n",
    "main.py": IMPORTER,
}
# `torch.autograd.Variable` has no new home: only its removal could fix it
NO_NEW_HOME = {
    "pyproject.toml": (
        '[tool.torchlint]\ntarget-torch = "2.4"\n'
        "[tool.torchlint.deprecated-torch-api]\nreport-documentation-only = true\n"
    ),
    "pkg/__init__.py": "from torch.autograd import Variable\n",
    "pkg/plain.py": "import os\nfrom torch.autograd import Variable\n",
    "pkg/alone.py": "import os\nfrom torch.autograd import Variable\n",
    "main.py": (
        "import torch\nfrom pkg import Variable\nfrom pkg.plain import Variable as V\n"
        "print(Variable(torch.ones(2)).tolist(), V is Variable)\n"
    ),
}


def run_main(root) -> str:
    result = subprocess.run([sys.executable, "main.py"], cwd=root, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def fix_twice(root, *flags) -> None:
    first = run_torchlint("check", "--fix", "--no-cache", *flags, ".", cwd=root)
    assert first.returncode in (0, 1), first.stderr.decode()
    after = {path.name: path.read_text() for path in root.rglob("*.py")}
    run_torchlint("check", "--fix", "--no-cache", *flags, ".", cwd=root)
    assert {path.name: path.read_text() for path in root.rglob("*.py")} == after


@pytest.mark.parametrize("flags", [(), ("--unsafe-fixes",)])
def test_unread_imports_move_to_their_new_home_and_the_importer_still_runs(tmp_path, flags):
    write_tree(tmp_path, EXPORTING)
    before = run_main(tmp_path)
    fix_twice(tmp_path, *flags)
    assert (tmp_path / "pkg/__init__.py").read_text() == (
        "from torch.func import vmap, grad\nfrom torch.utils.data import default_collate\n"
    )
    assert (tmp_path / "pkg/plain.py").read_text() == (
        "from torch.func import vmap\nfrom torch.utils.data import default_collate\n"
    )
    assert run_main(tmp_path) == before


def test_a_name_with_no_new_home_stays_where_it_is_exported_and_goes_where_nothing_imports_it(tmp_path):
    write_tree(tmp_path, NO_NEW_HOME)
    before = run_main(tmp_path)
    result = run_torchlint("check", "--fix", "--unsafe-fixes", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    out = result.stdout.decode()
    assert "no fix: a package `__init__` imports names to export them" in out
    assert "no fix: main.py imports the name from this module" in out
    assert (tmp_path / "pkg/__init__.py").read_text() == NO_NEW_HOME["pkg/__init__.py"]
    assert (tmp_path / "pkg/plain.py").read_text() == NO_NEW_HOME["pkg/plain.py"]
    assert (tmp_path / "pkg/alone.py").read_text() == "import os\n"
    assert run_main(tmp_path) == before
