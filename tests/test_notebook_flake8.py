"""The real flake8 pointed at a notebook: the plugin lints its code cells and reports
each finding on the JSON line that holds the cell's source line."""

from __future__ import annotations

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
import pytest

from flake8_support import run_flake8


@pytest.mark.slow
def test_findings_land_on_the_json_lines_of_the_cell_sources(tmp_path):
    notebook = new_notebook()
    notebook.cells = [
        new_markdown_cell("# Training"),
        new_code_cell("%matplotlib inline\nimport wandb\nimport torch\n\ndef log():\n    wandb.log({})"),
        new_code_cell(
            "!nvidia-smi\nstate = torch.load('m.pt')\ny = torch.exp(x) - 1  # noqa: TL302",
            outputs=[new_output("stream", name="stdout", text="ok\n")],
        ),
    ]
    nbformat.write(notebook, str(tmp_path / "nb.ipynb"))
    lines = (tmp_path / "nb.ipynb").read_text(encoding="utf-8").splitlines()

    result = run_flake8("--isolated", "--filename", "*.ipynb", "--select", "TL", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    found = [line.split(":", 3) for line in result.stdout.splitlines()]
    # TL001 does not run on notebooks; the noqa on the JSON line silences TL302 (flake8's own noqa)
    assert [(name, code.split()[0]) for name, _, _, code in found] == [("nb.ipynb", "TL201")]
    _, row, column, _ = found[0]
    line = lines[int(row) - 1]
    assert line.strip() == "\"state = torch.load('m.pt')\\n\","
    assert line[int(column) - 1 :].startswith("torch.load(")


@pytest.mark.slow
def test_a_file_that_is_not_a_notebook_is_one_tl000_line(tmp_path):
    (tmp_path / "nb.ipynb").write_text('{"cells": 1}\n', encoding="utf-8")
    result = run_flake8("--isolated", "--filename", "*.ipynb", "--select", "TL", "nb.ipynb", cwd=tmp_path)
    assert result.stdout.count("TL000") == 1 and "cannot read the notebook" in result.stdout
