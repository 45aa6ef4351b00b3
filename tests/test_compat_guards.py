"""The branches of a compatibility guard are not findings of the torch API rules
(TL101-TL103) or TL204; the same code outside a guard, or under a test that picks no
release, still is."""

from __future__ import annotations

import json

import pytest

from cli_support import run_torchlint

GUARDED = {
    # an elif chain: every branch of a version test is the author's choice
    "elif": "import torch\n\nif x:\n    pass\nelif torch.__version__ >= '2.0':\n    f = torch.func.vmap\nelse:\n    from functorch import vmap as f\n",
    # a helper or constant named for a torch version
    "helper": "import torch\nfrom transformers.utils import is_torch_greater_or_equal\n\n"
    "if not is_torch_greater_or_equal('1.13'):\n    factors = torch.lu(a)\n",
    "constant": "import torch\n\nif _TORCH_GREATER_EQUAL_1_13:\n    y = 1\nelse:\n    factors = torch.lu(a)\n",
    "python-version": "import sys\nimport torch\n\nif sys.version_info < (3, 8):\n    factors = torch.lu(a)\n",
    # a feature probe through an alias, in a conditional expression
    "probe-expression": "import torch as T\n\nqr = T.linalg.qr if hasattr(T, 'linalg') else T.qr\n",
    # a missing attribute: the fallback, and a try of assignments only
    "attribute-fallback": "import torch\n\ntry:\n    solve = torch.linalg.solve\nexcept (TypeError, AttributeError):\n"
    "    solve = torch.solve\n",
    "probe-try": "import torch\n\ntry:\n    lu = torch.lu\nexcept AttributeError:\n    lu = None\n",
    "module-not-found": "try:\n    import torch._six as six\nexcept ModuleNotFoundError:\n    six = None\n",
    # a default overridden under a probe, at module level
    "default": "import torch.nn as nn\n\nnorm = nn.utils.weight_norm\nif hasattr(nn.utils.parametrizations, 'weight_norm'):\n"
    "    norm = nn.utils.parametrizations.weight_norm\n",
    # TL204: torchvision's version, by name; its fallback for a release without the weights API
    "torchvision": "import torchvision\nfrom torchvision.models import resnet50\n\nif torchvision.__version__ < '0.13':\n"
    "    m = resnet50(pretrained=True)\n",
    "torchvision-fallback": "from torchvision.models import resnet50\n\ntry:\n    from torchvision.models import ResNet50_Weights\n"
    "    m = resnet50(weights=ResNet50_Weights.DEFAULT)\nexcept ImportError:\n    m = resnet50(pretrained=True)\n",
    "torchvision-expression": "from torchvision.models import resnet50\n\n"
    "m = resnet50(pretrained=True) if TORCHVISION_LT_0_13 else resnet50(weights='DEFAULT')\n",
}

REPORTED = {
    # a test that picks no release: an attribute of the user's own object, a setting
    "own-hasattr": "import torch\n\nif hasattr(model, 'linalg'):\n    factors = torch.lu(a)\n",
    "setting": "import torch.nn as nn\n\nnorm = nn.utils.weight_norm\nif use_spectral:\n    norm = nn.utils.spectral_norm\n",
    # a try that does real work: its body is not a probe (the handler still is a fallback)
    "working-try": "import torch\n\ntry:\n    factors = torch.lu(a)\n    for f in factors:\n        use(f)\n"
    "except AttributeError:\n    factors = None\n",
    # a handler for another error
    "other-error": "import torch\n\ntry:\n    import foo\nexcept ValueError:\n    factors = torch.lu(a)\n",
    # the default is assigned after the guard, not overridden by it
    "after": "import torch.nn as nn\n\nif hasattr(nn.utils.parametrizations, 'weight_norm'):\n    pass\n"
    "norm = nn.utils.weight_norm\n",
    # names with "version" in them that are not a library's release
    "own-version": "import torch\n\nif use_new_version or args.model_version == 2 or do_conversion:\n    factors = torch.lu(a)\n",
    "other-library": "import numpy as np\nimport torch\n\nif np.__version__ > '1.20':\n    factors = torch.lu(a)\n",
    # a probe for something no rule's API is: the usual device pick
    "device-probe": "import torch\n\nif hasattr(torch.backends, 'mps') and torch.backends.mps.is_available():\n"
    "    device = 'mps'\nelse:\n    factors = torch.lu(a)\n",
    # the fallback of another library's import
    "other-fallback": "import torch\n\ntry:\n    from apex import amp\nexcept ImportError:\n    factors = torch.lu(a)\n",
    # a try that calls something is not a probe
    "calling-try": "import torch\n\ntry:\n    factors = torch.lu(a)\n    model.step()\nexcept AttributeError:\n    pass\n",
}


def _codes(tmp_path, text: str) -> list:
    (tmp_path / "example.py").write_text(text)
    result = run_torchlint(
        "check", "--no-cache", "--select", "TL101,TL102,TL103,TL204", "--output-format", "json", ".", cwd=tmp_path
    )
    return [finding["code"] for finding in json.loads(result.stdout)]


@pytest.mark.parametrize("name", sorted(GUARDED))
def test_a_guarded_use_is_not_reported(tmp_path, name):
    assert _codes(tmp_path, GUARDED[name]) == []


@pytest.mark.parametrize("name", sorted(REPORTED))
def test_the_same_use_outside_a_guard_is_reported(tmp_path, name):
    assert _codes(tmp_path, REPORTED[name]) in (["TL102"], ["TL101"])


def test_a_guarded_use_keeps_the_import_that_an_unguarded_fix_would_remove(tmp_path):
    """The fix of the unguarded use rewrites it alone: the guarded use still reads the
    imported name, so the import stays."""
    text = (
        "from torch import cuda\n\nwith cuda.amp.autocast():\n    pass\n"
        "if torch_version_lt_2_4:\n    ctx = cuda.amp.autocast()\n"
    )
    (tmp_path / "example.py").write_text(text)
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\ntarget-torch = "2.4"\n')
    run_torchlint("check", "--no-cache", "--select", "TL102", "--fix", ".", cwd=tmp_path)
    assert (tmp_path / "example.py").read_text() == (
        'import torch\nfrom torch import cuda\n\nwith torch.amp.autocast("cuda"):\n    pass\n'
        "if torch_version_lt_2_4:\n    ctx = cuda.amp.autocast()\n"
    )


def test_a_guarded_call_of_an_imported_name_keeps_the_import_and_its_use(tmp_path):
    """The import is reported, but its fix would rewrite the guarded call too (and break
    the release the guard is for): no fix."""
    text = "from torch import lu\n\nfactors = lu(a)\nif torch_version_lt_1_13:\n    old = lu(b)\n"
    (tmp_path / "example.py").write_text(text)
    result = run_torchlint("check", "--no-cache", "--select", "TL102", "--fix", ".", cwd=tmp_path)
    assert (tmp_path / "example.py").read_text() == text
    assert b"TL102" in result.stdout
