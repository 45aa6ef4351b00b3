"""TL301-TL306 through the real CLI and the real flake8: spellings, selection, fixes that
never leave a stale or missing import, and call shapes the rules cannot reason about."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import FIXTURES, run_torchlint, write_tree
from flake8_support import run_flake8

NUMERICS = FIXTURES / "numerics"
SELECT_TL301 = '[tool.torchlint]\nextend-select = ["TL301", "TL303"]\n'  # both off by default


def findings(root: Path, *extra) -> list:
    result = run_torchlint("check", "--no-cache", "--output-format", "json", *extra, ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr.decode()
    assert result.stderr.decode() == "" or "error" not in result.stderr.decode(), result.stderr.decode()
    return sorted(
        (Path(item["filename"]).name, item["location"]["row"], item["location"]["column"], item["code"], item["fix"] is not None)
        for item in json.loads(result.stdout)
    )


def unsafe_fix(root: Path) -> None:
    result = run_torchlint("check", "--no-cache", "--fix", "--unsafe-fixes", "-q", ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr.decode()


def undefined_or_unused(path: Path) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "F401,F811,F821", str(path)],
        capture_output=True,
        text=True,
    )
    return result.stdout


def test_fixed_fixtures_have_no_stale_or_missing_names(tmp_path):
    work = tmp_path / "numerics"
    shutil.copytree(NUMERICS, work)
    (work / "pyproject.toml").write_text(SELECT_TL301)
    assert undefined_or_unused(work) == ""
    unsafe_fix(work)
    assert undefined_or_unused(work) == ""
    # the import of `log`, read only by the two rewritten calls, went with them
    assert "from torch import log" not in (work / "losses.py").read_text()


ALIASES = """\
import torch as T
from torch import exp as e, log as ln

x = T.rand(3, 4)
a = T.log(1 + x)
b = ln(x + 1)
c = e(x) - 1
d = ln(T.sum(e(x), 1))
"""

ALIASES_FIXED = """\
import torch as T

x = T.rand(3, 4)
a = T.log1p(x)
b = T.log1p(x)
c = T.expm1(x)
d = T.logsumexp(x, 1)
"""


def test_every_import_spelling_is_reported_and_fixed(tmp_path):
    root = write_tree(tmp_path, {"m.py": ALIASES, "pyproject.toml": SELECT_TL301})
    assert findings(root) == [
        ("m.py", 5, 5, "TL301", True),
        ("m.py", 6, 5, "TL301", True),
        ("m.py", 7, 5, "TL302", True),
        ("m.py", 8, 5, "TL303", True),
    ]
    plain = run_torchlint("check", "--no-cache", "--fix", ".", cwd=root)
    assert plain.returncode == 1 and (root / "m.py").read_text() == ALIASES  # unsafe: not applied by --fix
    assert "4 hidden fixes can be enabled with the `--unsafe-fixes` option" in plain.stdout.decode()
    unsafe_fix(root)
    assert (root / "m.py").read_text() == ALIASES_FIXED
    assert undefined_or_unused(root / "m.py") == ""


def test_a_suppressed_use_keeps_its_import(tmp_path):
    source = "from torch import log\n\nx = y = 1\na = log(1 + x)\nb = log(1 + y)  # noqa: TL301\n"
    root = write_tree(tmp_path, {"m.py": source, "pyproject.toml": SELECT_TL301})
    unsafe_fix(root)
    assert (root / "m.py").read_text() == "from torch import log\n\nx = y = 1\na = x.log1p()\nb = log(1 + y)  # noqa: TL301\n"
    assert undefined_or_unused(root / "m.py") == ""


def test_an_import_read_elsewhere_stays(tmp_path):
    source = "from torch import exp\n\na = exp(x) - 1\nb = exp(y)\n"
    root = write_tree(tmp_path, {"m.py": source})
    unsafe_fix(root)
    assert (root / "m.py").read_text() == "from torch import exp\n\na = x.expm1()\nb = exp(y)\n"


def test_zero_grad_fix_below_torch_2_0_keeps_zeros_off_explicitly(tmp_path):
    source = "def step(opt):\n    opt.zero_grad(set_to_none=False)\n"
    root = write_tree(
        tmp_path, {"pyproject.toml": '[tool.torchlint]\ntarget-torch = "1.13"\n', "m.py": source}
    )
    assert findings(root) == [("m.py", 2, 5, "TL304", True)]
    unsafe_fix(root)
    assert (root / "m.py").read_text() == "def step(opt):\n    opt.zero_grad(set_to_none=True)\n"


LOADER = """\
from torch.utils.data import DataLoader as DL


def loaders(ds):
    return DL(ds, batch_size=8), DL(ds, num_workers=4), DL(ds, **kwargs)
"""


def test_dataloader_without_num_workers_is_off_by_default(tmp_path):
    root = write_tree(tmp_path, {"m.py": LOADER})
    assert findings(root) == []
    assert findings(root, "--extend-select", "TL305") == [("m.py", 5, 12, "TL305", False)]
    message = run_torchlint("check", "--no-cache", "--extend-select", "TL305", "--output-format", "concise", ".", cwd=root)
    assert "set `num_workers`" in message.stdout.decode()


def test_pin_memory_rule_sees_copies_in_another_function(tmp_path):
    source = (
        "import torch\n\n\ndef to_gpu(batch):\n    return batch.cuda(non_blocking=True)\n\n\n"
        "def build(ds):\n    return torch.utils.data.DataLoader(ds, num_workers=2, pin_memory=False)\n"
    )
    root = write_tree(tmp_path, {"m.py": source, "other.py": "from torch.utils.data import DataLoader\n\nDataLoader(ds, pin_memory=False)\n"})
    # other.py has no non-blocking copy: not reported there
    assert findings(root) == [("m.py", 9, 59, "TL306", True)]


@pytest.mark.slow
def test_flake8_reports_the_fixture_findings():
    result = run_flake8("--isolated", "--select", "TL3", "losses.py", "train.py", cwd=NUMERICS)
    found = []
    for line in result.stdout.splitlines():
        path, row, column, message = line.split(":", 3)
        found.append((path, int(row), int(column), message.split()[0]))
    assert sorted(found) == [
        ("losses.py", 12, 43, "TL302"),
        ("train.py", 8, 64, "TL306"),
        ("train.py", 17, 9, "TL304"),
    ], result.stdout + result.stderr


@pytest.mark.slow
def test_flake8_sees_default_off_tl305_when_the_project_selects_it(tmp_path):
    root = write_tree(tmp_path, {"pyproject.toml": '[tool.torchlint]\nextend-select = ["TL305"]\n', "m.py": LOADER})
    result = run_flake8("--isolated", "--select", "TL", "m.py", cwd=root)
    assert [line.split(": ")[0] for line in result.stdout.splitlines()] == ["m.py:5:12"], result.stdout + result.stderr
    assert "TL305" in result.stdout


SHAPES = """\
import torch
from torch.utils.data import DataLoader

a = torch.log(*args)
b = torch.log()
c = x.log(1 + y)
d = torch.exp(**kw) - 1
e = torch.log(torch.sum(torch.exp(x), *dims))
f = torch.log(torch.sum(*parts, dim=1))
g = DataLoader(*loader_args, pin_memory=False)
h = (lambda: 1)() + 1
i = torch.log(1 + (yield_ := x))
j = opt.zero_grad(*flags)
k = x.cuda(non_blocking=True)
l = torch.log(torch.exp(x).sum(dim=None))
"""


def test_shapes_the_rules_cannot_reason_about_never_crash(tmp_path):
    root = write_tree(tmp_path, {"m.py": SHAPES, "pyproject.toml": SELECT_TL301})
    result = run_torchlint("check", "--no-cache", "--select", "TL3", "--output-format", "json", ".", cwd=root)
    assert result.returncode == 1 and result.stderr.decode() == "", result.stderr.decode()
    found = sorted((item["location"]["row"], item["code"], item["fix"] is not None) for item in json.loads(result.stdout))
    # the walrus operand is fixable; `dim=None` sums everything (no logsumexp counterpart);
    # the starred DataLoader may pass num_workers, so only TL306 speaks there
    assert found == [(10, "TL306", True), (12, "TL301", True)]
    unsafe_fix(root)
    assert "torch.log1p((yield_ := x))" in (root / "m.py").read_text()


@pytest.mark.parametrize("code", ["TL301", "TL302", "TL303", "TL304", "TL305", "TL306"])
def test_rule_page_and_explain_text(code):
    result = run_torchlint("rule", code)
    assert result.returncode == 0
    text = result.stdout.decode()
    assert "## Fix safety" in text and "## Why is this bad?" in text


SPREAD_OVER_ROWS = '''import torch


class GuidedAttention(torch.nn.Module):
    def mask(self, a, b, width):
        soft = 1.0 - torch.exp(
            -(
                (
                    a
                    - b
                )
                ** 2
            )
            / width
        )
        grown = torch.log(
            1
            + soft
        )
        return soft, grown


values = GuidedAttention().mask(torch.tensor([0.5, 2.0]), torch.tensor([0.25, 1.0]), 3.0)
'''


def test_a_rewritten_call_spread_over_rows_keeps_its_rows_and_its_values(tmp_path):
    write_tree(tmp_path, {"m.py": SPREAD_OVER_ROWS, "pyproject.toml": SELECT_TL301})
    unsafe_fix(tmp_path)
    fixed = (tmp_path / "m.py").read_text()
    assert "        soft = -torch.expm1(\n            -(\n                (\n                    a\n" in fixed
    assert "            / width\n        )\n        grown = torch.log1p(soft)\n" in fixed
    before, after = {}, {}
    exec(compile(SPREAD_OVER_ROWS, "m.py", "exec"), before)
    exec(compile(fixed, "m.py", "exec"), after)
    for old, new in zip(before["values"], after["values"]):
        assert new.allclose(old)
