"""Project-level fixes reach a fixpoint, as per-file fixes do: a second --fix changes nothing."""

from __future__ import annotations

from cli_support import run_torchlint, write_tree

MODEL = """class {name}(Base):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)

    def forward(self, x):
        return self.conv(x)
"""


def test_overlapping_project_fixes_are_applied_in_turn(tmp_path):
    # both deferred TL002 fixes insert `import torch` at the top of models.py: they overlap,
    # so only one can go in a round; the file is re-linted and the other applied next
    header = "from torch import nn\n\nfrom .base import Base\n\n\n"
    write_tree(
        tmp_path,
        {
            # A and B are top-level models: their entry convs are reported with this option
            "pyproject.toml": "[tool.torchlint.unvalidated-conv-input]\ncheck-model-inputs = true\n",
            "pkg/__init__.py": "",
            "pkg/base.py": "from torch import nn\n\n\nclass Base(nn.Module):\n    pass\n",
            "pkg/models.py": header + MODEL.format(name="A") + "\n\n" + MODEL.format(name="B"),
        },
    )
    first = run_torchlint("check", "--fix", "--no-cache", "pkg", cwd=tmp_path)
    assert first.returncode == 0, first.stdout.decode() + first.stderr.decode()
    fixed = (tmp_path / "pkg/models.py").read_text()
    assert fixed.count("import torch\n") == 1
    assert fixed.count("torch._assert(") == 2  # one guard per conv, in A and in B

    second = run_torchlint("check", "--fix", "--no-cache", "pkg", cwd=tmp_path)
    assert second.returncode == 0
    assert (tmp_path / "pkg/models.py").read_text() == fixed
