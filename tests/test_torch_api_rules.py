"""TL101/TL102/TL103 through the real CLI and flake8: target-torch decides what is reported
and fixed, fixes are alias-aware, add the imports they need and leave no unused one."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cli_support import run_torchlint, write_tree
from flake8_support import run_flake8

AMP = (
    "from torch.cuda.amp import autocast, custom_fwd\n"
    "from torch import cuda\n"
    "import torch as T\n"
    "\n"
    "scaler = cuda.amp.GradScaler(2.0**10, enabled=True)\n"
    "\n"
    "\n"
    "@custom_fwd\n"
    "def forward(ctx, x):\n"
    "    with autocast(dtype=T.bfloat16):\n"
    "        return x\n"
    "\n"
    "\n"
    "@T.cuda.amp.custom_bwd\n"
    "def backward(ctx, g):\n"
    "    with T.cpu.amp.autocast(enabled=False):\n"
    "        return g\n"
)
AMP_FIXED = (  # every rewrite spelled through `T`; both from-imports gone
    "import torch as T\n"
    "\n"
    'scaler = T.amp.GradScaler("cuda", 2.0**10, enabled=True)\n'
    "\n"
    "\n"
    '@T.amp.custom_fwd(device_type="cuda")\n'
    "def forward(ctx, x):\n"
    '    with T.amp.autocast("cuda", dtype=T.bfloat16):\n'
    "        return x\n"
    "\n"
    "\n"
    '@T.amp.custom_bwd(device_type="cuda")\n'
    "def backward(ctx, g):\n"
    '    with T.amp.autocast("cpu", enabled=False):\n'
    "        return g\n"
)


DOCUMENTATION_ONLY = "[tool.torchlint.deprecated-torch-api]\nreport-documentation-only = true\n"


def project(tmp_path, target, files, options=""):
    config = f'[tool.torchlint]\ntarget-torch = "{target}"\n' if target else "[tool.torchlint]\n"
    return write_tree(tmp_path, {"pyproject.toml": config + options, **files})


def findings(root, *extra):
    result = run_torchlint("check", "--no-cache", "--output-format", "json", *extra, ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr.decode()
    assert not result.stderr.decode().strip(), result.stderr.decode()
    return [(d["code"], d["location"]["row"], d["location"]["column"], d["fix"] is not None) for d in json.loads(result.stdout)]


def fix(root, *extra):
    result = run_torchlint("check", "--no-cache", "--fix", *extra, ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr.decode()
    return result


def pyflakes_problems(path):
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "F401,F811,F821", str(path)],
        capture_output=True, text=True,
    )
    return result.stdout


def test_amp_migrations_at_target_2_4_alias_aware_with_imports_added_and_removed(tmp_path):
    root = project(tmp_path, "2.4", {"amp.py": AMP})
    found = findings(root)
    assert sorted(found) == [
        ("TL102", 1, 28, True), ("TL102", 1, 38, True),  # the from-imports: their uses are rewritten
        ("TL102", 5, 10, True), ("TL102", 14, 2, True), ("TL102", 16, 10, True),
    ]
    fix(root)
    assert (root / "amp.py").read_text() == AMP_FIXED
    assert pyflakes_problems(root / "amp.py") == ""
    assert findings(root) == []


def test_amp_names_are_not_deprecated_before_2_4(tmp_path):
    root = project(tmp_path, "2.3", {"amp.py": AMP})
    assert findings(root) == []


@pytest.mark.parametrize("target", ["1.8", "2.2", "2.13"])
def test_removals_are_reported_at_every_target(tmp_path, target):
    root = project(tmp_path, target, {"m.py": "import torch\n\nx = torch.solve(b, A)\nimport torch._six\n"})
    assert findings(root) == [("TL101", 3, 5, False), ("TL101", 4, 8, False)]


def test_a_deprecation_is_reported_once_deprecated_at_the_target(tmp_path):
    source = "import torch\n\nconv = torch.nn.utils.weight_norm(conv)\nwith torch.backends.cuda.sdp_kernel():\n    pass\n"
    assert findings(project(tmp_path / "a", "2.0", {"m.py": source})) == []
    assert findings(project(tmp_path / "b", "2.1", {"m.py": source})) == [("TL102", 3, 8, True)]
    # sdp_kernel has another signature: reported from 2.3 on, never fixed
    assert findings(project(tmp_path / "c", "2.3", {"m.py": source})) == [
        ("TL102", 3, 8, True), ("TL102", 4, 6, False),
    ]


def test_a_fix_needs_its_replacement_at_the_target(tmp_path):
    source = "from torch.utils.data.dataloader import default_collate\n\nbatch = default_collate(items)\n"
    # the public name arrived in 1.11: reported before, but not rewritten to a name that is missing
    assert findings(project(tmp_path / "old", "1.10", {"m.py": source})) == [("TL103", 1, 41, False)]
    root = project(tmp_path / "new", "1.11", {"m.py": source})
    fix(root)
    assert (root / "m.py").read_text().startswith("from torch.utils.data import default_collate\n")


def test_sigmoid_and_tanh_only_below_2_0(tmp_path):
    source = "import torch.nn.functional as F\n\ny = F.sigmoid(x) + F.tanh(x)\n"
    assert findings(project(tmp_path / "new", None, {"m.py": source})) == []
    root = project(tmp_path / "old", "1.13", {"m.py": source})
    assert [f[:3] for f in findings(root)] == [("TL102", 3, 5), ("TL102", 3, 20)]
    fix(root)
    # `import torch` added, `F` no longer read: removed
    assert (root / "m.py").read_text() == "import torch\n\ny = torch.sigmoid(x) + torch.tanh(x)\n"


def test_arguments_that_cannot_be_reasoned_about_get_no_fix_and_no_crash(tmp_path):
    source = (
        "import torch\n\n"
        "a = torch.cholesky(x, upper=cfg.upper)\n"
        "b = torch.qr(*args)\n"
        "c = torch.range(**kw)\n"
        "d = torch.cholesky()\n"
        "e = torch.range(0, n)\n"
        "f = torch.chain_matmul(*mats)\n"
        "g = torch.lu_solve(b, *lu)\n"
        "h = torch.cuda.amp.autocast(True)\n"
        "i = torch.cuda.amp.custom_fwd\n"
        "j = torch.range(0, 1, 0)\n"
        "k = torch.qr(some=False)\n"
    )
    root = project(tmp_path, "2.4", {"m.py": source})
    found = findings(root)
    assert [row for _, row, _, _ in found] == list(range(3, 14))
    assert not any(fixable for *_, fixable in found)
    before = (root / "m.py").read_text()
    fix(root, "--unsafe-fixes")
    assert (root / "m.py").read_text() == before


def test_an_imported_name_used_as_a_value_keeps_its_import(tmp_path):
    source = "from torch import range\n\nops = [range]\ny = range(0, 9)\n"
    root = project(tmp_path, None, {"m.py": source})
    assert findings(root) == [("TL102", 1, 19, False)]


def test_an_unused_deprecated_import_is_removed(tmp_path):
    source = "import os\nfrom torch.cuda.amp import autocast, GradScaler\n\nprint(os.sep, GradScaler)\n"
    root = project(tmp_path, "2.4", {"m.py": source})
    fix(root)
    text = (root / "m.py").read_text()
    assert text == "import os\nfrom torch.cuda.amp import GradScaler\n\nprint(os.sep, GradScaler)\n"


def test_function_level_import_is_reported_without_a_fix(tmp_path):
    source = "def f(a):\n    from torch import chain_matmul\n    return chain_matmul(a, a)\n"
    assert findings(project(tmp_path, None, {"m.py": source})) == [("TL102", 2, 23, False)]


def test_removed_api_is_an_error_level_github_annotation(tmp_path):
    root = project(tmp_path, None, {"m.py": "import torch\n\nx = torch.symeig(a)\ny = torch.range(0, 9)\n"})
    result = run_torchlint("check", "--no-cache", "--output-format", "github", ".", cwd=root)
    lines = result.stdout.decode().splitlines()
    assert lines[0].startswith("::error title=torchlint (TL101)")
    assert lines[1].startswith("::warning title=torchlint (TL102)")


@pytest.mark.slow
def test_flake8_reports_the_same_findings(tmp_path):
    root = project(tmp_path, None, {"m.py": "import torch as T\nfrom torch._six import inf\n\nx = T.qr(a) + T.solve(b, a)\n"})
    result = run_flake8("--select", "TL1", "m.py", cwd=root)
    reported = sorted(line.split(" ")[0] + " " + line.split(" ")[1] for line in result.stdout.splitlines())
    assert reported == ["m.py:2:24: TL101", "m.py:4:15: TL101", "m.py:4:5: TL102"]
    cli = findings(root)
    assert sorted((c, r, col) for c, r, col, _ in cli) == [("TL101", 2, 24), ("TL101", 4, 15), ("TL102", 4, 5)]


def test_an_import_read_in_a_string_annotation_is_kept(tmp_path):
    source = 'import torch\n\n\ndef f(x: "torch.Tensor"):\n    return torch._six.inf\n'
    root = project(tmp_path, None, {"m.py": source})
    fix(root)
    text = (root / "m.py").read_text()
    assert text == 'import math\nimport torch\n\n\ndef f(x: "torch.Tensor"):\n    return math.inf\n'
    assert pyflakes_problems(root / "m.py") == ""


def test_weight_norm_is_not_migrated_where_the_file_reads_weight_g(tmp_path):
    # lightly: the parametrized module has no `weight_g`; the rewrite would break line 4
    source = (
        "import torch.nn as nn\n\nlayer = nn.utils.weight_norm(nn.Linear(4, 4))\n"
        "layer.weight_g.data.fill_(1)\n"
    )
    root = project(tmp_path, None, {"m.py": source})
    assert findings(root) == [("TL102", 3, 9, False)]
    fix(root, "--unsafe-fixes")
    assert (root / "m.py").read_text() == source


def test_weight_norm_is_not_migrated_beside_remove_weight_norm(tmp_path):
    # remove_weight_norm raises on a module that parametrizations.weight_norm made
    source = (
        "import torch\n\nconv = torch.nn.utils.weight_norm(conv)\n"
        "torch.nn.utils.remove_weight_norm(conv)\n"
    )
    assert findings(project(tmp_path, None, {"m.py": source})) == [("TL102", 3, 8, False)]
    # remove_weight_norm is deprecated in the documentation only
    root = project(tmp_path / "all", None, {"m.py": source}, DOCUMENTATION_ONLY)
    assert findings(root) == [("TL102", 3, 8, False), ("TL102", 4, 1, False)]


GATE_SHAPES = [
    "from torch import (\n    nn,  # a comment with a ) in it\n    qr,\n)\n\ny = qr(a)\n",
    "from torch import \\\n    qr\n\ny = qr(a)\n",
    "import torch as T\n\ny = T.\\\n    qr(a)\n",
    "from functorch import vmap\n",
    "import torch._six as six\n\nx = six.inf\n",
    "from torch.utils.data import _utils\n\nb = _utils.collate.default_collate(x)\n",
]


@pytest.mark.parametrize("source", GATE_SHAPES)
def test_the_text_gate_passes_every_shape_the_rules_report(source):
    from torchlint.core.config import Config
    from torchlint.engine import lint_text
    from torchlint.core.gating import may_fire
    from torchlint.rule_api.registry import find_rule
    from torchlint.analysis.source_view import SourceView

    rules = [find_rule(code) for code in ("TL101", "TL102", "TL103")]
    config = Config()
    reported = {d.code for d in lint_text(source, "m.py", config, rules).diagnostics}
    assert reported
    view = SourceView(source, "m.py")
    assert {rule.code for rule in rules if may_fire(rule, view, config)} >= reported
    # without the gate (a rule that always passes it) the findings are the same
    ungated = [type(r.__name__, (r,), {"sites": classmethod(lambda cls, v, c: (v.tree,))}) for r in rules]
    assert {d.code for d in lint_text(source, "m.py", config, ungated).diagnostics} == reported


DOCUMENTATION_ONLY_SOURCE = (
    "import torch\n"
    "from torch.autograd import Variable\n"
    "\n"
    "n = torch.norm(a, dim=1)\n"
    "u, s, v = torch.svd(a)\n"
    "o = torch.ger(a[0], a[1])\n"
    "up = torch.nn.UpsamplingNearest2d(scale_factor=2)\n"
    "w = Variable(a)\n"
    "q, r = torch.qr(a)\n"
)


def test_documentation_only_deprecations_are_reported_and_fixed_only_with_the_option(tmp_path):
    quiet = project(tmp_path / "default", None, {"m.py": DOCUMENTATION_ONLY_SOURCE})
    assert findings(quiet) == [("TL102", 9, 8, True)]  # torch.qr warns at run time
    fix(quiet, "--unsafe-fixes")
    assert (quiet / "m.py").read_text() == DOCUMENTATION_ONLY_SOURCE.replace("torch.qr(", "torch.linalg.qr(")

    loud = project(tmp_path / "option", None, {"m.py": DOCUMENTATION_ONLY_SOURCE}, DOCUMENTATION_ONLY)
    assert findings(loud) == [
        ("TL102", 2, 28, True), ("TL102", 4, 5, False), ("TL102", 5, 11, False),
        ("TL102", 6, 5, True), ("TL102", 7, 6, True), ("TL102", 9, 8, True),
    ]
    result = run_flake8("--select", "TL102", "m.py", cwd=loud)
    assert [line.split(" ")[0] for line in result.stdout.splitlines()] == [
        "m.py:2:28:", "m.py:4:5:", "m.py:5:11:", "m.py:6:5:", "m.py:7:6:", "m.py:9:8:",
    ]
    fix(loud, "--unsafe-fixes")
    assert (loud / "m.py").read_text() == (
        "import torch\n"
        "\n"
        "n = torch.norm(a, dim=1)\n"
        "u, s, v = torch.svd(a)\n"
        "o = torch.outer(a[0], a[1])\n"
        'up = torch.nn.Upsample(scale_factor=2, mode="nearest")\n'
        "w = a\n"
        "q, r = torch.linalg.qr(a)\n"
    )


def test_a_report_documentation_only_that_is_not_a_boolean_is_a_config_error(tmp_path):
    options = '[tool.torchlint.deprecated-torch-api]\nreport-documentation-only = "yes"\n'
    root = project(tmp_path, None, {"m.py": DOCUMENTATION_ONLY_SOURCE}, options)
    result = run_torchlint("check", "--no-cache", ".", cwd=root)
    assert result.returncode == 2
    error = result.stderr.decode()
    assert error.startswith("error: ") and "report-documentation-only" in error and "Traceback" not in error


# one use of each API TL102 can report, run on the installed torch in a fresh process
# (torch warns some of them once per process); a row without a call here fails the test
WARNING_PROBE = r'''
import json, sys, warnings
import torch, functorch
a = torch.randn(3, 3, dtype=torch.float64)
spd = a @ a.mT + 3 * torch.eye(3, dtype=torch.float64)
b = torch.randn(3, 2, dtype=torch.float64)
image = torch.randn(1, 1, 2, 2)
CALLS = {
    "torch.qr": lambda: torch.qr(a),
    "torch.cholesky": lambda: torch.cholesky(spd),
    "torch.chain_matmul": lambda: torch.chain_matmul(a, a, a),
    "torch.svd": lambda: torch.svd(a),
    "torch.norm": lambda: torch.norm(a, dim=1),
    "torch.lu": lambda: torch.lu(a),
    "torch.lu_solve": lambda: torch.lu_solve(b, *torch.linalg.lu_factor(a)),
    "torch.triangular_solve": lambda: torch.triangular_solve(b, spd.triu(), upper=True),
    "torch.ger": lambda: torch.ger(a[0], a[1]),
    "torch.range": lambda: torch.range(0, 9),
    "torch.testing.assert_allclose": lambda: torch.testing.assert_allclose(a, a),
    "torch.nn.UpsamplingNearest2d": lambda: torch.nn.UpsamplingNearest2d(scale_factor=2)(image),
    "torch.nn.UpsamplingBilinear2d": lambda: torch.nn.UpsamplingBilinear2d(scale_factor=2)(image),
    "torch.nn.utils.weight_norm": lambda: torch.nn.utils.weight_norm(torch.nn.Linear(2, 2)),
    "torch.nn.utils.remove_weight_norm": lambda: torch.nn.utils.remove_weight_norm(LEGACY),
    "torch.backends.cuda.sdp_kernel": lambda: torch.backends.cuda.sdp_kernel(),
    "torch.cuda.amp.autocast": lambda: torch.cuda.amp.autocast(enabled=False),
    "torch.cpu.amp.autocast": lambda: torch.cpu.amp.autocast(),
    "torch.cuda.amp.GradScaler": lambda: torch.cuda.amp.GradScaler(enabled=False),
    "torch.cpu.amp.GradScaler": lambda: torch.cpu.amp.GradScaler(enabled=False),
    "torch.cuda.amp.custom_fwd": lambda: torch.cuda.amp.custom_fwd(lambda ctx, x: x),
    "torch.cuda.amp.custom_bwd": lambda: torch.cuda.amp.custom_bwd(lambda ctx, x: x),
    "torch.autograd.Variable": lambda: torch.autograd.Variable(a),
    "torch.nn.functional.sigmoid": lambda: torch.nn.functional.sigmoid(a),
    "torch.nn.functional.tanh": lambda: torch.nn.functional.tanh(a),
    "functorch.*": lambda: functorch.vmap(torch.sin),  # the module's members
    **{f"functorch.{name}": (lambda name=name: getattr(functorch, name)(torch.sin)) for name in (
        "vmap", "grad", "grad_and_value", "jacrev", "jacfwd", "hessian", "functionalize")},
    "functorch.vjp": lambda: functorch.vjp(torch.sin, a),
    "functorch.jvp": lambda: functorch.jvp(torch.sin, (a,), (a,)),
}
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    LEGACY = torch.nn.utils.weight_norm(torch.nn.Linear(2, 2))
seen = {}
for name in sys.argv[1:]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        CALLS[name]()
    deprecations = [w.category.__name__ for w in caught if "deprecat" in str(w.message).lower()]
    seen[name] = deprecations[0] if deprecations else None
print(json.dumps(seen))
'''


@pytest.mark.slow  # a fresh process: torch warns once per process about some of them
def test_the_runtime_warning_column_matches_the_installed_torch():
    torch = pytest.importorskip("torch")
    pytest.importorskip("functorch")
    from torchlint.core.config import Config
    from torchlint.rule_api.bases.torch_api import at_target, selects_deprecated
    from torchlint.analysis.torch_api_table import TABLE

    installed = Config(target_torch=torch.__version__.split("+")[0])
    rows = [api for api in TABLE if at_target(api.deprecated_in, installed) and not api.removed_in]
    expected = {api.name: api.runtime_warning if selects_deprecated(api, installed) else None for api in rows}
    probe = subprocess.run(
        [sys.executable, "-c", WARNING_PROBE, *expected], capture_output=True, text=True, timeout=300,
    )
    assert probe.returncode == 0, probe.stderr
    assert json.loads(probe.stdout) == expected
    # the probe tells the two kinds apart
    assert {"UserWarning", "FutureWarning", None} <= set(expected.values())


def test_the_text_gate_is_linear_in_comments_inside_an_import(tmp_path):
    # `from . import (  # noqa  # noqa ...` made the gate's regex backtrack exponentially
    # (in a file that passes the substring prefilter: `norm`, not reported by default)
    source = "from . import (  " + "# noqa  " * 40 + "\n    activation,\n    mlp,\n)\n\nn = x.norm()\n"
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\n")
    (tmp_path / "m.py").write_text(source)
    result = subprocess.run(
        [sys.executable, "-m", "torchlint", "check", "--no-cache", "--select", "TL1", "."],
        cwd=tmp_path, capture_output=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr.decode()
