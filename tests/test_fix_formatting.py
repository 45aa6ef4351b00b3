"""Fixed code reads as if a person wrote it: after `--fix`, a formatter (ruff format) finds
nothing to change in what the fixes wrote, at the project's line length."""

from __future__ import annotations

import difflib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import FIXTURES, run_torchlint

pytest.importorskip("ruff", reason="ruff is a test dependency (pip install -e '.[test]')")

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.M)
PROJECTS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def ruff(*args, cwd):
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def fix(project: Path, *flags):
    result = run_torchlint("check", "--no-cache", "--fix", *flags, "--output-format", "concise", ".", cwd=project)
    assert result.returncode in (0, 1), result.stderr.decode()


def rows_the_fix_wrote(before: str, after: str) -> set:
    """Rows of `after` that a fix inserted or changed, and the rows either side of a
    deletion (a fix that removes lines is responsible for how their neighbours meet)."""
    rows = set()
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            rows.update(range(j1 + 1, j2 + 1))
        elif tag == "delete":
            rows.update((j1, j1 + 1))
    return rows


def rows_the_formatter_changes(diff: str, insertions: bool = True) -> set:
    """Rows of the formatter's input that a `ruff format --diff` hunk removes or replaces,
    and (with `insertions`) the two rows an inserted line falls between."""
    rows = set()
    for hunk in re.split(r"(?m)^(?=@@ )", diff)[1:]:
        row = int(HUNK.match(hunk).group(1))
        for line in hunk.splitlines()[1:]:
            if line.startswith("-"):
                rows.add(row)
                row += 1
            elif line.startswith("+"):
                if insertions:
                    rows.update((row - 1, row))
            else:
                row += 1
    return rows


def format_diff(path: Path) -> str:
    return ruff("format", "--diff", path.name, cwd=path.parent).stdout


def _with_fixes():
    """(project, flags) for each fixtures project where those flags fix something."""
    for project in PROJECTS:
        if any((FIXTURES / project).glob("*.fixed")):
            yield pytest.param(project, (), id=f"{project}-fix")
        if any((FIXTURES / project).glob("*.*fixed")):
            yield pytest.param(project, ("--unsafe-fixes",), id=f"{project}-unsafe-fixes")


@pytest.mark.parametrize("project, flags", list(_with_fixes()))
def test_formatter_leaves_what_the_fixes_wrote_alone(tmp_path, project, flags):
    # The copy is formatted first, so that whatever the formatter still wants afterwards
    # is owed to the fixes, not to the fixtures' own (deliberately long) lines.
    work = tmp_path / project
    shutil.copytree(FIXTURES / project, work)
    ruff("format", ".", cwd=work)
    originals = tmp_path / "originals"
    shutil.copytree(work, originals)
    fix(work, *flags)
    changed = [p for p in sorted(work.rglob("*.py")) if p.read_bytes() != (originals / p.relative_to(work)).read_bytes()]
    assert changed, f"no fix applied in fixtures/{project}"
    for path in changed:
        written = rows_the_fix_wrote((originals / path.relative_to(work)).read_text(encoding="utf-8"), path.read_text(encoding="utf-8"))
        diff = format_diff(path)
        assert not written & rows_the_formatter_changes(diff), f"{path.name}:\n{diff}"


def test_lines_the_fixes_add_to_the_raw_fixtures_are_formatted(fixtures_copy):
    # On the fixtures as they are (long lines the formatter would split anyway), the lines
    # a fix adds from scratch (TL002's asserts, TL001's moved imports, TL004's `with`)
    # are left exactly as written.
    checked = 0
    for project in PROJECTS:
        work = fixtures_copy / project
        fix(work)
        for path in sorted(work.rglob("*.py")):
            before = (FIXTURES / project / path.relative_to(work)).read_text(encoding="utf-8")
            opcodes = difflib.SequenceMatcher(None, before.splitlines(), path.read_text(encoding="utf-8").splitlines()).get_opcodes()
            added = {row for tag, _, _, j1, j2 in opcodes if tag == "insert" for row in range(j1 + 1, j2 + 1)}
            if added:
                checked += 1
                diff = format_diff(path)
                assert not added & rows_the_formatter_changes(diff, insertions=False), f"{path.name}:\n{diff}"
    assert checked >= 3


def run_fix_on(tmp_path: Path, text: str, config: str = "") -> str:
    if config:
        (tmp_path / "pyproject.toml").write_text(config)
    path = tmp_path / "module.py"
    path.write_text(text)
    assert ruff("format", "--check", path.name, cwd=tmp_path).returncode == 0, "the input must be formatted"
    fix(tmp_path)
    return path.read_text()


def unsafe_fixed(tmp_path: Path, source: str, code: str) -> str:
    """`source` as module.py after `--fix --unsafe-fixes --select CODE`."""
    path = tmp_path / "module.py"
    path.write_text(source)
    fix(tmp_path, "--unsafe-fixes", "--select", code)
    return path.read_text()


def assert_formatted(tmp_path: Path):
    check = ruff("format", "--diff", "module.py", cwd=tmp_path)
    assert check.returncode == 0, check.stdout


def test_removing_the_first_import_leaves_no_leading_blank_lines(tmp_path):
    fixed = run_fix_on(tmp_path, "import wandb\n\n\ndef train():\n    wandb.init()\n")
    assert fixed == "def train():\n    import wandb\n\n    wandb.init()\n"
    assert_formatted(tmp_path)


def test_removing_an_import_between_blank_lines_keeps_the_larger_gap(tmp_path):
    source = '"""Train."""\n\nimport os\n\nimport wandb\n\n\ndef train():\n    wandb.init(dir=os.getcwd())\n'
    fixed = run_fix_on(tmp_path, source)
    assert fixed.startswith('"""Train."""\n\nimport os\n\n\ndef train():\n')
    assert_formatted(tmp_path)


def test_the_comment_of_a_moved_import_moves_with_it(tmp_path):
    fixed = run_fix_on(tmp_path, "import os\nimport wandb  # tracking\n\n\ndef train():\n    wandb.init()\n")
    assert fixed == "import os\n\n\ndef train():\n    import wandb  # tracking\n\n    wandb.init()\n"
    assert_formatted(tmp_path)


CONV = (
    "import torch\nfrom torch import nn\n\n\nclass Block(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3)\n\n"
    "    def forward(self, x):\n        return self.conv(x)\n"
)
# The fix's layout is under test: TL002 reports the model's entry conv only with this option.
MODEL_INPUTS = "\n[tool.torchlint.unvalidated-conv-input]\ncheck-model-inputs = true\n"


@pytest.mark.parametrize(
    "config, longest",
    [
        ("", 88),
        ("[tool.ruff]\nline-length = 140\n", 140),  # the assert's parts take lines past 88
        ("[tool.black]\nline-length = 100\n", 100),
        ("[tool.torchlint]\nline-length = 110\n\n[tool.ruff]\nline-length = 120\n", 110),  # 120 would join a call's arguments
    ],
    ids=["default-88", "ruff-140", "black-100", "torchlint-110-over-ruff"],
)
def test_tl002_asserts_wrap_at_the_project_line_length(tmp_path, config, longest):
    fixed = run_fix_on(tmp_path, CONV, config + MODEL_INPUTS)
    written = [line for line in fixed.splitlines() if line not in CONV.splitlines()]
    assert any("torch._assert" in line for line in written)
    assert max(len(line) for line in written) <= longest
    if config:  # ruff reads [tool.ruff]; for the others tell it the length torchlint used
        (tmp_path / "ruff.toml").write_text(f"line-length = {longest}\n")
    assert_formatted(tmp_path)
    if longest == 140:
        assert fixed.count("torch._assert(") == 1 and any(len(line) > 88 for line in written)


def test_tl003_detach_that_overflows_is_split_inside_the_call(tmp_path):
    source = (
        "import pytorch_lightning as pl\n\n\nclass Lit(pl.LightningModule):\n"
        "    def training_step(self, batch, batch_idx):\n        loss = self(batch)\n"
        '        self.log("train/loss", loss.item(), logger=False, on_step=True, sync_dist=True)\n'
        "        return loss\n"
    )
    fixed = run_fix_on(tmp_path, source)
    assert (
        '        self.log(\n            "train/loss", loss.detach(), logger=False, on_step=True, sync_dist=True\n'
        "        )\n" in fixed
    )
    assert_formatted(tmp_path)


def test_bad_line_length_is_a_config_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nline-length = "long"\n')
    (tmp_path / "module.py").write_text("import torch\n")
    result = run_torchlint("check", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 2
    [line] = result.stderr.decode().splitlines()
    assert line.startswith("error: ") and "`line-length`" in line


@pytest.mark.parametrize("name, text", [
    ("setup.cfg", "[metadata]\nname = demo\n\n[flake8]\nmax-line-length = 140\n"),
    ("tox.ini", "[pycodestyle]\nmax_line_length = 140\n"),
    (".flake8", "[flake8]\nmax-line-length = 140\nextend-ignore = E203\n"),
])
def test_flake8s_max_line_length_is_the_projects_line_length(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    fixed = run_fix_on(tmp_path, CONV, MODEL_INPUTS)
    written = [line for line in fixed.splitlines() if line not in CONV.splitlines()]
    assert max(len(line) for line in written) <= 140 and any(len(line) > 88 for line in written)
    (tmp_path / "ruff.toml").write_text("line-length = 140\n")
    assert_formatted(tmp_path)


@pytest.mark.parametrize("content", [
    b"[flake8\nmax-line-length = 120\n\xff",  # not an ini file, not UTF-8
    b"[flake8]\nmax-line-length = " + b"9" * 5000 + b"\n",  # past Python's limit for int()
    "[flake8]\nmax-line-length = \u0661\u0662\u0660\n".encode(),  # digits, not ASCII ones
])
def test_an_unreadable_or_unusable_setup_cfg_leaves_the_default(tmp_path, content):
    (tmp_path / "setup.cfg").write_bytes(content)
    fixed = run_fix_on(tmp_path, CONV, MODEL_INPUTS)
    assert max(len(line) for line in fixed.splitlines()) <= 88


def test_an_appended_keyword_keeps_a_too_long_call_and_a_continued_call_within_the_line_length(tmp_path):
    source = (
        "import torch\n\n\ndef load(directory, device_that_we_want_to_use_for_every_load):\n"
        '    state = torch.load(directory + "/model_weights_final_ema_copy.pt", map_location="cpu")  # weights\n'
        '    other = torch.load(directory + "/the_optimizer_state_we_kept_around.pt",\n'
        "                       map_location=device_that_we_want_to_use_for_every_load)\n"
        "    return state, other\n"
    )
    fixed = unsafe_fixed(tmp_path, source, "TL201")
    assert fixed == (
        "import torch\n\n\ndef load(directory, device_that_we_want_to_use_for_every_load):\n"
        "    state = torch.load(\n"
        '        directory + "/model_weights_final_ema_copy.pt",\n'
        '        map_location="cpu",\n'
        "        weights_only=True,\n"
        "    )  # weights\n"
        '    other = torch.load(directory + "/the_optimizer_state_we_kept_around.pt",\n'
        "                       map_location=device_that_we_want_to_use_for_every_load,\n"
        "                       weights_only=True)\n"
        "    return state, other\n"
    )
    fix(tmp_path, "--unsafe-fixes", "--select", "TL201")
    assert (tmp_path / "module.py").read_text() == fixed


@pytest.mark.parametrize("path", ["checkpoint", "the_checkpoint_path_here"])
def test_a_keyword_appended_before_a_trailing_subscript_splits_where_ruff_would(tmp_path, path):
    source = (
        "import torch\n\n\ndef load(checkpoint, the_checkpoint_path_here, device):\n"
        "    if device:\n"
        f'        return torch.load({path}, map_location=device)["state_dict"]\n'
        "    return None\n"
    )
    fixed = run_fix_on(tmp_path, source, "[tool.torchlint]\nselect = [\"TL201\"]\nunsafe-fixes = true\n")
    assert "weights_only=True" in fixed and '"state_dict",' not in fixed  # an index never gains a comma
    assert max(len(line) for line in fixed.splitlines()) <= 88
    assert_formatted(tmp_path)


def test_a_fixed_call_in_a_chain_of_calls_is_laid_out_as_ruff_lays_it_out(tmp_path):
    # a chain of two calls or more on a call's result goes in parentheses, one call per line if need be;
    # a single empty call after it (`.cuda()`) keeps the split inside the call before it
    source = (
        "import torchvision.models as models\n\n\ndef build(device):\n"
        "    model = models.resnet50(pretrained=True).to(device).eval()\n"
        "    backbone = models.resnet101(pretrained=True, progress=False).to(device).eval()\n"
        "    head = models.resnet18(pretrained=True, progress=False, num_classes=1000).cuda()\n"
        "    return model, backbone, head\n"
    )
    fixed = run_fix_on(tmp_path, source, "[tool.torchlint]\nselect = [\"TL204\"]\n")
    assert fixed.count("_Weights.IMAGENET1K_V1") == 3
    assert "    model = (\n        models.resnet50(" in fixed
    assert "        .to(device)\n        .eval()\n    )\n" in fixed
    assert "    head = models.resnet18(\n" in fixed and "    ).cuda()\n" in fixed
    assert max(len(line) for line in fixed.splitlines()) <= 88
    assert_formatted(tmp_path)


def test_a_conditional_value_made_too_long_is_parenthesised_as_a_formatter_would(tmp_path):
    """kornia's TinyViT: `x = checkpoint.checkpoint(blk, x) if self.use_checkpoint else blk(x)`, 80 columns;
    TL202's `use_reentrant=False` would make it 101."""
    source = (
        "import torch.utils.checkpoint as checkpoint\nfrom torch import nn\n\n\nclass Layer(nn.Module):\n"
        "    def forward(self, x):\n        for blk in self.blocks:\n"
        "            for _ in range(2):\n"
        "                x = checkpoint.checkpoint(blk, x) if self.use_checkpoint else blk(x)\n"
        "        return x\n"
    )
    fixed = unsafe_fixed(tmp_path, source, "TL202")
    assert "                x = (\n                    checkpoint.checkpoint(blk, x, use_reentrant=False)\n" in fixed
    assert "                    if self.use_checkpoint\n                    else blk(x)\n                )\n" in fixed
    assert max(map(len, fixed.splitlines())) <= 88
    assert_formatted(tmp_path)


def test_an_argument_appended_inside_a_call_that_a_continuation_row_holds_splits_that_call(tmp_path):
    """neuraloperator's `model.load_state_dict(\\n    torch.load(path, map_location="cpu")\\n)`: the keyword goes
    inside the inner call, which is split as a formatter would split it, not left under its opening row."""
    source = (
        "import torch\n\n\ndef load(model, save_pth):\n    model.load_state_dict(\n"
        '        torch.load(save_pth.absolute().as_posix(), map_location="cpu", mmap=False),\n'
        "        strict=True,\n    )\n"
    )
    (tmp_path / "module.py").write_text(source)
    assert ruff("format", "--check", "module.py", cwd=tmp_path).returncode == 0, "the input must be formatted"
    assert unsafe_fixed(tmp_path, source, "TL201") == (
        "import torch\n\n\ndef load(model, save_pth):\n    model.load_state_dict(\n        torch.load(\n"
        '            save_pth.absolute().as_posix(),\n            map_location="cpu",\n            mmap=False,\n'
        "            weights_only=True,\n        ),\n        strict=True,\n    )\n"
    )
    assert_formatted(tmp_path)


def test_a_call_whose_one_argument_is_a_call_still_too_long_splits_both_as_a_formatter_would(tmp_path):
    """neuraloperator's `optimizer.load_state_dict(torch.load(path, map_location=map_location))`, already past
    the line length: with `weights_only=True` both calls split, as ruff format and black split them."""
    source = (
        "import torch\n\n\ndef load(optimizer, optimizer_pth, map_location):\n    if optimizer is not None:\n"
        "        optimizer.load_state_dict(torch.load(optimizer_pth.absolute().as_posix(), "
        "map_location=map_location))\n"
    )
    assert unsafe_fixed(tmp_path, source, "TL201") == (
        "import torch\n\n\ndef load(optimizer, optimizer_pth, map_location):\n    if optimizer is not None:\n"
        "        optimizer.load_state_dict(\n            torch.load(\n"
        "                optimizer_pth.absolute().as_posix(),\n                map_location=map_location,\n"
        "                weights_only=True,\n            )\n        )\n"
    )
    assert_formatted(tmp_path)
