"""Jupyter notebooks through the real CLI: positions by cell in every format, fixes that
change only cell sources, discovery opt-in, unreadable notebooks, TL001 off."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

import jsonschema
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from cli_support import WANDB_USED, run_torchlint
from torchlint.core.diagnostics import Edit, Fix, Location
from torchlint.run.notebook import read_notebook

# cell 1 is markdown: cells are numbered among all cells, as ruff numbers them
SETUP = "%matplotlib inline\nimport torch\nimport torchvision\n!pip install timm"
TRAIN = "model = torchvision.models.resnet18(pretrained=True)\ny = torch.exp(x) - 1\nstate = torch.load('m.pt')"
MAGIC = "%%bash\necho torch.load('m.pt')"
LOOP = "torch.load?\nfor step in range(2):\n    !nvidia-smi\n    opt.zero_grad(set_to_none=False)\nz = torch.exp(x) - 1\n"


def tutorial() -> nbformat.NotebookNode:
    notebook = new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    notebook.cells = [
        new_markdown_cell("# Fine-tuning"),
        new_code_cell(SETUP, execution_count=1),
        new_code_cell(
            TRAIN,
            execution_count=2,
            outputs=[new_output("stream", name="stdout", text="Downloading: 100%\n")],
            metadata={"tags": ["train"], "collapsed": False},
        ),
        new_code_cell(MAGIC),
        new_code_cell(LOOP, outputs=[new_output("execute_result", data={"text/plain": "0.5"}, execution_count=4)]),
    ]
    return notebook


def write(path: Path, notebook) -> Path:
    nbformat.write(notebook, str(path))
    return path


def check(*args, cwd):
    return run_torchlint("check", "--no-cache", *args, cwd=cwd)


def test_findings_by_cell_in_concise_json_sarif_github_junit(tmp_path):
    write(tmp_path / "nb.ipynb", tutorial())
    concise = check("--output-format", "concise", "nb.ipynb", cwd=tmp_path)
    assert concise.returncode == 1, concise.stderr
    lines = [line for line in concise.stdout.decode().splitlines() if line.startswith("nb.ipynb")]
    assert [re.match(r".*?: TL\d{3}", line).group() for line in lines] == [
        "nb.ipynb:cell 3:1:37: TL204",
        "nb.ipynb:cell 3:2:5: TL302",
        "nb.ipynb:cell 3:3:9: TL201",
        "nb.ipynb:cell 5:4:5: TL304",  # below an IPython line: rows and columns exact
        "nb.ipynb:cell 5:5:5: TL302",
    ]  # nothing from the %%bash cell 4

    found = json.loads(check("--output-format", "json", "nb.ipynb", cwd=tmp_path).stdout)
    assert [(d["cell"], d["location"]["row"], d["location"]["column"], d["code"]) for d in found] == [
        (3, 1, 37, "TL204"), (3, 2, 5, "TL302"), (3, 3, 9, "TL201"), (5, 4, 5, "TL304"), (5, 5, 5, "TL302")
    ]
    edit = found[2]["fix"]["edits"][0]
    assert (edit["location"]["row"], edit["content"]) == (3, ", weights_only=True")
    lines = check("--output-format", "json-lines", "nb.ipynb", cwd=tmp_path).stdout.decode().splitlines()
    assert [json.loads(line)["cell"] for line in lines] == [3, 3, 3, 5, 5]

    sarif = json.loads(check("--output-format", "sarif", "nb.ipynb", cwd=tmp_path).stdout)
    jsonschema.validate(sarif, json.loads((Path(__file__).parent / "report" / "sarif_minimal_schema.json").read_text()))
    regions = [r["locations"][0]["physicalLocation"]["region"] for r in sarif["runs"][0]["results"]]
    assert [(r["properties"]["cell"], r["startLine"], r["startColumn"]) for r in regions][:3] == [
        (3, 1, 37), (3, 2, 5), (3, 3, 9)
    ]

    github = check("--output-format", "github", "nb.ipynb", cwd=tmp_path).stdout.decode()
    assert "nb.ipynb:cell 3:3:9: TL201" in github
    junit = check("--output-format", "junit", "nb.ipynb", cwd=tmp_path).stdout.decode()
    assert "cell 5, line 4, col 5" in junit

    full = check("nb.ipynb", cwd=tmp_path).stdout.decode()
    assert "3 | state = torch.load('m.pt')" in full  # the frame shows the cell's lines


def test_cached_run_reports_the_same_cells(tmp_path):
    write(tmp_path / "nb.ipynb", tutorial())
    runs = [run_torchlint("check", "--output-format", "json", "nb.ipynb", cwd=tmp_path) for _ in range(2)]
    assert (tmp_path / ".torchlint_cache").is_dir()
    assert json.loads(runs[0].stdout) == json.loads(runs[1].stdout)
    assert {d["cell"] for d in json.loads(runs[1].stdout)} == {3, 5}


def _changed_lines(before: str, after: str):
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    return [
        line
        for tag, _, _, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
        for line in after.splitlines()[j1:j2]
    ]


def _without_sources(data: dict) -> dict:
    return {**data, "cells": [{k: v for k, v in cell.items() if k != "source"} for cell in data["cells"]]}


@pytest.mark.parametrize("style", ["nbformat", "indent2-unsorted-no-final-newline", "one-line"])
def test_fix_rewrites_only_cell_sources(tmp_path, style):
    path = tmp_path / "nb.ipynb"
    data = json.loads(nbformat.writes(tutorial()))
    if style == "nbformat":
        write(path, tutorial())
    elif style == "one-line":
        path.write_text(json.dumps(data) + "\n", encoding="utf-8")
    else:  # as other editors save: two spaces, keys in insertion order, no final newline
        data = {"metadata": data["metadata"], "cells": data["cells"], "nbformat_minor": 5, "nbformat": 4}
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    before = path.read_text(encoding="utf-8")

    fixed = check("--fix", "--unsafe-fixes", "--output-format", "concise", "nb.ipynb", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert b"5 fixed, 0 remaining" in fixed.stdout
    after = path.read_text(encoding="utf-8")

    old, new = json.loads(before), json.loads(after)
    assert _without_sources(new) == _without_sources(old)  # outputs, metadata, ids, order
    sources = ["".join(cell["source"]) for cell in new["cells"]]
    assert sources[1] == SETUP and sources[3] == MAGIC  # untouched cells, magics kept
    assert sources[2] == (
        "model = torchvision.models.resnet18(\n    weights=torchvision.models.ResNet18_Weights.IMAGENET1K_V1\n)\n"
        "y = torch.expm1(x)\nstate = torch.load('m.pt', weights_only=True)"
    )
    assert sources[4] == LOOP.replace("(set_to_none=False)", "()").replace("torch.exp(x) - 1", "torch.expm1(x)")
    # byte for byte: only lines of source strings changed, the layout and final newline did not
    if style == "one-line":
        source_values = re.compile(r'"source": \[[^\]]*\]')
        assert source_values.sub("", after) == source_values.sub("", before)
        assert '"source": ["model = torchvision.models.resnet18(\\n", "    weights=' in after
    else:
        assert all(re.fullmatch(r'\s*"[^"]*",?', line) for line in _changed_lines(before, after))
    assert after.endswith("\n") == before.endswith("\n")
    assert list(json.loads(after)) == list(json.loads(before))
    if style == "nbformat":
        assert nbformat.writes(nbformat.reads(after, as_version=4)) + "\n" == after

    again = check("--fix", "--unsafe-fixes", "nb.ipynb", cwd=tmp_path)
    assert again.returncode == 0 and b"All checks passed!" in again.stdout
    assert path.read_text(encoding="utf-8") == after


def test_diff_names_cells_and_writes_nothing(tmp_path):
    path = write(tmp_path / "nb.ipynb", tutorial())
    before = path.read_bytes()
    diff = check("--diff", "nb.ipynb", cwd=tmp_path)
    assert diff.returncode == 1
    text = diff.stdout.decode()
    assert "--- a/nb.ipynb:cell 3\n+++ b/nb.ipynb:cell 3\n" in text
    assert "+    weights=torchvision.models.ResNet18_Weights.IMAGENET1K_V1\n" in text
    assert "cell 5" not in text  # its fixes are unsafe
    assert path.read_bytes() == before


def test_unreadable_notebooks_are_one_tl000_each_and_the_run_goes_on(tmp_path):
    (tmp_path / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    (tmp_path / "empty.ipynb").write_text("{}", encoding="utf-8")
    (tmp_path / "v3.ipynb").write_text('{"nbformat": 3, "nbformat_minor": 0, "worksheets": [], "metadata": {}}')
    (tmp_path / "train.py").write_text("import torch\nstate = torch.load('m.pt')\n", encoding="utf-8")
    result = check("--output-format", "concise", "broken.ipynb", "empty.ipynb", "v3.ipynb", "train.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.decode().splitlines()
    assert [line.split(":")[0] for line in lines if "TL000" in line] == ["broken.ipynb", "empty.ipynb", "v3.ipynb"]
    assert all("Cannot read notebook" in line for line in lines if "TL000" in line)
    assert any(line.startswith("train.py:2:9: TL201") for line in lines)
    fixed = check("--fix", "broken.ipynb", cwd=tmp_path)
    assert fixed.returncode == 1 and (tmp_path / "broken.ipynb").read_text() == '{"cells": ['


def test_a_cell_that_does_not_parse_is_reported_in_its_cell(tmp_path):
    notebook = tutorial()
    notebook.cells.append(new_code_cell("def broken(:\n    pass"))
    write(tmp_path / "nb.ipynb", notebook)
    result = check("--output-format", "concise", "nb.ipynb", cwd=tmp_path)
    assert re.search(r"^nb\.ipynb:cell 6:1:\d+: TL000 SyntaxError", result.stdout.decode(), re.M)


def test_directories_yield_notebooks_unless_excluded_as_in_ruff(tmp_path):
    (tmp_path / "src").mkdir()
    write(tmp_path / "src" / "nb.ipynb", tutorial())
    (tmp_path / "src" / "train.py").write_text("import torch\nstate = torch.load('m.pt')\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\n", encoding="utf-8")

    def files(*paths):
        found = json.loads(check("--output-format", "json", *paths, cwd=tmp_path).stdout)
        return sorted({Path(d["filename"]).name for d in found})

    assert files("src") == ["nb.ipynb", "train.py"]
    assert files(".") == ["nb.ipynb", "train.py"]
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nextend-exclude = ["*.ipynb"]\n', encoding="utf-8")
    assert files("src") == ["train.py"]
    assert files("src/nb.ipynb") == ["nb.ipynb"]  # named: always linted


def test_tl001_is_off_in_notebooks(tmp_path):
    (tmp_path / "train.py").write_text(WANDB_USED, encoding="utf-8")
    notebook = new_notebook()
    notebook.cells = [new_code_cell(source) for source in WANDB_USED.split("\n\n\n")]
    write(tmp_path / "nb.ipynb", notebook)
    result = check("--output-format", "json", "--select", "TL001", "train.py", "nb.ipynb", cwd=tmp_path)
    assert [(Path(d["filename"]).name, d["code"]) for d in json.loads(result.stdout)] == [("train.py", "TL001")]


def test_noqa_in_a_cell(tmp_path):
    notebook = tutorial()
    notebook.cells[2].source = TRAIN.replace("torch.load('m.pt')", "torch.load('m.pt')  # noqa: TL201")
    write(tmp_path / "nb.ipynb", notebook)
    found = json.loads(check("--output-format", "json", "nb.ipynb", cwd=tmp_path).stdout)
    assert "TL201" not in {d["code"] for d in found} and "TL302" in {d["code"] for d in found}


def _notebook(*sources: str):
    notebook = new_notebook()
    notebook.cells = [new_code_cell(source) for source in sources]
    return read_notebook(nbformat.writes(notebook).encode("utf-8"))


def _fix(*spans):
    return Fix("f", tuple(Edit(Location(*start), Location(*end), text) for start, end, text in spans))


def test_no_fix_straddles_cells_or_touches_an_ipython_line():
    notebook = _notebook("a = 1\nb = 2", "%time f()\nc = 3")
    assert notebook.text == "a = 1\nb = 2\npass\nc = 3\n"
    admits = lambda *spans: notebook.layout.admits(notebook.text, _fix(*spans))  # noqa: E731
    assert admits(((1, 1), (1, 2), "x"))  # inside cell 1
    assert admits(((2, 1), (3, 1), ""))  # cell 1's last line, whole
    assert admits(((3, 1), (3, 1), "import torch\n"))  # before the masked line: it stays
    assert not admits(((2, 6), (4, 1), ""))  # from cell 1 into cell 2
    assert not admits(((2, 3), (3, 1), ""))  # joins cell 1's last line to cell 2
    assert not admits(((3, 1), (3, 5), "x"))  # the masked line itself
    assert not admits(((3, 5), (3, 5), "  # noqa"))  # onto the masked line


def test_sources_come_back_with_ipython_lines_after_edits_move_them():
    notebook = _notebook("x = 1\n!ls\ny = 2")
    layout = notebook.layout.copy()
    text = notebook.text
    spans = [(0, 0, "import torch\nimport os\n")]
    new_text = "import torch\nimport os\n" + text
    layout.moved(spans)
    assert notebook.sources(new_text, layout) == ["import torch\nimport os\nx = 1\n!ls\ny = 2"]


def test_python_files_never_import_nbformat(tmp_path):
    import subprocess
    import sys

    (tmp_path / "train.py").write_text("import torch\nstate = torch.load('m.pt')\n", encoding="utf-8")
    code = (
        "import sys\nfrom torchlint.cli import main\n"
        "code = main(['check', '--no-cache', '--output-format', 'concise', 'train.py'])\n"
        "print(code, 'nbformat' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=tmp_path)
    assert result.stdout.decode().splitlines()[-1] == "1 False", result.stderr.decode()


def test_a_notebook_of_another_language_has_nothing_to_lint(tmp_path):
    notebook = new_notebook()
    notebook.metadata["kernelspec"] = {"name": "ir", "language": "R", "display_name": "R"}
    notebook.cells = [new_code_cell("x <- torch.load('m.pt')")]
    write(tmp_path / "analysis.ipynb", notebook)
    result = check("--output-format", "concise", "analysis.ipynb", cwd=tmp_path)
    assert result.returncode == 0 and b"All checks passed!" in result.stdout


def test_stdin_notebook_is_fixed_to_stdout(tmp_path):
    path = write(tmp_path / "nb.ipynb", tutorial())
    result = run_torchlint(
        "check", "--fix", "--unsafe-fixes", "--stdin-filename", "nb.ipynb", "-", cwd=tmp_path, input=path.read_bytes()
    )
    fixed = json.loads(result.stdout)
    assert "torch.load('m.pt', weights_only=True)" in "".join(fixed["cells"][2]["source"])
    assert fixed["cells"][2]["outputs"] == json.loads(path.read_bytes())["cells"][2]["outputs"]


def test_project_rule_positions_and_the_rows_its_message_names_are_in_cells(tmp_path):
    from cli_support import FIXTURES

    parts = (FIXTURES / "seqgan" / "energy.py").read_text(encoding="utf-8").split("\n\n\n")
    notebook = new_notebook()
    notebook.cells = [new_markdown_cell("# Energy")] + [new_code_cell(part.strip("\n")) for part in parts]
    write(tmp_path / "energy.ipynb", notebook)
    result = check("--output-format", "concise", "--select", "TL004", "energy.ipynb", cwd=tmp_path)
    line = result.stdout.decode().splitlines()[0]
    # the GRU is built in cell 3; `autograd.grad(..., create_graph=True)` is line 5 of cell 4
    assert line.startswith("energy.ipynb:cell 3:4:20: TL004 ") and "at energy.ipynb:cell 4:5 via" in line
